#!/usr/bin/env bash
# scripts/ci-bench.sh end to end on the slowdown test backend: the first run
# has no baseline and is archived; a second run passes the gate; a run with
# OPBENCH_TEST_SLOWDOWN=4 (4x the work per call) fails it and is not
# archived. Then opbench run --archive, history, compare --baseline-from,
# run --shard 1/2 and 2/2, and merge. Short (a tiny suite, milliseconds per repetition) and robust on a
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
grep -q "| slowdown | .* | slower |" "$work/3.log" || fail "the slowdown backend's cases are not slower"
! grep -q "| naive | .* | slower |" "$work/3.log" || fail "naive is slower too: the slowdown leaked"
grep -q "REGRESSION" "$work/3.log" || fail "no REGRESSION line"
[ "$(find "$work/archive" -name '*.json' ! -name index.json | wc -l)" -eq 2 ] || fail "the regression was archived"
grep -q "| slower |" "$work/summary.md" || fail "the summary file has no slower row"
echo "== 4: opbench run --archive, history, --baseline-from, --shard and merge"
unset OPBENCH_TEST_SLOWDOWN
suite=$src/tests/harness/ci_gate.toml
"$opbench" run "$suite" --no-progress --out "$work/fourth.json" --archive "$work/archive" > "$work/4.log" 2>&1 ||
  { cat "$work/4.log"; fail "run --archive failed"; }
grep -q "opbench: archived -> $work/archive/" "$work/4.log" || { cat "$work/4.log"; fail "run --archive did not archive"; }
# The run's console: one line per case x backend and a table per backend;
# Google Benchmark's per-repetition lines only with --verbose.
grep -q "^case x backend .* vs naive  status" "$work/4.log" || { cat "$work/4.log"; fail "no header of the per-case lines"; }
[ "$(grep -c "^add/.*/be:slowdown.* passed" "$work/4.log")" -eq 2 ] || { cat "$work/4.log"; fail "not one line per case"; }
grep -q "^Per backend" "$work/4.log" || fail "no per-backend table"
! grep -q "manual_time" "$work/4.log" || fail "Google Benchmark's lines without --verbose"
"$opbench" run "$suite" --no-progress --no-out --verbose > "$work/verbose.log" 2>&1 || fail "run --verbose failed"
[ "$(grep -c "manual_time " "$work/verbose.log")" -ge 18 ] || { cat "$work/verbose.log"; fail "--verbose lacks the per-repetition lines"; }
[ "$(find "$work/archive" -name '*.json' ! -name index.json | wc -l)" -eq 3 ] || fail "run --archive: not 3 sets"
"$opbench" history "$work/archive" --suite ci-gate --case slowdown > "$work/history.log" ||
  { cat "$work/history.log"; fail "history failed"; }
cat "$work/history.log"
grep -q "(3 runs, oldest first)" "$work/history.log" || fail "history does not show the 3 archived runs"
grep -q "\[slowdown\]" "$work/history.log" || fail "history lacks the slowdown cases"
! grep -q "\[naive\]" "$work/history.log" || fail "history --case did not filter"
"$opbench" compare --baseline-from "$work/archive" "$work/fourth.json" > "$work/base.log" 2>&1 ||
  { cat "$work/base.log"; fail "compare --baseline-from failed"; }
grep -q "baseline $work/archive/" "$work/base.log" || { cat "$work/base.log"; fail "no baseline picked"; }
for i in 1 2; do
  "$opbench" run "$suite" --no-progress --shard $i/2 --out "$work/shard$i.json" > "$work/shard$i.log" 2>&1 ||
    { cat "$work/shard$i.log"; fail "run --shard $i/2 failed"; }
done
"$opbench" merge "$work/shard1.json" "$work/shard2.json" -o "$work/merged.json" || fail "merge failed"
/usr/bin/python3 - "$work" <<'PY' || fail "shards or merged set wrong"
import json, sys
w = sys.argv[1]
names = lambda f: {b["run_name"] for b in json.load(open(f"{w}/{f}"))["benchmarks"] if b["run_type"] == "iteration"}
s1, s2, m = names("shard1.json"), names("shard2.json"), names("merged.json")
assert s1 and s2 and not (s1 & s2), (s1, s2)
assert m == s1 | s2 == names("fourth.json"), (m, names("fourth.json"))
ctx = json.load(open(f"{w}/shard2.json"))["context"]["opbench"]
assert ctx["shard"] == {"index": 2, "count": 2}, ctx.get("shard")
assert len(json.load(open(f"{w}/merged.json"))["context"]["opbench"]["merged_from"]) == 2
print("shards", sorted(s1), sorted(s2))
PY
! "$opbench" merge "$work/shard1.json" "$work/shard1.json" -o "$work/bad.json" 2> "$work/merge.log" || fail "overlapping shards merged"
grep -q "shards must not overlap" "$work/merge.log" || { cat "$work/merge.log"; fail "no overlap message"; }
/usr/bin/python3 /usr/share/benchmark/compare.py benchmarks "$work/fourth.json" "$work/merged.json" > /dev/null ||
  fail "compare.py cannot read the merged set"
echo "ok"
