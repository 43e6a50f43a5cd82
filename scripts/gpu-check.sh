#!/usr/bin/env bash
# One command that turns a few minutes on a GPU machine into verified figures:
#   1. build opbench with -Dcuda=enabled (build-gpu/, next to build/);
#   2. run the cuda test suite (meson test --suite cuda);
#   3. run suites/quick.toml on naive and cuda, and suites/attention.toml and
#      suites/gemm.toml on cuda in full and on naive filtered to the sizes it
#      finishes in seconds (naive is the reference and "level 0", not the
#      subject); every output is verified before it is timed;
#   4. write into OUTDIR: the result sets (sets/, one per suite, merged from
#      the runs in sets/parts/), `opbench compare --by backend` in Markdown
#      (levels.md), a report (report.html), every log
#      (logs/), and summary.md: the device, the commit, the test counts and
#      each set's passed / failed / skipped / starved counts.
# Sized for 10 minutes on one H100 (each step has its own time limit).
#
# usage: scripts/gpu-check.sh [--force] [--allow-no-gpu] [--cuda-only] [--prebuilt BUILDDIR] OUTDIR
#   --force          OUTDIR may exist and hold files (they are replaced)
#   --cuda-only      attention and gemm on cuda alone, without the naive
#                    runs that give their level tables (about a minute less
#                    of a lent GPU's time; quick still runs both)
#   --allow-no-gpu   without a GPU, run everything anyway (the cuda cases are
#                    then skipped entries and the cuda GPU test is skipped);
#                    for checking this script itself. It still exits 3.
#   --prebuilt BUILDDIR  use a build directory made elsewhere (meson setup
#                    -Dcuda=enabled, then meson compile runnable
#                    cuda_planning_test cuda_rope_quant_test
#                    cuda_roof_plan_test cuda_plugin_load_test cuda_gpu_test)
#                    and skip step 1: install-deps.sh, meson setup and meson
#                    compile are not run, for a GPU machine with no package
#                    manager. LD_LIBRARY_PATH must find its libraries, and
#                    `meson` must be the version that set it up (meson test
#                    reads it). summary.md names the build.
# Exit: 0 every cuda test passed and no entry failed; 1 a test or an entry
# failed; 2 bad usage; 3 no GPU (or a step ran out of its time).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '15,32p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
force=0 allow_no_gpu=0 cuda_only=0 out="" prebuilt=""
while [ $# -gt 0 ]; do
  arg=$1
  shift
  case "$arg" in
    --force) force=1 ;;
    --allow-no-gpu) allow_no_gpu=1 ;;
    --cuda-only) cuda_only=1 ;;
    --prebuilt)
      [ $# -gt 0 ] || { echo "gpu-check: --prebuilt needs a BUILDDIR" >&2; usage; }
      prebuilt=$1
      shift ;;
    --prebuilt=*) prebuilt=${arg#--prebuilt=} ;;
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gpu-check: unknown option '$arg'" >&2; usage ;;
    *) [ -z "$out" ] || { echo "gpu-check: one OUTDIR only ('$out', then '$arg')" >&2; usage; }
       out=$arg ;;
  esac
done
[ -n "$out" ] || { echo "gpu-check: OUTDIR is missing" >&2; usage; }
# A prebuilt directory is checked before anything runs: a wrong path should
# not cost the minutes of a GPU machine.
if [ -n "$prebuilt" ]; then
  prebuilt=${prebuilt%/}
  for f in "$prebuilt/build.ninja" "$prebuilt/harness/opbench"; do
    [ -e "$f" ] || { echo "gpu-check: --prebuilt $prebuilt: $f is missing (not a built opbench build directory)" >&2; exit 2; }
  done
  grep -q "cuda" "$prebuilt/meson-info/intro-buildoptions.json" 2>/dev/null &&
    python3 -c 'import json,sys; o={x["name"]:x["value"] for x in json.load(open(sys.argv[1]))}; sys.exit(o.get("cuda")!="enabled")' \
      "$prebuilt/meson-info/intro-buildoptions.json" ||
    { echo "gpu-check: --prebuilt $prebuilt was not set up with -Dcuda=enabled" >&2; exit 2; }
fi
if [ -e "$out" ] && { [ ! -d "$out" ] || [ -n "$(ls -A "$out")" ]; } && [ $force -eq 0 ]; then
  echo "gpu-check: $out exists and is not an empty directory (--force replaces what it holds)" >&2
  exit 2
fi

started=$SECONDS
step() { echo "=== gpu-check: $* ($((SECONDS - started)) s)"; }

