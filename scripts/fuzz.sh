#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, a Meson project of its own built
# with clang) in build-fuzz/ and runs each for a bounded time on its committed
# seed corpus (tests/fuzz/corpus/<target>/; new inputs go to a scratch
# directory, so the committed corpus is only read). Exits non-zero when a
# target finds a crash, leak, undefined behaviour, timeout or out-of-memory;
# the reproducer is left in build-fuzz/findings/<target>/.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   a fresh random search (default 60 s)
#   scripts/fuzz.sh --ci                   a fixed search: seed 1, RUNS inputs a target
# The --ci form is what .ci/run gates on: a bounded search whose inputs are
# the same for the same binary (a build in another directory differs: its
# paths are compiled in, and the search follows the coverage). Searching
# afresh, with the first form, is how new findings are made.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --ci ]; then
  runs="${RUNS:-200000}"
  budget=(-seed=1 -runs="$runs")
  what="$runs inputs from seed 1"
else
  seconds="${1:-60}"
  budget=(-max_total_time="$seconds")
  what="${seconds} s"
fi
if [ ! -f build-fuzz/build.ninja ]; then
  CXX=clang++ meson setup build-fuzz tests/fuzz
fi
ninja -C build-fuzz

status=0
for target in suite result_set reader analyze archive_index summaries history; do
  findings="build-fuzz/findings/$target"
  scratch="build-fuzz/scratch/$target"
  rm -rf "$findings" "$scratch"
  mkdir -p "$findings" "$scratch"
  dict=()
  [ "$target" = suite ] && dict=(-dict=tests/fuzz/toml.dict)
  echo "fuzz.sh: fuzz_$target for $what"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a 2 GiB input-driven
  # allocation is a finding, not a machine problem.
  if ! build-fuzz/fuzz_$target "$scratch" "tests/fuzz/corpus/$target" "${dict[@]}" \
      "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
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
