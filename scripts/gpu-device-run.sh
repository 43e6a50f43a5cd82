#!/usr/bin/env bash
# Device-side driver: unpack a scripts/gpu-bundle.sh tarball on a GPU machine
# with no package manager and run scripts/gpu-check.sh --prebuilt there.
#
# usage: bash gpu-device-run.sh OUTDIR [gpu-check options, e.g. --allow-no-gpu]
#   The tarball is gpu-bundle.tar.xz beside this script, or $GPU_BUNDLE.
#   OUTDIR receives (at most 8 files, for the device tool's $OUT):
#     host.txt      OS, CPU, nvidia-smi, which CUDA/cuDNN libraries load
#     machine.txt   `opbench machine` (the host's figures and, on a GPU, the
#                   device roofs it measures; cached for the steps after it)
#     run.log       each step's console tail and exit status
#     summary.md, levels.md   gpu-check's; direct.md   cuda-direct-compare's
#     all.tgz       everything the steps wrote (sets, logs, report), packed
#                   again after each step, so a call killed at its time
#                   limit still returns every step that finished
#   Environment: STEPS (default check): the steps, comma-separated, run in
#   the order given:
#     check    scripts/gpu-check.sh (its options are this script's after
#              OUTDIR), bounded by GC_LIMIT (s, default 430);
#     direct   scripts/cuda-direct-compare.sh (opbench's cuda backend beside
#              the direct cuBLASLt/cuDNN program; options from DIRECT_ARGS,
#              e.g. "--cache both"), bounded by DIRECT_LIMIT (s, default 420);
#     decoder  the Llama-3-8B-shaped decoders of suites/models/
#              model-decoders.toml on cuda (each level: f32, bf16, s8 and
#              f8e4m3; three took 80 s on an H200), bounded by
#              DECODER_LIMIT (s, default 180);
#     timeline the kernel timeline (issue 42): composed f32 attention at
#              seq 128 and 1024 (d64, causal) and bf16 composed and fused at
#              1024 (d128) on cuda with --profile --trace; the set, the trace
#              and `opbench analyze` under out/timeline/ (about 30 s),
#              bounded by TIMELINE_LIMIT (s, default 90);
#     warm     the launch modes (issue 41 item 3): suites/quick.toml and
#              suites/gemm.toml on cuda, each run default (single), with
#              --launch batch and with --launch graph (options from
#              WARM_ARGS, default "--repetitions 3"); the sets and
#              warm.md (device time per call of each mode, side by side)
#              under out/warm/, bounded by WARM_LIMIT (s, default 480, all
#              six runs together). Not yet run on a GPU.
#     ab       `opbench ab` on the GPU (issue 41 item 6): the cuda plugin
#              against itself (A/A) and against test-cuda-slower (each
#              matmul 5% slower on the device; the bundle carries it when
#              it was built), AB_RUNS times each (default 5), on the cases
#              AB_FILTER picks (default gemm's 2048^3 f32 and bf16); each
#              run's verdicts and the device's clock range in run.log, the
#              sets under out/ab/, bounded by AB_LIMIT (s, default 300).
#              Not yet run on a GPU.
#   WORK (default /tmp/opb-gpu) is where the tarball is unpacked.
# The build directory holds absolute paths (the checkout it was built in,
# x/ROOT): that path is made a symlink to the unpacked tree. Where it exists
# as a real directory (the machine that built it), the run is refused unless
# it is already that tree.
# Exit: gpu-check's (0 all passed, 1 a test or entry failed, 2 bad usage, 3
# no GPU), 9 when the bundle cannot be unpacked or its path cannot be
# recreated.
set -u
if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: gpu-device-run.sh OUTDIR [gpu-check options, e.g. --allow-no-gpu]" >&2
  exit 2
