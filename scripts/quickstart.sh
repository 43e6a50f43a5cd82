#!/usr/bin/env bash
# From a fresh clone to a first result set: install what building and running
# need, build opbench and the plugins (not the tests: `meson test` builds
# those), run suites/quick.toml on every backend built.
#   scripts/quickstart.sh [extra opbench run options...]
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
  meson setup build
fi
# The CUDA plugin's kernels take minutes to compile and need a GPU to run:
# without one visible, quickstart leaves them to `meson compile -C build`.
if [ -e /dev/nvidia0 ] || nvidia-smi -L > /dev/null 2>&1; then
  meson compile -C build runnable
else
  echo "quickstart: no NVIDIA GPU visible; building opbench and the CPU plugins"
  echo "            (meson compile -C build builds the rest)"
  meson compile -C build runnable-cpu
fi
echo "quickstart: built in $((SECONDS - started)) s (packages included)"
build/harness/opbench run suites/quick.toml "$@"
