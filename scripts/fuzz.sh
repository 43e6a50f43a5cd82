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

# One target: its search, its log, and on a finding its reproducers shown.
# Exits non-zero when the target found a problem.
fuzz_one() {
  local target=$1 findings="build-fuzz/findings/$1" scratch="build-fuzz/scratch/$1" dict=()
  rm -rf "$findings" "$scratch"
  mkdir -p "$findings" "$scratch"
  [ "$target" = suite ] && dict=(-dict=tests/fuzz/toml.dict)
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a 2 GiB input-driven
  # allocation is a finding, not a machine problem.
  if ! build-fuzz/fuzz_$target "$scratch" "tests/fuzz/corpus/$target" "${dict[@]}" \
      "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix="$findings/" > "build-fuzz/fuzz_$target.log" 2>&1; then
    echo "fuzz.sh: fuzz_$target FOUND A PROBLEM; reproducer(s) in $findings:" >&2
    ls -l "$findings" >&2
    tail -40 "build-fuzz/fuzz_$target.log" >&2
    return 1
  fi
  echo "fuzz.sh: fuzz_$target: $what: $(grep -E '^stat::number_of_executed_units' "build-fuzz/fuzz_$target.log" | tr -s ' ')"
}

# Each target is one single-threaded process and its search depends only on
# its own seed and corpus, so the targets run side by side, one per CPU
# (issue 44: one at a time, they left a CPU of CI's two idle for 16 minutes).
jobs_at_once="${FUZZ_JOBS:-$(nproc)}"
echo "fuzz.sh: 7 targets, $what each, $jobs_at_once at a time"
# Slowest first (inputs a second here: history 576, analyze 694, reader 689,
# suite 1886, summaries 2631, result_set 4347, archive_index 6250), so the
# last to finish is a short one and no CPU idles long at the end.
targets=(history analyze reader suite summaries result_set archive_index)
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
  # Each job leaves its exit status in a file: wait -n's status is not tied to a target.
  rm -f "build-fuzz/fuzz_$target.status"
  (if fuzz_one "$target"; then rc=0; else rc=1; fi; echo "$rc" > "build-fuzz/fuzz_$target.status") &
done
wait
status=0
for target in "${targets[@]}"; do
  [ "$(cat "build-fuzz/fuzz_$target.status" 2>/dev/null)" = 0 ] || status=1
done
exit $status