fi
outd=$1
shift
mkdir -p "$outd" && outd=$(cd "$outd" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
bundle=${GPU_BUNDLE:-$here/gpu-bundle.tar.xz}
work=${WORK:-/tmp/opb-gpu}
t0=$SECONDS
log() { echo "== gpu-device-run: $* ($((SECONDS - t0)) s)"; }

rm -rf "$work" && mkdir -p "$work" && tar -xJf "$bundle" -C "$work" ||
  { echo "gpu-device-run: cannot unpack $bundle into $work" >&2; exit 9; }
root=$(cat "$work/x/ROOT")
if [ -L "$root" ] || [ ! -e "$root" ]; then
  mkdir -p "$(dirname "$root")" && ln -sfn "$work/x/tree" "$root"
elif [ "$(cd "$root" && pwd -P)" != "$(cd "$work/x/tree" && pwd -P)" ]; then
  echo "gpu-device-run: $root exists and is not the unpacked tree; the build needs that path" >&2
  exit 9
fi
log "unpacked into $work, $root -> $work/x/tree"

# Carried libraries first; then CUDA and cuDNN from the machine: the
# toolkit's and the system's (ld.so.conf) before the PyTorch venv's pip
# wheels (nvidia/*/lib), so a system cuDNN wins as in the first run.
export PATH=$work/x/bin:$PATH
cuda_dirs=""
for d in /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu \
         /opt/torch/.venv/lib/python3.12/site-packages/nvidia/*/lib; do
  [ -d "$d" ] && cuda_dirs+="$d:"
done
export LD_LIBRARY_PATH=$work/x/libs:${cuda_dirs}${LD_LIBRARY_PATH:-}
cd "$root" || exit 9
opbench=build-gpu/harness/opbench

{ log "host facts"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  uname -a; head -n 2 /etc/os-release 2>/dev/null
  echo "python3: $(command -v python3) $(python3 --version 2>&1); meson: $(meson --version 2>&1)"
  echo "nproc: $(nproc)"; lscpu | grep -E '^(Model name|Socket|Core|Thread|CPU\(s\)|Flags)' | cut -c1-300
  echo "== nvidia-smi"; nvidia-smi 2>&1 | head -n 20
  echo "== ldd (CUDA, cuDNN and anything not found)"
  for b in $opbench build-gpu/backends/*/opbench-backend-*.so build-gpu/tests/backends/cuda/cuda_gpu_test; do
    echo "-- $b"; ldd "$b" | grep -E 'cud|cublas|nvrtc|not found'
  done
  echo "== CUPTI and NVML (the kernel timeline, clocks and power)"
  ls -d /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* 2>&1 | head -n 4
  ldconfig -p | grep -E 'libcupti|libnvidia-ml' | head -n 4
  echo "== nvidia-smi clocks"; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE 2>&1 | grep -v '^$' | head -n 60
  echo "== opbench --version"; $opbench --version
  echo "== opbench list (at 100 columns)"; COLUMNS=100 $opbench list
} > "$outd/host.txt" 2>&1

log "opbench machine"
export OPBENCH_CACHE_DIR=$work/cache
mkdir -p "$OPBENCH_CACHE_DIR"
{ timeout 120 $opbench machine; echo "rc=$?"; } > "$outd/machine.txt" 2>&1

rc=0
work_out=$work/out
mkdir -p "$work_out"
# pack: everything so far into OUTDIR/all.tgz, written aside and renamed.
pack() {
  tar -czf "$outd/all.tgz.new" -C "$work" out 2>/dev/null && mv "$outd/all.tgz.new" "$outd/all.tgz"
}
# step_done NAME RC: its status into run.log; a failed step sets the exit.
step_done() {
  echo "$1 rc=$2 at $((SECONDS - t0)) s" | tee -a "$outd/run.log"
  [ "$2" -eq 0 ] || [ $rc -ne 0 ] || rc=$2
  pack
}

