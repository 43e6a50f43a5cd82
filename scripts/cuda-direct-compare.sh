#!/usr/bin/env bash
# opbench's cuda backend beside the direct cuBLASLt / cuDNN program
# (backends/cuda/bench, issue 41 item 5), on the same shapes with the same
# sampling, in one go on a GPU machine:
#   1. cuda-direct-bench (cold: canonical and opbench-order stop events);
#   2. opbench run backends/cuda/bench/direct.toml --backends cuda;
#   (3. and 4. the same warm, with --cache both or warm, and the direct
#   program once more with 20 back-to-back calls per sample: the figure to
#   set beside public warm ones;)
#   5. compare_direct.py: opbench/direct per shape, in Markdown.
# OUTDIR receives direct-<cache>.json (direct-warm-b2b.json), opbench-<cache>.json,
# compare.md and logs/. Estimated 3-4 minutes per cache state on one H100/H200 (not yet timed).
#
# usage: scripts/cuda-direct-compare.sh [options] OUTDIR
#   --prebuilt BUILDDIR  a build set up with -Dcuda=enabled and compiled with
#                  `meson compile -C BUILDDIR runnable cuda-direct-bench`
#                  (default: build-gpu, set up and compiled here if needed)
#   --cache cold|warm|both   L2 state before each sample (default cold)
#   --min-time S, --max-time S, --repetitions N, --warmup N
#                  sampling, passed to both sides (default 0.1, 0.2, 3, 2)
#   --filter REGEX the direct program's cases whose names match; opbench
#                  runs its whole suite (rows without a partner are listed)
#   --force        OUTDIR may exist and hold files (they are replaced)
#   --allow-no-gpu run anyway without a GPU (opbench's entries are then
#                  skipped, the direct program says why it cannot run); exits 3
# Exit: 0 compared; 1 a side failed or nothing matched; 2 bad usage; 3 no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '14,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
prebuilt="" cache=cold out="" force=0 allow_no_gpu=0 filter=""
min_time=0.1 max_time=0.2 reps=3 warmup=2
while [ $# -gt 0 ]; do
  arg=$1
  shift
  need() { [ $# -gt 0 ] || { echo "cuda-direct-compare: $arg needs a value" >&2; usage; }; }
  case "$arg" in
    --prebuilt) need "$@"; prebuilt=${1%/}; shift ;;
    --cache) need "$@"; cache=$1; shift ;;
    --min-time) need "$@"; min_time=$1; shift ;;
    --max-time) need "$@"; max_time=$1; shift ;;
    --repetitions) need "$@"; reps=$1; shift ;;
    --warmup) need "$@"; warmup=$1; shift ;;
    --filter) need "$@"; filter=$1; shift ;;
    --force) force=1 ;;
    --allow-no-gpu) allow_no_gpu=1 ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cuda-direct-compare: unknown option '$arg'" >&2; usage ;;
    *) [ -z "$out" ] || { echo "cuda-direct-compare: one OUTDIR only" >&2; usage; }; out=$arg ;;
  esac
done
[ -n "$out" ] || { echo "cuda-direct-compare: OUTDIR is missing" >&2; usage; }
case $cache in
  cold) caches=(cold) ;; warm) caches=(warm) ;; both) caches=(cold warm) ;;
  *) echo "cuda-direct-compare: --cache '$cache' is not cold, warm or both" >&2; usage ;;
esac
if [ -e "$out" ] && { [ ! -d "$out" ] || [ -n "$(ls -A "$out")" ]; } && [ $force -eq 0 ]; then
  echo "cuda-direct-compare: $out exists and is not an empty directory (--force replaces what it holds)" >&2
  exit 2
fi

builddir=${prebuilt:-build-gpu}
opbench=$builddir/harness/opbench
direct=$builddir/backends/cuda/bench/cuda-direct-bench
if [ -z "$prebuilt" ]; then
  if [ ! -f build-gpu/build.ninja ]; then
    meson setup build-gpu -Dcuda=enabled > /dev/null || { echo "cuda-direct-compare: meson setup failed" >&2; exit 2; }
  fi
  meson compile -C build-gpu runnable cuda-direct-bench > /dev/null ||
    { echo "cuda-direct-compare: the build failed" >&2; exit 2; }
fi
for f in "$opbench" "$direct" "$builddir/backends/cuda/opbench-backend-cuda.so"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "cuda-direct-compare: $f is missing (meson compile -C $builddir runnable cuda-direct-bench)" >&2; exit 2; }
done

gpu=""
command -v nvidia-smi > /dev/null 2>&1 &&
  gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)
if [ -z "$gpu" ]; then
  echo "cuda-direct-compare: no GPU (nvidia-smi finds none)" >&2
  [ $allow_no_gpu -eq 1 ] || exit 3
fi

mkdir -p "$out/logs"
rm -f "$out"/*.json "$out/compare.md" "$out"/logs/*.log
started=$SECONDS
step() { echo "=== cuda-direct-compare: $* ($((SECONDS - started)) s)"; }
sampling=(--warmup "$warmup" --min-time "$min_time" --max-time "$max_time" --repetitions "$reps")
status=0
for c in "${caches[@]}"; do
  step "cuda-direct-bench, cache $c"
  set +e
  "$direct" --cache "$c" "${sampling[@]}" ${filter:+--filter "$filter"} --out "$out/direct-$c.json" \
    > "$out/logs/direct-$c.log" 2>&1
  rc=$?
  set -e
  tail -n 2 "$out/logs/direct-$c.log"
  case $rc in 0) ;; 3) [ $status -ne 0 ] || status=3 ;; *) status=1 ;; esac
  step "opbench run direct.toml --backends cuda, cache $c"
  set +e
  "$opbench" run backends/cuda/bench/direct.toml --backends cuda --cache "$c" "${sampling[@]}" --min-samples 5 \
    --no-progress --out "$out/opbench-$c.json" > "$out/logs/opbench-$c.log" 2>&1
  rc=$?
  set -e
  tail -n 2 "$out/logs/opbench-$c.log"
  [ $rc -eq 0 ] || status=1
  if [ "$c" = warm ]; then
    step "cuda-direct-bench, warm, 20 back-to-back calls per sample"
    set +e
    "$direct" --cache warm --calls 20 --timing canonical "${sampling[@]}" ${filter:+--filter "$filter"} \
      --out "$out/direct-warm-b2b.json" > "$out/logs/direct-warm-b2b.log" 2>&1
    rc=$?
    set -e
    tail -n 1 "$out/logs/direct-warm-b2b.log"
    case $rc in 0|3) ;; *) status=1 ;; esac
  fi
done

step "compare"
sets=()
for f in "$out"/direct-*.json "$out"/opbench-*.json; do [ -s "$f" ] && sets+=("$f"); done
if [ ${#sets[@]} -gt 0 ]; then
  { echo "# opbench cuda / cuda-direct-bench"; echo
    echo "- device: ${gpu:-none}; opbench $("$opbench" --version 2>/dev/null || echo unknown); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- sampling: ${sampling[*]}; cache: $cache"
    python3 backends/cuda/bench/compare_direct.py "${sets[@]}" 2> "$out/logs/compare.log" ||
      { cat "$out/logs/compare.log"; [ $status -ne 0 ] || status=1; }
  } > "$out/compare.md"
  cat "$out/compare.md"
fi
[ -n "$gpu" ] || { echo "cuda-direct-compare: no GPU: nothing was measured" >&2; exit 3; }
exit $status
