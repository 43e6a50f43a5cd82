#!/usr/bin/env bash
# Device-side driver: unpack a scripts/gpu-bundle.sh tarball on a GPU machine
# with no package manager and run scripts/gpu-check.sh --prebuilt there.
#
# usage: bash gpu-device-run.sh OUTDIR [gpu-check options, e.g. --allow-no-gpu]
#   The tarball is gpu-bundle.tar.xz beside this script, or $GPU_BUNDLE.
#   OUTDIR receives (8 files, for the device tool's $OUT):
#     host.txt      OS, CPU, nvidia-smi, which CUDA/cuDNN libraries load
#     machine.txt   `opbench machine` (the host's figures)
#     gpu-check.log gpu-check's console and exit status, and the direct
#                   runs of the cuda tests where `meson test` could not run
#     summary.md, levels.md   gpu-check's
#     gpu-check.tgz everything gpu-check wrote (sets/, logs/, report.html)
#   Environment: GC_LIMIT (s, default 430) bounds gpu-check; WORK (default
#   /tmp/opb-gpu) is where the tarball is unpacked. STEPS (default check):
#   `check` runs gpu-check; `direct` runs scripts/cuda-direct-compare.sh
#   (opbench's cuda backend beside the direct cuBLASLt/cuDNN program; its
#   options from DIRECT_ARGS, e.g. "--cache both"), which adds direct.md
#   (opbench/direct per shape) and direct.tgz to OUTDIR, bounded by
#   DIRECT_LIMIT (s, default 420); `check,direct` runs both.
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
  echo "== opbench --version"; $opbench --version
  echo "== opbench list (at 100 columns)"; COLUMNS=100 $opbench list
} > "$outd/host.txt" 2>&1

log "opbench machine"
export OPBENCH_CACHE_DIR=$work/cache
mkdir -p "$OPBENCH_CACHE_DIR"
{ timeout 120 $opbench machine; echo "rc=$?"; } > "$outd/machine.txt" 2>&1

rc=0
case ",${STEPS:-check}," in
  *,direct,*)
    log "cuda-direct-compare --prebuilt build-gpu ${DIRECT_ARGS:-}"
    dc=$work/direct
    # shellcheck disable=SC2086 # DIRECT_ARGS is a list of options
    timeout "${DIRECT_LIMIT:-420}" scripts/cuda-direct-compare.sh --prebuilt build-gpu ${DIRECT_ARGS:-} "$dc" \
      > "$outd/direct.log" 2>&1
    drc=$?
    echo "cuda-direct-compare rc=$drc at $((SECONDS - t0)) s" | tee -a "$outd/direct.log"
    cp "$dc/compare.md" "$outd/direct.md" 2>/dev/null
    tar -czf "$outd/direct.tgz" -C "$work" direct 2>/dev/null
    rc=$drc ;;
esac
case ",${STEPS:-check}," in
  *,check,*) ;;
  *) log "done, STEPS=${STEPS:-check}, rc=$rc"; exit $rc ;;
esac

log "gpu-check --prebuilt build-gpu $*"
gc=$work/gpu-check
timeout "${GC_LIMIT:-430}" scripts/gpu-check.sh "$@" --prebuilt build-gpu "$gc" > "$outd/gpu-check.log" 2>&1
grc=$?
echo "gpu-check rc=$grc at $((SECONDS - t0)) s" | tee -a "$outd/gpu-check.log"
[ $grc -eq 0 ] || rc=$grc

# If meson test itself could not run (Meson on this Python, say), the cuda
# tests' own binaries still say whether the backend works.
if ! grep -q '^Ok:' "$gc/logs/cuda-tests.log" 2>/dev/null; then
  mkdir -p "$gc/logs"
  plugin=$root/build-gpu/backends/cuda/opbench-backend-cuda.so
  for t in cuda_planning_test cuda_rope_quant_test cuda_roof_plan_test cuda_plugin_load_test cuda_gpu_test; do
    args=()
    case $t in cuda_planning_test | cuda_rope_quant_test | cuda_roof_plan_test) ;; *) args=("$plugin") ;; esac # host-only tests take no plugin
    timeout 300 build-gpu/tests/backends/cuda/$t "${args[@]}" > "$gc/logs/direct-$t.log" 2>&1
    echo "meson test did not run: direct $t rc=$? (logs/direct-$t.log)" | tee -a "$outd/gpu-check.log"
  done
fi
cp "$gc/summary.md" "$gc/levels.md" "$outd/" 2>/dev/null
tar -czf "$outd/gpu-check.tgz" -C "$work" gpu-check 2>/dev/null
log "done, gpu-check rc=$rc" | tee -a "$outd/gpu-check.log"
exit $rc