# The device, before anything is built: without one there is nothing to check.
gpu=""
if command -v nvidia-smi > /dev/null 2>&1; then
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1 || true)
fi
if [ -z "$gpu" ]; then
  why="nvidia-smi is not installed"
  command -v nvidia-smi > /dev/null 2>&1 && why="nvidia-smi finds no GPU ($(nvidia-smi -L 2>&1 | head -n 1))"
  echo "gpu-check: no GPU: $why." >&2
  if [ $allow_no_gpu -eq 0 ]; then
    echo "gpu-check: run it on a machine with an NVIDIA GPU and its driver (--allow-no-gpu runs the rest anyway)" >&2
    exit 3
  fi
  gpu="none ($why)"
fi

mkdir -p "$out/sets/parts" "$out/logs"
rm -f "$out"/sets/*.json "$out"/sets/parts/*.json "$out"/logs/*.log "$out/levels.md" "$out/report.html"
status=0

if [ -n "$prebuilt" ]; then
  builddir=$prebuilt
  built="prebuilt $builddir: install-deps.sh and meson compile not run here"
  step "$built"
  # A build directory copied without its logs: meson test writes its log there.
  mkdir -p "$builddir/meson-logs"
else
  builddir=build-gpu
  built="build-gpu, built here (install-deps.sh, meson setup -Dcuda=enabled, meson compile)"
  step "install what is missing, build with CUDA"
  scripts/install-deps.sh > "$out/logs/install-deps.log" 2>&1 || { cat "$out/logs/install-deps.log"; exit 3; }
  if [ -f build-gpu/build.ninja ]; then
    meson configure build-gpu -Dcuda=enabled > "$out/logs/setup.log" 2>&1
  else
    meson setup build-gpu -Dcuda=enabled > "$out/logs/setup.log" 2>&1 || { cat "$out/logs/setup.log"; exit 3; }
  fi
  # What the runs and the cuda tests need, not the whole test suite.
  timeout 300 meson compile -C build-gpu runnable cuda_planning_test cuda_rope_quant_test \
    cuda_roof_plan_test cuda_plugin_load_test cuda_gpu_test cuda-direct-bench \
    > "$out/logs/build.log" 2>&1 || { tail -n 40 "$out/logs/build.log"; echo "gpu-check: the build failed" >&2; exit 3; }
fi
opbench=$builddir/harness/opbench
"$opbench" list > "$out/logs/list.log" 2>&1 || true

step "cuda tests"
set +e
timeout 300 meson test -C "$builddir" --no-rebuild --suite cuda --print-errorlogs > "$out/logs/cuda-tests.log" 2>&1
tests_rc=$?
set -e
grep -E "^ *[0-9]+/[0-9]+ " "$out/logs/cuda-tests.log" || true
[ $tests_rc -eq 0 ] || status=1

# run NAME SUITE LIMIT_S opbench-run-options...: one result set, its own time limit.
run() {
  local name=$1 suite=$2 limit=$3
  shift 3
  step "run $name"
  set +e
  timeout "$limit" "$opbench" run "$suite" --no-progress --out "$out/sets/parts/$name.json" "$@" > "$out/logs/$name.log" 2>&1
  local rc=$?
  set -e
  tail -n 3 "$out/logs/$name.log"
  case $rc in
    0) ;;
    1) status=1 ;;
    124) echo "gpu-check: $name ran out of its ${limit} s" >&2; [ $status -ne 0 ] || status=3 ;;
    *) echo "gpu-check: $name exited $rc (logs/$name.log)" >&2; [ $status -ne 0 ] || status=3 ;;
  esac
}
# naive: short sampling and only the sizes it runs in well under a second per
# call. cuda: every case, max_time trimmed to 0.5 s a repetition so the suites'
# 76 cases fit their limits even where a noise target is never met.
naive_sampling=(--warmup 1 --min-samples 3 --min-time 0.05 --max-time 1 --repetitions 2)
cuda_sampling=(--max-time 0.5)
run quick suites/quick.toml 120 --backends naive,cuda
run attention-cuda suites/attention.toml 150 --backends cuda "${cuda_sampling[@]}"
# Names show S:<n> when seq_q = seq_kv, Sq:1 for the decode cases.
[ $cuda_only -eq 1 ] || run attention-naive suites/attention.toml 90 --backends naive "${naive_sampling[@]}" \
  --benchmark_filter='/(S:128|Sq:1)/'
run gemm-cuda suites/gemm.toml 120 --backends cuda "${cuda_sampling[@]}"
[ $cuda_only -eq 1 ] || run gemm-naive suites/gemm.toml 60 --backends naive "${naive_sampling[@]}" --benchmark_filter='/M:(1|16|512)/'

step "merge, compare --by backend, report, summary"
# One set per suite: the naive and cuda parts merged (opbench merge checks
# that they are parts of the same suite and do not overlap).
sets=()
for suite_name in quick attention gemm; do
  parts=()
  for f in "$out/sets/parts/$suite_name"*.json; do [ -s "$f" ] && parts+=("$f"); done
  [ ${#parts[@]} -gt 0 ] || continue
  if [ ${#parts[@]} -eq 1 ]; then
    cp "${parts[0]}" "$out/sets/$suite_name.json"
  else
    "$opbench" merge "${parts[@]}" -o "$out/sets/$suite_name.json" > "$out/logs/merge-$suite_name.log" 2>&1 ||
      { cat "$out/logs/merge-$suite_name.log"; status=1; continue; }
  fi
  sets+=("$out/sets/$suite_name.json")
  { echo "## $suite_name"; echo
    "$opbench" compare --by backend --baseline naive --format markdown --accept-unmet-noise "$out/sets/$suite_name.json" \
      2> "$out/logs/compare-$suite_name.log" || cat "$out/logs/compare-$suite_name.log"
    echo; } >> "$out/levels.md"
done
if [ ${#sets[@]} -gt 0 ]; then
  "$opbench" report "${sets[@]}" --title "gpu-check: $gpu" -o "$out/report.html" \
    > "$out/logs/report.log" 2>&1 || cat "$out/logs/report.log"
fi

{
  echo "# gpu-check"
  echo
  echo "- device: $gpu"
  echo "- opbench: $("$opbench" --version 2>/dev/null || echo unknown)"
  echo "- build: $built"
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) CPUs"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), took $((SECONDS - started)) s"
  echo
  echo "## cuda tests (meson test --suite cuda)"
  echo
  grep -E "^(Ok|Fail|Skipped|Timeout|Expected Fail|Unexpected Pass): " "$out/logs/cuda-tests.log" | sed 's/^/- /' || echo "- no test summary (logs/cuda-tests.log)"
  grep -E "^ *[0-9]+/[0-9]+ .* (FAIL|SKIP|TIMEOUT) " "$out/logs/cuda-tests.log" | sed 's/^ */- /' || true
  echo
  echo "## result sets"
  echo
  python3 - "$out/sets" <<'PY'