run_check() {
  local gc=$work_out/gpu-check
  timeout "${GC_LIMIT:-430}" scripts/gpu-check.sh "$@" --prebuilt build-gpu "$gc" > "$work_out/gpu-check.log" 2>&1
  local grc=$?
  tail -n 30 "$work_out/gpu-check.log" >> "$outd/run.log"
  # If meson test itself could not run (Meson on this Python, say), the cuda
  # tests' own binaries still say whether the backend works.
  if ! grep -q '^Ok:' "$gc/logs/cuda-tests.log" 2>/dev/null; then
    mkdir -p "$gc/logs"
    local plugin=$root/build-gpu/backends/cuda/opbench-backend-cuda.so t
    for t in cuda_planning_test cuda_rope_quant_test cuda_roof_plan_test cuda_plugin_load_test cuda_gpu_test; do
      local args=()
      case $t in cuda_planning_test | cuda_rope_quant_test | cuda_roof_plan_test) ;; *) args=("$plugin") ;; esac # host-only tests take no plugin
      timeout 300 build-gpu/tests/backends/cuda/$t "${args[@]}" > "$gc/logs/direct-$t.log" 2>&1
      echo "meson test did not run: direct $t rc=$? (logs/direct-$t.log)" | tee -a "$outd/run.log"
    done
  fi
  cp "$gc/summary.md" "$gc/levels.md" "$outd/" 2>/dev/null
  return $grc
}

run_direct() {
  local dc=$work_out/direct
  # shellcheck disable=SC2086 # DIRECT_ARGS is a list of options
  timeout "${DIRECT_LIMIT:-420}" scripts/cuda-direct-compare.sh --prebuilt build-gpu ${DIRECT_ARGS:-} "$dc" \
    > "$work_out/direct.log" 2>&1
  local drc=$?
  tail -n 20 "$work_out/direct.log" >> "$outd/run.log"
  cp "$dc/compare.md" "$outd/direct.md" 2>/dev/null
  return $drc
}

# The Llama-3-8B-shaped decoders (2 layers of the model's shapes), every
# level of the suite, on cuda: prefill and decode tokens/s, checked layer by
# layer against naive.
run_decoder() {
  local d=$work_out/decoder
  mkdir -p "$d"
  timeout "${DECODER_LIMIT:-180}" "$opbench" run suites/models/model-decoders.toml --backends cuda \
    --benchmark_filter='llama-3-8b' --no-progress --out "$d/llama-3-8b-decoders.json" > "$d/run.log" 2>&1
  local drc=$?
  tail -n 25 "$d/run.log" >> "$outd/run.log"
  return $drc
}

# The kernel timeline (CUPTI) of composed and fused attention: kernels
# per call, busy share and gaps in the set, the GPU track in the trace,
# analyze's gap-bound verdict; a device that refuses profiling says why in
# the console and the set's kernel_timeline, and the run still passes.
run_timeline() {
  local d=$work_out/timeline
  mkdir -p "$d"
  timeout "${TIMELINE_LIMIT:-90}" "$opbench" run suites/attention.toml --backends cuda \
    --benchmark_filter='attention/B:1/H:16/S:(128|1024)/D:64/causal:1/variant:composed/|H:32/S:1024/D:128/causal:1/.*dt:bf16' \
    --profile \
    --trace "$d/attention.trace.json" --no-progress --out "$d/attention-timeline.json" > "$d/run.log" 2>&1
  local trc=$?
  "$opbench" analyze "$d/attention-timeline.json" > "$d/analyze.txt" 2>&1
  grep -A4 -E '^Kernel timeline|no kernel timeline' "$d/run.log" >> "$outd/run.log"
  grep -E 'timeline:|gap-bound' "$d/analyze.txt" | head -n 8 >> "$outd/run.log"
  ls -l "$d" >> "$outd/run.log"
  return $trc
}

