#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, a Meson project of its own built
# with clang) in build-fuzz/ and runs each for a bounded time on its committed
# seed corpus (tests/fuzz/corpus/<target>/; new inputs go to a scratch
# directory, so the committed corpus is only read). Exits non-zero when a
# target finds a crash, leak, undefined behaviour, timeout or out-of-memory;
# the reproducer is left in build-fuzz/findings/<target>/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
if [ ! -f build-fuzz/build.ninja ]; then
  CXX=clang++ meson setup build-fuzz tests/fuzz
fi
ninja -C build-fuzz

status=0
for target in suite result_set; do
  findings="build-fuzz/findings/$target"
  scratch="build-fuzz/scratch/$target"
  rm -rf "$findings" "$scratch"
  mkdir -p "$findings" "$scratch"
  dict=()
  [ "$target" = suite ] && dict=(-dict=tests/fuzz/toml.dict)
  echo "fuzz.sh: fuzz_$target for ${seconds} s"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a 2 GiB input-driven
  # allocation is a finding, not a machine problem.
  if ! build-fuzz/fuzz_$target "$scratch" "tests/fuzz/corpus/$target" "${dict[@]}" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix="$findings/" > "build-fuzz/fuzz_$target.log" 2>&1; then
    echo "fuzz.sh: fuzz_$target FOUND A PROBLEM; reproducer(s) in $findings:" >&2
    ls -l "$findings" >&2
    tail -40 "build-fuzz/fuzz_$target.log" >&2
    status=1
  else
    grep -E "^stat::number_of_executed_units|^Done" "build-fuzz/fuzz_$target.log" || true
  fi
done
exit $status
