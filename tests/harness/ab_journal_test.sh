#!/usr/bin/env bash
# Issue 44, item 2: `opbench ab` on the journal, through the real program.
# Each step failed on the main before it:
#   1. ab killed with SIGKILL once some cases finished (watched in its
#      journal, which it did not keep: the set was 0 bytes and nothing else)
#      leaves its reservation and journal; the same command again is refused
#      (exit 2) naming `opbench ab --resume SET`, the way that works (it said
#      "already exists; pass --force");
#   2. `ab --resume SET` with a measuring option (--pairs, --benchmark_filter,
#      --out), or with a suite, is refused (exit 2) as `run --resume` refuses
#      them (there was no `ab --resume`);
#   3. `ab --resume SET` finishes it: a complete set with every case's two
#      sides, the journal gone, and the cases finished before the kill kept
#      as measured: the same entries, the same pairs (the verdict's inputs);
#   4. SIGUSR1 stops ab as SIGTERM does (exit 138, an incomplete set, its
#      journal; the message names `opbench ab --resume SET`), and
#      `opbench run --resume SET`, which another refusal names, finishes an
#      ab set too; SIGUSR1 stops `run` the same way (it left a 0-byte set);
#   5. ab --case-timeout: a hung side fails its case with "timed out after 2
#      s" (ab had no such option: a hang cost 60 s).
# No timing is asserted: it must pass beside CPU hogs.
# usage: ab_journal_test.sh SOURCE_ROOT OPBENCH NAIVE_PLUGIN FAULT_PLUGIN
set -euo pipefail
src=$1 opbench=$2 naive=$3 fault=$4
work=$(mktemp -d /tmp/opbench-abjournal-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
. "$src/tests/harness/e2e_lib.sh" # fail, expect_bad
cd "$work"
unset OPBENCH_FAULT OPBENCH_FAULT_PHASE OPBENCH_FAULT_ROWS
export OPBENCH_PLUGIN_PATH=$naive

# Eight small cases: enough that a kill after the first two leaves some to run.
cat > suite.toml <<'TOML'
[suite]
name = "ab-journal"
[defaults]
backends = ["naive"]
dtypes = ["f32"]
warmup = 1
[[case]]
op = "add"
rows = [8, 16, 24, 32]
cols = 64
[[case]]
op = "silu"
rows = [8, 16, 24, 32]
cols = 64
TOML
cases=8
ab_args=(ab suite.toml --plugin naive@a="$naive" --plugin naive@b="$naive" --pairs 6 --seconds 0.002
         --threshold 0.5 --no-progress)

# case_lines JOURNAL: how many case x side lines the journal holds
case_lines() {
  local n
  n=$(grep -c '"case":' "$1" 2> /dev/null) || true
  echo "${n:-0}"
}
# start_until N OUT LOG ARGS...: starts `opbench ARGS` in the background
# (pid in $pid), and waits until OUT's journal holds at least N case lines;
# fails if it ends first.
start_until() {
  local n=$1 out=$2 log=$3
  shift 3
  "$opbench" "$@" > "$log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 3000); do
    [ "$(case_lines "$out.journal")" -ge "$n" ] && return 0
    kill -0 "$pid" 2> /dev/null || { cat "$log"; fail "'$*' ended before its journal held $n case lines"; }
    sleep 0.05
  done
  cat "$log"
  fail "'$*': no $n case lines in $out.journal after 150 s"
}
# stop PID: waits for it and sets `rc` to its exit status
stop() {
  set +e
  wait "$1"
  rc=$?
  set -e
}

echo "== 1: SIGKILL after some cases keeps the reservation and the journal"
start_until 4 killed.json kill.log "${ab_args[@]}" --out killed.json
kill -9 "$pid"
stop "$pid"
[ $rc -eq 137 ] || fail "the killed ab exited $rc"
[ -f killed.json.journal ] || fail "no journal after the kill"
[ -f killed.json ] || fail "no reservation after the kill"
cp killed.json.journal before.journal
expect_bad "opbench ab --resume killed.json" "${ab_args[@]}" --out killed.json
expect_bad "opbench ab --resume killed.json" "${ab_args[@]}" --out killed.json --force
[ -f killed.json.journal ] || fail "the refused command removed the journal"

echo "== 2: --resume refuses what would change what is measured"
expect_bad "--resume continues the run with its own settings, and --pairs would change what it measures" \
  ab --resume killed.json --pairs 8
expect_bad "--benchmark_filter would change what it measures" ab --resume killed.json --benchmark_filter=add
expect_bad "--out would change" ab --resume killed.json --out other.json
expect_bad "give no suite file with it" ab suite.toml --resume killed.json
expect_bad "is a directory" ab --resume "$work"

echo "== 3: ab --resume finishes it, keeping what finished"
set +e
"$opbench" ab --resume killed.json --no-progress > resume.log 2>&1
rc=$?
set -e
cat resume.log
# 1: only where a case was starved on a busy machine (not compared), never failed.
[ $rc -eq 0 ] || { [ $rc -eq 1 ] && ! grep -qE " (failed|skipped):" resume.log; } || fail "ab --resume exited $rc"
grep -q "opbench ab: resuming " resume.log || fail "no resume line"
[ ! -e killed.json.journal ] || fail "the journal is left beside the complete set"
python3 - killed.json before.journal "$cases" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
ob = s["context"]["opbench"]
assert ob["complete"] is True, "the resumed set is not complete"
assert ob.get("resumed_at"), "the set does not say it was resumed"
names = {e["run_name"] for e in s["benchmarks"]}
cases = int(sys.argv[3])
assert len(names) == 2 * cases, (len(names), sorted(names))
# The cases whose two sides the journal held before the resume: their
# entries are in the set as they were journaled (pairs included).
lines = [json.loads(l) for l in open(sys.argv[2]) if l.endswith("\n")]
journaled = {l["case"]: l["entries"] for l in lines if "case" in l}
def side_of(name): return name.replace("/be:naive@a", "/be:*").replace("/be:naive@b", "/be:*")
by_case = {}
for name in journaled:
    by_case.setdefault(side_of(name), []).append(name)
whole = [n for sides in by_case.values() if len(sides) == 2 for n in sides]
assert len(whole) >= 4, ("fewer than two cases finished before the kill", list(journaled))
key = lambda e: (e["name"], e.get("repetition_index"), e.get("run_type"))
in_set = {key(e): e for e in s["benchmarks"]}
kept = 0
for name in whole:
    for e in journaled[name]:
        got = in_set.get(key(e))
        assert got is not None, ("a journaled entry is missing", key(e))
        assert got.get("pair") == e.get("pair"), ("a pair changed", key(e), got.get("pair"), e.get("pair"))
        assert got.get("real_time") == e.get("real_time"), ("measured again", key(e))
        kept += "pair" in e
print(f"{len(whole) // 2} cases kept from the journal, {kept} paired entries unchanged")
PY
grep -qE "^opbench ab: $cases cases, naive@a -> naive@b" resume.log || fail "the summary does not count every case"
"$opbench" compare killed.json > compare.log 2>&1 || { cat compare.log; fail "compare cannot read the resumed set"; }

echo "== 4: SIGUSR1 stops ab and run with a partial set and the journal"
start_until 2 usr1.json usr1.log "${ab_args[@]}" --out usr1.json
kill -USR1 "$pid"
stop "$pid"
cat usr1.log
[ $rc -eq 138 ] || fail "ab after SIGUSR1 exited $rc, not 138"
grep -q "SIGUSR1: stopping" usr1.log || fail "no SIGUSR1 message"
grep -q "opbench ab --resume usr1.json" usr1.log || fail "the interrupt message does not name ab --resume"
! grep -qF "opbench run --resume" usr1.log || fail "an ab run's messages name run --resume"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["context"]["opbench"]["complete"] is False' usr1.json ||
  fail "no incomplete set after SIGUSR1"
[ -f usr1.json.journal ] || fail "no journal after SIGUSR1"
# The refusal of a plain run over it names `run --resume`; that works too.
set +e
"$opbench" run --resume usr1.json --no-progress > usr1-resume.log 2>&1
rc=$?
set -e
cat usr1-resume.log
[ $rc -eq 0 ] || { [ $rc -eq 1 ] && ! grep -qE " (failed|skipped):" usr1-resume.log; } ||
  fail "run --resume on an ab set exited $rc"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["context"]["opbench"]["complete"] is True and "paired" in s["context"]["opbench"]
assert len({e["run_name"] for e in s["benchmarks"]}) == 2 * int(sys.argv[2])' usr1.json "$cases" ||
  fail "run --resume did not finish the ab set"

start_until 1 run-usr1.json run-usr1.log run suite.toml --out run-usr1.json --no-progress --repetitions 3
kill -USR1 "$pid"
stop "$pid"
cat run-usr1.log
[ $rc -eq 138 ] || fail "run after SIGUSR1 exited $rc, not 138"
[ -s run-usr1.json ] || fail "run after SIGUSR1 left an empty set"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["context"]["opbench"]["complete"] is False' \
  run-usr1.json || fail "run after SIGUSR1: not an incomplete set"

echo "== 5: ab --case-timeout fails a hung side's case"
mkdir -p fault && cp "$fault" fault/a.so && cp "$fault" fault/b.so
cat > fault/hang.toml <<'TOML'
[suite]
name = "ab-hang"
[defaults]
backends = ["fault"]
dtypes = ["f32"]
[[case]]
op = "add"
rows = 13
cols = 64
TOML
set +e
OPBENCH_FAULT=hang OPBENCH_FAULT_ROWS=13 "$opbench" ab fault/hang.toml --plugin fault@a=fault/a.so \
  --plugin fault@b=fault/b.so --pairs 6 --seconds 0.002 --case-timeout 2 --out hang.json > hang.log 2>&1
rc=$?
set -e
cat hang.log
[ $rc -eq 1 ] || fail "ab with a hung side exited $rc, not 1"
grep -q "timed out after 2 s" hang.log || fail "the hung case does not say it timed out after 2 s"
expect_bad "--case-timeout: Value -1 not in range" ab fault/hang.toml --case-timeout -1
echo "all ab journal checks passed"
