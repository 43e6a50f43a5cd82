#!/usr/bin/env bash
# scripts/ci-bench.sh end to end on the slowdown test backend: the first run
# has no baseline and is archived; a second run passes the gate; a run with
# OPBENCH_TEST_SLOWDOWN=4 (4x the work per call) fails it and is not
# archived. Short (a tiny suite, milliseconds per repetition) and robust on a
# loaded machine: the gate's threshold is 100% against a 300% slowdown.
# usage: ci_bench_test.sh SOURCE_ROOT OPBENCH SLOWDOWN_PLUGIN
set -euo pipefail
src=$1 opbench=$2 plugin=$3
work=$(mktemp -d /tmp/opbench-ci-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
export OPBENCH_PLUGIN_PATH=$plugin
unset GITHUB_STEP_SUMMARY OPBENCH_TEST_SLOWDOWN
gate() {
  "$src/scripts/ci-bench.sh" --opbench "$opbench" --suite "$src/tests/harness/ci_gate.toml" \
    --archive "$work/archive" --summary "$work/summary.md" \
    --compare-args "--threshold 100% --accept-unmet-noise" --out "$work/$1.json"
}
fail() { echo "FAIL: $*" >&2; exit 1; }

echo "== 1: no baseline yet: passes, archived"
gate first > "$work/1.log" 2>&1 || { cat "$work/1.log"; fail "first run did not pass"; }
grep -q "No baseline" "$work/1.log" || { cat "$work/1.log"; fail "first run did not say there is no baseline"; }
[ "$(find "$work/archive" -name '*.json' ! -name index.json | wc -l)" -eq 1 ] || fail "first run not archived"

echo "== 2: same code again: the gate passes"
gate second > "$work/2.log" 2>&1 || { cat "$work/2.log"; fail "an unchanged run failed the gate"; }
grep -q "| verdict |" "$work/2.log" || { cat "$work/2.log"; fail "no comparison table"; }
! grep -q "| slower |" "$work/2.log" || fail "an unchanged run is slower"

echo "== 3: OPBENCH_TEST_SLOWDOWN=4: the gate fails, nothing archived"
set +e
OPBENCH_TEST_SLOWDOWN=4 gate third > "$work/3.log" 2>&1
rc=$?
set -e
cat "$work/3.log"
[ $rc -eq 1 ] || fail "the slowed-down run exited $rc, not 1"
grep -q "slowdown  *| .*| slower |" "$work/3.log" || grep -q "| slowdown | .* | slower |" "$work/3.log" ||
  fail "the slowdown backend's case is not slower"
grep -q "REGRESSION" "$work/3.log" || fail "no REGRESSION line"
[ "$(find "$work/archive" -name '*.json' ! -name index.json | wc -l)" -eq 2 ] || fail "the regression was archived"
grep -q "| slower |" "$work/summary.md" || fail "the summary file has no slower row"
echo "ok"
