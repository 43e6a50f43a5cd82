#!/usr/bin/env bash
# The paired A/B figures of docs/measurement.md ("Paired A/B"): runs of the
# quick suite's naive cases, paired (`opbench ab`) and, for contrast,
# unpaired (two `opbench run`s one after the other, then `opbench compare`),
# with the spin test wrapper (tests/plugins/spin_plugin.cpp) slowing the
# new build's execute by EXTRA of its own time. Prints one line per run:
# the verdict counts, the wall time and the load average.
# usage: paired_figures.sh BUILD_DIR OUT_DIR paired|unpaired EXTRA RUNS [opbench options...]
#   EXTRA 0 with `paired` is the A/A run: the naive file on both sides.
set -euo pipefail
build=$1 out=$2 kind=$3 extra=$4 runs=$5
shift 5
opbench=$build/harness/opbench
naive=$build/backends/naive/opbench-backend-naive.so
spin=$build/tests/plugins/spin.so
suite=$(dirname "$0")/../../suites/quick.toml
mkdir -p "$out"
export OPBENCH_TEST_SPIN_INNER=$naive OPBENCH_TEST_SPIN_EXTRA=$extra
for i in $(seq 1 "$runs"); do
  tag="$kind-$extra-$i-$(date -u +%H%M%S)"
  load=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s.%N)
  if [ "$kind" = paired ]; then
    new=$spin
    [ "$extra" = 0 ] && new=$naive
    "$opbench" ab "$suite" --plugin "naive@base=$naive" --plugin "naive@new=$new" --no-progress \
      --out "$out/$tag.json" "$@" > "$out/$tag.log" 2>&1 || true
    result=$("$opbench" compare "$out/$tag.json" | grep -o '[0-9]* same, [0-9]* slower, [0-9]* faster, [0-9]* noisy')
  else
    "$opbench" run "$suite" --backends naive --no-progress --benchmark_enable_random_interleaving=true --out "$out/$tag-base.json" "$@" > "$out/$tag.log" 2>&1 || true
    # EXTRA 0: the same naive file again (A/A); else the spin wrapper, found
    # first as `naive` through OPBENCH_PLUGIN_PATH.
    plugin_path=$spin
    [ "$extra" = 0 ] && plugin_path=""
    OPBENCH_PLUGIN_PATH=$plugin_path "$opbench" run "$suite" --backends naive --no-progress --benchmark_enable_random_interleaving=true --out "$out/$tag-new.json" "$@" \
      >> "$out/$tag.log" 2>&1 || true
    "$opbench" compare --threshold 2% "$out/$tag-base.json" "$out/$tag-new.json" > "$out/$tag.cmp" 2>&1 || true
    result=$(grep -o '[0-9]* same, [0-9]* faster, [0-9]* slower, [0-9]* noisy' "$out/$tag.cmp" | head -1)
  fi
  end=$(date +%s.%N)
  printf '%s extra=%s run %s: %s; %.1f s; load %s -> %s\n' "$kind" "$extra" "$i" "$result" \
    "$(echo "$end - $start" | bc)" "$load" "$(cut -d' ' -f1 /proc/loadavg)"
done
