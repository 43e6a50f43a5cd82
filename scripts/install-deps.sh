#!/usr/bin/env bash
# Installs the Debian packages opbench builds and tests with. Idempotent:
# installs only what is missing, and does nothing when everything is present.
#   scripts/install-deps.sh          required packages
# Optional backends are picked up when their packages are present:
#   libdnnl-dev (oneDNN backend) is installed too; the CUDA toolkit is not a
#   Debian package here and is used from /usr/local/cuda when present.
# clang (clang++ 14) with libclang-rt-14-dev (which holds libFuzzer's runtime,
# libclang_rt.fuzzer) builds the fuzz targets; ASan/UBSan come with g++.
set -euo pipefail

packages=(
  build-essential pkg-config git meson ninja-build
  libtomlplusplus-dev libboost-dev libboost-filesystem-dev
  libbenchmark-dev libbenchmark-tools libgtest-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev libssl-dev
  libdnnl-dev python3 python3-scipy
  chromium   # renders opbench report's HTML in tests/harness/report_html_chromium_test.py
  cmark-gfm  # GitHub's Markdown renderer: tests/harness/compare_markdown_test.sh
  clang libclang-rt-14-dev      # the libFuzzer targets (scripts/fuzz.sh): clang++, -fsanitize=fuzzer
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