# The launch modes side by side: each suite single (the default), batch and
# graph; warm.md gives each entry's device time per call in the three (the
# names differ by their /launch: part, so `compare` would not pair them).
run_warm() {
  local d=$work_out/warm
  mkdir -p "$d"
  # shellcheck disable=SC2086 # WARM_ARGS is a list of options
  timeout "${WARM_LIMIT:-480}" bash -c '
    for suite in quick gemm; do
      for mode in single batch graph; do
        "$1" run suites/$suite.toml --backends cuda --launch $mode --no-progress $3 \
          --out "$2/$suite-$mode.json" > "$2/$suite-$mode.log" 2>&1
        echo "warm: $suite $mode rc=$?"
      done
    done' warm "$opbench" "$d" "${WARM_ARGS:---repetitions 3}" >> "$outd/run.log" 2>&1
  local wrc=$?
  grep -h "launch graph measured as batch" "$d"/*.log | sort -u >> "$outd/run.log"
  if command -v python3 > /dev/null; then
    python3 - "$d" > "$d/warm.md" <<'PY'
import glob, json, os, re, statistics, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*-*.json"))):
    suite, mode = os.path.basename(path)[:-5].rsplit("-", 1)
    with open(path) as f:
        doc = json.load(f)
    for e in doc["benchmarks"]:
        t = (e.get("stats") or {}).get("device_time_per_call")
        if e.get("run_type") != "iteration" or t is None:
            continue
        name = re.sub(r"/launch:\w+", "", e["run_name"])
        rows.setdefault((suite, name), {}).setdefault(mode, []).append(t)
print("| suite | entry | single us | batch us | graph us | batch/single | graph/single |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for (suite, name), m in sorted(rows.items()):
    med = {k: statistics.median(v) * 1e6 for k, v in m.items()}
    ratio = lambda k: f"{med[k] / med['single']:.3f}" if k in med and "single" in med else "-"
    cell = lambda k: f"{med[k]:.2f}" if k in med else "-"
    print(f"| {suite} | {name} | {cell('single')} | {cell('batch')} | {cell('graph')} | {ratio('batch')} | {ratio('graph')} |")
PY
    cp "$d/warm.md" "$outd/warm.md" 2>/dev/null
  fi
  return $wrc
}

# ab on the GPU: A/A and A/B (a build whose matmuls are 5% slower), in
# turn, AB_RUNS times; a line per run with its verdict counts.
run_ab() {
  local d=$work_out/ab
  local plugin=$root/build-gpu/backends/cuda/opbench-backend-cuda.so
  local slower=$root/build-gpu/backends/cuda/test-cuda-slower.so
  mkdir -p "$d"
  if [ ! -f "$slower" ]; then
    echo "ab: $slower is not in the bundle: compile test-cuda-slower before scripts/gpu-bundle.sh" |
      tee -a "$outd/run.log"
    return 2
  fi
  timeout "${AB_LIMIT:-300}" bash -c '
    opbench=$1 plugin=$2 slower=$3 runs=$4 filter=$5 d=$6
    for i in $(seq 1 "$runs"); do
      for pair in same slower; do
        new=$plugin
        [ "$pair" = slower ] && new=$slower
        "$opbench" ab suites/gemm.toml --plugin "cuda@base=$plugin" --plugin "cuda@new=$new" \
          --benchmark_filter="$filter" --no-progress --out "$d/$pair-$i.json" > "$d/$pair-$i.log" 2>&1
        echo "ab: $pair run $i rc=$? $(grep -o "[0-9]* same, [0-9]* slower, [0-9]* faster, [0-9]* noisy" \
          "$d/$pair-$i.log")"
        grep -o "the device.s SM clock.*" "$d/$pair-$i.log"
      done
    done' ab "$opbench" "$plugin" "$slower" "${AB_RUNS:-5}" \
    "${AB_FILTER:-M:2048/N:2048/K:2048/variant:default/dt:(f32|bf16)/}" "$d" >> "$outd/run.log" 2>&1
}

IFS=, read -r -a steps <<< "${STEPS:-check}"
for s in "${steps[@]}"; do
  log "step $s" | tee -a "$outd/run.log"
  case $s in
    check) run_check "$@"; step_done check $? ;;
    direct) run_direct; step_done direct $? ;;
    decoder) run_decoder; step_done decoder $? ;;
    timeline) run_timeline; step_done timeline $? ;;
    warm) run_warm; step_done warm $? ;;
    ab) run_ab; step_done ab $? ;;
    *) echo "gpu-device-run: unknown step '$s' (check, direct, decoder, timeline, warm, ab)" | tee -a "$outd/run.log"; rc=2 ;;
  esac
done
log "done, STEPS=${STEPS:-check}, rc=$rc" | tee -a "$outd/run.log"
exit $rc
