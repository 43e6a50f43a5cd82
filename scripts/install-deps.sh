#!/usr/bin/env bash
# Installs the Debian packages opbench needs. Idempotent: installs only what
# is missing, and does nothing when everything is present.
#   scripts/install-deps.sh          what building and running opbench need
#   scripts/install-deps.sh --test   also what only the tests use (.ci/run)
# Optional backends are picked up when their packages are present:
#   libdnnl-dev (oneDNN backend) is installed too; the CUDA toolkit is not a
#   Debian package here and is used from /usr/local/cuda when present.
set -euo pipefail

usage() { echo "usage: scripts/install-deps.sh [--test]" >&2; exit 2; }
with_tests=0
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=1 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown option '$arg'" >&2; usage ;;
  esac
done

# Building and running: compiler and Meson, the libraries the harness links,
# oneDNN for its backend; GoogleTest, which `meson setup` needs for the test
# targets; Google Benchmark's compare.py (with SciPy, which it imports), which
# reads every result set.
packages=(
  build-essential pkg-config git meson ninja-build
  libtomlplusplus-dev libboost-dev libboost-filesystem-dev
  libbenchmark-dev libcli11-dev libfmt-dev nlohmann-json3-dev libssl-dev
  libdnnl-dev python3 libgtest-dev libbenchmark-tools python3-scipy
  python3-clang-14  # libclang's Python bindings: the function_length test runs on the README path, never skips
)
# Only some tests use these; without them those tests are skipped (exit 77).
test_packages=(
  chromium   # renders opbench report's HTML in tests/harness/report_html_chromium_test.py
  cmark-gfm  # GitHub's Markdown renderer: tests/harness/compare_markdown_test.sh
  python3-pandas  # python/opbench_results.py's DataFrame and pd.read_csv of compare's CSV: tests/python/opbench_results_test.py
  clang libclang-rt-14-dev      # the libFuzzer targets (scripts/fuzz.sh): clang++, -fsanitize=fuzzer
  slurm-wlm munge  # a one-node Slurm (scripts/slurm-local.sh) for tests/harness/slurm_test.sh
)
[ "$with_tests" -eq 1 ] && packages+=("${test_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

# Within 100 columns, as every console of opbench's (issue 30).
echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}" | fold -s -w 100
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