import collections, glob, json, os, sys
# Every status a set can hold: starved (ran and verified, but the machine
# was too busy to time it) is not a pass, and one not named here is "other".
shown = ("passed", "failed", "skipped", "starved")
print("| set | backend | " + " | ".join(shown) + " | other |")
print("| --- | --- |" + " ---: |" * (len(shown) + 1))
reasons = collections.Counter()
starved = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):  # the merged sets
    try:
        entries = json.load(open(path))["benchmarks"]
    except (OSError, ValueError, KeyError) as e:
        print(f"| {os.path.basename(path)} | unreadable: {e} | | | |")
        continue
    counts = collections.defaultdict(collections.Counter)
    for e in entries:
        # One entry per case x backend: the first repetition stands for it.
        if e.get("run_type") == "aggregate" or e.get("repetition_index", 0) != 0:
            continue
        counts[e.get("backend", "?")][e.get("status", "?")] += 1
        if e.get("status") == "starved":  # each its own figures: listed by name
            starved.append(f"{e.get('name', '?')}: {e.get('reason', '')[:110]}")
        elif e.get("status") != "passed":
            reasons[(e.get("backend"), e.get("status"), e.get("reason", "")[:160])] += 1
    for backend, c in sorted(counts.items()):
        other = sum(n for status, n in c.items() if status not in shown)
        print(f"| {os.path.basename(path)[:-5]} | {backend} | " + " | ".join(str(c[s]) for s in shown) + f" | {other} |")
if reasons:
    print("\nNot passed, by reason:\n")
    for (backend, status, reason), n in reasons.most_common():
        print(f"- {n} x {backend} {status}: {reason}")
if starved:
    print(f"\nStarved ({len(starved)}; the first 20):\n")
    for line in starved[:20]:
        print(f"- {line}")
PY
  echo
  echo "Levels (naive -> cuda): levels.md; charts: report.html; logs: logs/."
} > "$out/summary.md"
cat "$out/summary.md"

case "$gpu" in none*) echo "gpu-check: no GPU: nothing CUDA was measured" >&2; exit 3 ;; esac
exit $status
