#!/usr/bin/env bash
# Pack a CUDA build made here into one tarball that runs on a GPU machine
# with none of opbench's libraries and no package manager (the device tool's
# H100: Ubuntu 24.04, CUDA and cuDNN only). scripts/gpu-device-run.sh unpacks
# and runs it there.
#
# usage: scripts/gpu-bundle.sh [BUILDDIR] TARBALL
#   BUILDDIR  a build set up with -Dcuda=enabled and compiled with
#             `meson compile -C BUILDDIR runnable cuda_planning_test
#             cuda_rope_quant_test cuda_roof_plan_test cuda_plugin_load_test
#             cuda_gpu_test cuda-direct-bench`, and for the device run's
#             `ab` step test-cuda-slower (carried when built)
#             (default build-gpu)
#   TARBALL   the .tar.xz to write
#
# The tarball holds, under x/:
#   ROOT          the absolute path of this checkout: the build directory
#                 names it everywhere, so the device recreates it (a symlink)
#   tree/         this checkout without .git and other build directories,
#                 BUILDDIR without its object files
#   libs/         every library that opbench, the plugins and the cuda tests
#                 load (ldd) except glibc, libstdc++/libgcc and CUDA's own
#   bin/meson, bin/mesonbuild/   the Meson that set BUILDDIR up (meson test
#                 reads its files and refuses another version)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)

usage() { sed -n '7,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
case $# in
  1) builddir=build-gpu tarball=$1 ;;
  2) builddir=${1%/} tarball=$2 ;;
  *) usage ;;
esac
# Relative to the checkout: the tree and the build travel together.
builddir=$(realpath -m --relative-to="$root" "$builddir")
case $builddir in ..*) echo "gpu-bundle: $builddir is outside this checkout ($root)" >&2; exit 2 ;; esac
tarball=$(realpath -m "$tarball")
intro="$builddir/meson-info/intro-buildoptions.json"
[ -f "$intro" ] || { echo "gpu-bundle: $builddir is not a meson build directory ($intro is missing)" >&2; exit 2; }
python3 -c 'import json,sys; o={x["name"]:x["value"] for x in json.load(open(sys.argv[1]))}; sys.exit(o.get("cuda")!="enabled")' "$intro" ||
  { echo "gpu-bundle: $builddir was not set up with -Dcuda=enabled" >&2; exit 2; }

# What runs on the device: opbench, every plugin, the cuda tests, the direct
# cuBLASLt/cuDNN reference (scripts/cuda-direct-compare.sh).
binaries=("$builddir/harness/opbench")
for t in cuda_planning_test cuda_rope_quant_test cuda_roof_plan_test cuda_plugin_load_test cuda_gpu_test; do binaries+=("$builddir/tests/backends/cuda/$t"); done
binaries+=("$builddir/backends/cuda/bench/cuda-direct-bench")
while IFS= read -r so; do binaries+=("$so"); done < <(find "$builddir/backends" -name 'opbench-backend-*.so' | sort)
# The cuda plugin with each matmul 5% slower (backends/cuda/meson.build): the
# build gpu-device-run.sh's `ab` step compares against; optional.
slower=$builddir/backends/cuda/test-cuda-slower.so
[ -f "$slower" ] && binaries+=("$slower")
for b in "${binaries[@]}"; do
  [ -x "$b" ] || [ -f "$b" ] || { echo "gpu-bundle: $b is missing: compile runnable, the cuda tests and cuda-direct-bench first" >&2; exit 2; }
done
echo "gpu-bundle: ${#binaries[@]} binaries from $builddir"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/x/libs" "$stage/x/bin" "$stage/x/tree"
echo "$root" > "$stage/x/ROOT"

# Libraries the device lacks. Not carried: glibc and the compiler runtime
# (the device's are newer and compatible) and CUDA/cuDNN/the driver (the
# device's own must match its driver).
skip='^(ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnvrtc|libnvJitLink)\.so'
ldd "${binaries[@]}" 2>/dev/null | awk '/=> \// { print $1, $3 }' | sort -u |
  while read -r name path; do
    [[ $name =~ $skip ]] && continue
    cp -L "$path" "$stage/x/libs/$name"
  done
unresolved=$(ldd "${binaries[@]}" 2>/dev/null | grep 'not found' | sort -u || true)
[ -z "$unresolved" ] || { echo "gpu-bundle: unresolved here too:" >&2; echo "$unresolved" >&2; exit 1; }
echo "gpu-bundle: libs: $(cd "$stage/x/libs" && ls | tr '\n' ' ')"

# Meson: the installed one (meson test reads coredata written by it).
meson_exe=$(command -v meson)
meson_pkg=$(sed -n '1s/^#! *//p' "$meson_exe" | awk '{print $NF}')
meson_pkg=$("$meson_pkg" -c 'import mesonbuild, os; print(os.path.dirname(mesonbuild.__file__))')
cp -r "$meson_pkg" "$stage/x/bin/mesonbuild"
find "$stage/x/bin/mesonbuild" -name __pycache__ -prune -exec rm -rf {} +
# The launcher imports the mesonbuild beside it; the device's python3 runs it.
sed '1s|^#!.*|#!/usr/bin/env python3|' "$meson_exe" > "$stage/x/bin/meson"
chmod +x "$stage/x/bin/meson"
echo "gpu-bundle: meson $(meson --version) from $meson_pkg"

# The tree: sources, suites, scripts, and the build without object files
# (gpu-check runs with --no-rebuild).
tar -C "$root" --exclude=./.git --exclude='./build*' --exclude='./.gpu-stage' -cf - . | tar -C "$stage/x/tree" -xf -
tar -C "$root" --exclude='*.p' --exclude='meson-logs' -cf - "$builddir" | tar -C "$stage/x/tree" -xf -

mkdir -p "$(dirname "$tarball")"
tar -C "$stage" -cf - x | xz -T2 -6 > "$tarball"
echo "gpu-bundle: wrote $tarball ($(du -h "$tarball" | cut -f1)), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + uncommitted changes')"
