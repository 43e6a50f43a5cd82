#!/usr/bin/env bash
# From a fresh clone to a first result set: install what is missing, build
# every backend this machine can build, run suites/quick.toml on all of them.
#   scripts/quickstart.sh [extra opbench run options...]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
  meson setup build
fi
meson compile -C build
build/harness/opbench run suites/quick.toml "$@"
