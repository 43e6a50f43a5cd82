#!/usr/bin/env bash
# scripts/ci-bench.sh end to end on the slowdown test backend. No step needs
# two timed runs to agree, so a loaded machine cannot fail it:
#   1. the first run has no baseline and is archived;
#   2. unchanged code passes, on known times: the first set made steady
#      (scale_times.py --steady: each entry's repetitions its fastest one's,
#      passed) is archived in an archive of its own (archive3), and a copy
#      of it stamped a minute later (factor 1) gated (--set) against it;
#   3. the gate's logic on known times: a copy of the steady set with the
#      slowdown backend's times x4 fails the gate against it, naive stays
#      same, nothing archived;
#   4. a real slowdown far beyond any noise: OPBENCH_TEST_SLOWDOWN=40 (40x
#      the work per call) against a 500% threshold fails the gate against
#      the steady set and leaves naive alone;
# then opbench run --archive, history, compare --baseline-from, run --shard
# 1/2 and 2/2, and merge; last, --keep 1 prunes the archive after archiving,
# gating a copy of the archive's newest set (known times again: gating the
# stage 1 copy there compared it with stage 5's timed run whenever stages 1-5
# took under a minute, and a loaded machine failed it; issue 27).
# usage: ci_bench_test.sh SOURCE_ROOT OPBENCH SLOWDOWN_PLUGIN
set -euo pipefail
src=$1 opbench=$2 plugin=$3
work=$(mktemp -d /tmp/opbench-ci-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
export OPBENCH_PLUGIN_PATH=$plugin
# Its runs need times, not a quiet machine: where the test may (root or
# CAP_SYS_NICE) it takes a higher scheduling priority, inherited by the
# opbench runs it starts, so CI's other tests cannot starve every repetition
# of an entry (issue 44: this failed beside two builds at load 6-8).
renice -n -10 -p $$ > /dev/null 2>&1 || true
unset GITHUB_STEP_SUMMARY OPBENCH_TEST_SLOWDOWN
# gate THRESHOLD ci-bench options...
gate() {
  local threshold=$1
  shift
  "$src/scripts/ci-bench.sh" --opbench "$opbench" --suite "$src/tests/harness/ci_gate.toml" \
    --archive "${archive:-$work/archive}" --summary "$work/summary.md" \
    --compare-args "--threshold $threshold --accept-unmet-noise" "$@"
}
fail() { echo "FAIL: $*" >&2; exit 1; }
archived() { find "$work/archive" -name '*.json' ! -name index.json | wc -l; }

echo "== 1: no baseline yet: passes, archived"
gate 100% --out "$work/first.json" > "$work/1.log" 2>&1 || { cat "$work/1.log"; fail "first run did not pass"; }
grep -q "No baseline" "$work/1.log" || { cat "$work/1.log"; fail "first run did not say there is no baseline"; }
[ "$(archived)" -eq 1 ] || fail "first run not archived"

# first.json was measured here, and a busy machine leaves its marks on it:
# a side's repetitions bimodal (compare then calls it disturbed, never
# slower), or every repetition of an entry starved (no time at all: seen at
# load 6.6). Made steady, every entry holds known times; where an entry has
# no time to make steady from (scale_times.py exits 3), the suite is
# measured again, up to 5 times.
steady_from=$work/first.json
for attempt in 1 2 3 4 5 6; do
  rc=0
  /usr/bin/python3 "$src/tests/harness/scale_times.py" "$steady_from" "$work/steady.json" slowdown 1 --steady \
    2> "$work/steady.err" || rc=$?
  [ $rc -eq 3 ] && [ $attempt -lt 6 ] || break
  cat "$work/steady.err"
  "$opbench" run "$src/tests/harness/ci_gate.toml" --no-progress --out "$work/again$attempt.json" \
    > "$work/again$attempt.log" 2>&1 || { cat "$work/again$attempt.log"; fail "measuring again failed"; }
  steady_from=$work/again$attempt.json
done
[ $rc -eq 0 ] || { cat "$work/steady.err"; fail "no steady set (scale_times.py exit $rc, attempt $attempt)"; }
archive=$work/archive3 gate 100% --set "$work/steady.json" > "$work/steady.log" 2>&1 ||
  { cat "$work/steady.log"; fail "the steady set was not archived as archive3's baseline"; }
archived3() { find "$work/archive3" -name '*.json' ! -name index.json | wc -l; }
[ "$(archived3)" -eq 1 ] || fail "the steady set not archived"

echo "== 2: unchanged code: the same set gated again passes"
/usr/bin/python3 "$src/tests/harness/scale_times.py" "$work/steady.json" "$work/unchanged.json" slowdown 1
archive=$work/archive3 gate 100% --set "$work/unchanged.json" --no-archive > "$work/2.log" 2>&1 ||
  { cat "$work/2.log"; fail "an unchanged set failed the gate"; }
grep -q "| verdict |" "$work/2.log" || { cat "$work/2.log"; fail "no comparison table"; }
! grep -q "| slower |" "$work/2.log" || fail "an unchanged set is slower"
[ "$(grep -c "| same |" "$work/2.log")" -eq 4 ] || { cat "$work/2.log"; fail "not all 4 entries same"; }

echo "== 3: known times, the slowdown backend x4: the gate fails, nothing archived"
/usr/bin/python3 "$src/tests/harness/scale_times.py" "$work/steady.json" "$work/slowed.json" slowdown 4
set +e
archive=$work/archive3 gate 100% --set "$work/slowed.json" > "$work/3.log" 2>&1
rc=$?
set -e
cat "$work/3.log"
[ $rc -eq 1 ] || fail "the slowed-down set exited $rc, not 1"
[ "$(grep -c "| slowdown | .* | slower |" "$work/3.log")" -eq 2 ] || fail "the slowdown backend's 2 cases are not slower"
[ "$(grep -c "| naive | .* | same |" "$work/3.log")" -eq 2 ] || fail "naive's unchanged times are not same"
grep -q "REGRESSION" "$work/3.log" || fail "no REGRESSION line"
[ "$(archived3)" -eq 1 ] || fail "the regression was archived"
[ "$(archived)" -eq 1 ] || fail "stages 2-3 archived into the first archive"
grep -q "| slower |" "$work/summary.md" || fail "the summary file has no slower row"

echo "== 4: OPBENCH_TEST_SLOWDOWN=40, a real run: the gate fails, naive untouched"
# Against the steady baseline: the one measured side is the slowed run.
# On a loaded machine (CI's sanitizer stage) every repetition of a slowed
# entry can starve: no time, no ratio, and the gate passes and archives the
# run. Each attempt therefore gets a copy of archive3, and a pass whose log
# names a starved entry is tried again, up to 3 times.
archived4() { find "$work/archive4" -name '*.json' ! -name index.json | wc -l; }
for attempt in 1 2 3; do
  rm -rf "$work/archive4"
  cp -r "$work/archive3" "$work/archive4"
  set +e
  OPBENCH_TEST_SLOWDOWN=40 archive=$work/archive4 gate 500% --out "$work/third$attempt.json" > "$work/4.log" 2>&1
  rc=$?
  set -e
  if [ $rc -eq 0 ] && grep -q "starved" "$work/4.log" && [ $attempt -lt 3 ]; then
    echo "attempt $attempt: an entry starved (a busy machine), measuring again"
    continue
  fi
  break
done
cat "$work/4.log"
[ $rc -eq 1 ] || fail "the slowed-down run exited $rc, not 1"
grep -q "| slowdown | .* | slower |" "$work/4.log" || fail "the slowdown backend's cases are not slower"
! grep -q "| naive | .* | slower |" "$work/4.log" || fail "naive is 6x slower too: the slowdown leaked"
[ "$(archived4)" -eq 1 ] || fail "the regression was archived"

echo "== 5: opbench run --archive, history, --baseline-from, --shard and merge"
unset OPBENCH_TEST_SLOWDOWN
suite=$src/tests/harness/ci_gate.toml
"$opbench" run "$suite" --no-progress --out "$work/fourth.json" --archive "$work/archive" > "$work/5.log" 2>&1 ||
  { cat "$work/5.log"; fail "run --archive failed"; }
grep -q "opbench: archived -> $work/archive/" "$work/5.log" || { cat "$work/5.log"; fail "run --archive did not archive"; }
# The run's console: one line per case x backend and a table per backend;
# Google Benchmark's per-repetition lines only with --verbose.
grep -q "^case x backend$" "$work/5.log" && grep -q "^ .* vs naive  status$" "$work/5.log" \
  || { cat "$work/5.log"; fail "no header of the per-case lines"; }
[ "$(grep -c "^add/.*/be:slowdown" "$work/5.log")" -eq 2 ] || { cat "$work/5.log"; fail "not one name line per case"; }
# (A case starved on a busy machine prints its status where the figures go.)
[ "$(grep -A1 "^add/.*/be:slowdown" "$work/5.log" | grep -cE "^ .*(x  passed|  starved)")" -eq 2 ] \
  || { cat "$work/5.log"; fail "not one figures line per case"; }
# Every line fits 100 columns: the entries', the load warning's and the
# per-backend table's (its bound counts are notes, so whatever mix of bounds
# the run's timings give), but for the lines that name a file.
/usr/bin/python3 "$src/tests/harness/wide_lines.py" "$work/5.log" --except "$work" \
  || { cat "$work/5.log"; fail "a console line wider than 100 columns"; }
grep -q "^Per backend" "$work/5.log" || fail "no per-backend table"
! grep -q "manual_time" "$work/5.log" || fail "Google Benchmark's lines without --verbose"
"$opbench" run "$suite" --no-progress --no-out --verbose > "$work/verbose.log" 2>&1 ||
  { cat "$work/verbose.log"; fail "run --verbose failed (exit $?)"; }
[ "$(grep -c "manual_time " "$work/verbose.log")" -ge 18 ] || { cat "$work/verbose.log"; fail "--verbose lacks the per-repetition lines"; }
[ "$(archived)" -eq 2 ] || fail "run --archive: not 2 sets"
"$opbench" history "$work/archive" --suite ci-gate --case slowdown > "$work/history.log" ||
  { cat "$work/history.log"; fail "history failed"; }
cat "$work/history.log"
grep -q "(2 runs, oldest first)" "$work/history.log" || fail "history does not show the 2 archived runs"
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
grep -qE "shards must not overlap|are both shard [0-9]+/[0-9]+: give each shard once" "$work/merge.log" || { cat "$work/merge.log"; fail "no overlap message"; }
/usr/bin/python3 /usr/share/benchmark/compare.py benchmarks "$work/fourth.json" "$work/merged.json" > /dev/null ||
  fail "compare.py cannot read the merged set"

echo "== 6: --keep 1 prunes the archive to the newest set after archiving; a bad --keep is refused"
[ "$(archived)" -ge 2 ] || fail "expected 2 or more archived sets before pruning"
# fourth.json is the newest archived set (stage 5); its copy, stamped a minute
# later, has exactly its times, so the gate compares known inputs.
/usr/bin/python3 "$src/tests/harness/scale_times.py" "$work/fourth.json" "$work/fourth-again.json" slowdown 1
gate 100% --set "$work/fourth-again.json" --archive-always --keep 1 > "$work/6.log" 2>&1 || { cat "$work/6.log"; fail "gate with --keep 1 failed"; }
grep -q "baseline $work/archive/" "$work/6.log" || { cat "$work/6.log"; fail "stage 6 found no baseline"; }
! grep -q "| slower |" "$work/6.log" || { cat "$work/6.log"; fail "a copy of the baseline is slower"; }
grep -q "opbench archive prune: removed" "$work/6.log" || { cat "$work/6.log"; fail "--keep 1 did not prune"; }
[ "$(archived)" -eq 1 ] || fail "--keep 1 left $(archived) sets"
! gate 100% --set "$work/unchanged.json" --keep many > "$work/6b.log" 2>&1 || fail "--keep many accepted"
grep -q "give a whole number" "$work/6b.log" || { cat "$work/6b.log"; fail "no message for --keep many"; }
echo "ok"
