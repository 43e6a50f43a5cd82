#!/usr/bin/env bash
# scripts/slurm-run.sh against a real one-node Slurm. In CI, .ci/run starts
# that Slurm (scripts/slurm-local.sh start DIR) before the tests, names DIR in
# OPBENCH_SLURM_DIR, and stops it at its end: the test uses it and leaves it
# running, and fails if it is not there. Without OPBENCH_SLURM_DIR (a
# developer's `meson test`) the test starts its own in a temporary directory
# and stops it at the end; skipped (exit 77, with the reason) where Slurm is
# not installed or cannot start, never passed without it. Checks:
#   1. quick.toml as 3 shards (naive, short sampling): every shard job and the
#      merge job complete; the merged set's case x backend list and
#      repetitions equal an unsharded run's; every entry passed and verified;
#      each shard's attempts file names the node and this machine's id;
#      compare.py reads the merged set; a shard stamped with another machine
#      is refused by merge naming it, and accepted with --allow-mixed-machines.
#   2. scancel of a running shard (after some of its cases finished): the
#      merge job, which runs after every shard ends, fails naming that shard;
#      the shard requeued (`scontrol requeue`, SLURM_RESTART_COUNT 1)
#      resumes from its journal; a merge started while it is still pending
#      or running is refused naming it; the merge submitted again
#      (slurm-run.sh --merge) succeeds, the cases that had finished before
#      the cancel are in the merged set unchanged (not measured again), and
#      no case x backend is there twice.
#   3. --per-node-type with the node's two features as two node types (one
#      filtered op, one shard each): both merge and `compare --by machine`
#      writes its table, each column named after its node type.
#   0. (first) a --benchmark_filter that leaves shard 1 of 3 no case is
#      refused with exit 2 before anything is submitted or written, naming
#      the shard and the filter, and the shard count it advises fits.
#   2. also: a merge started while shard 2 runs and shard 3 has no file
#      names shard 2/3 as still running and shard 3/3 as missing.
# usage: slurm_test.sh SOURCE_ROOT OPBENCH
set -euo pipefail
src=$1 opbench=$2
started=$SECONDS
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

for p in sbatch scontrol squeue munged slurmctld slurmd; do
  command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] ||
    skip "$p is not installed (scripts/install-deps.sh --test installs slurm-wlm and munge)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root to start jobs; this test runs as $(id -un)"

work=$(mktemp -d /tmp/opbench-slurm-XXXXXX)
cluster=${OPBENCH_SLURM_DIR:-} # a Slurm started by .ci/run, else our own
cleanup() {
  [ -n "${OPBENCH_SLURM_DIR:-}" ] || "$src/scripts/slurm-local.sh" stop "$cluster" >/dev/null 2>&1 || true
  if [ "${keep:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
if [ -n "$cluster" ]; then
  [ -f "$cluster/slurm.conf" ] || fail "OPBENCH_SLURM_DIR=$cluster holds no slurm.conf (scripts/slurm-local.sh start DIR makes one)"
  export SLURM_CONF=$cluster/slurm.conf
  scontrol ping >"$work/ping.log" 2>&1 && grep -q "is UP" "$work/ping.log" ||
    fail "OPBENCH_SLURM_DIR=$cluster names no running Slurm (scontrol ping: $(tr '\n' ' ' <"$work/ping.log"))"
  echo "slurm: using the one-node Slurm in $cluster (started by .ci/run)"
else
  cluster=$work/cluster
  if ! conf=$("$src/scripts/slurm-local.sh" start "$cluster" 2>"$work/start.log"); then
    cat "$work/start.log" >&2
    skip "a one-node Slurm did not start here (above: scripts/slurm-local.sh's reason)"
  fi
  eval "$conf" # export SLURM_CONF=...
  echo "slurm: started a one-node Slurm in $cluster, up in $((SECONDS - started)) s"
fi
keep=1 # from here a failure keeps $work (logs, sets) for a look

machine=$("$opbench" machine --id)
suite=$src/suites/quick.toml
# Short sampling: the checks are about which cases land where, not timings.
quick=(--backends naive --warmup 1 --min-time 0.002 --max-time 0.01 --min-samples 2 --repetitions 3)

state() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
# Waits until job (or every task of an array) ID has ended; prints its state(s).
wait_job() {
  local id=$1 limit=${2:-300} t s
  for t in $(seq 1 $((limit * 4))); do
    s=$(state "$id")
    if [ -n "$s" ] && ! grep -qE 'PENDING|RUNNING|COMPLETING|CONFIGURING|REQUEUED|RESIZING|SUSPENDED' <<<"$s"; then
      echo "$s"
      return 0
    fi
    sleep 0.25
  done
  fail "job $id still '$s' after $limit s ($(squeue 2>&1 | tail -n 5))"
}
# The run names of a set, sorted: its case list (a starved entry is one
# entry, not one per repetition, so the case list is what two runs share on
# a busy machine).
cases() {
  python3 - "$@" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    for name in sorted({e["run_name"] for e in json.load(open(path))["benchmarks"]
                        if e.get("run_type", "iteration") == "iteration"}):
        print(name)
EOF
}
# "run_name repetition" of each entry, sorted: what a set measured.
entries() {
  python3 - "$@" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    for e in json.load(open(path))["benchmarks"]:
        if e.get("run_type", "iteration") == "iteration":
            print(e["run_name"], e.get("repetition_index", 0))
EOF
}

# Every entry of the set passed and was verified (a case cut short by a
# signal must be abandoned and run again, never recorded as failed). A
# `starved` entry (verified, but its threads waited for a CPU on a busy
# machine: docs/measurement.md) is an outcome of the machine's load, not of
# Slurm, and counts as measured.
all_verified() {
  python3 - "$1" <<'EOF' || fail "not every entry of $1 passed and was verified"
import json, sys
# Each case's first iteration entry holds its per-case fields (results/README.md).
firsts = {}
for e in json.load(open(sys.argv[1]))["benchmarks"]:
    if e.get("run_type", "iteration") == "iteration":
        firsts.setdefault(e["run_name"], e)
bad = [e["name"] for e in firsts.values()
       if e.get("status") not in ("passed", "starved") or e.get("verified") is not True]
if bad: sys.exit("not passed and verified: " + ", ".join(bad[:5]))
EOF
}

# --- 0. a filter that empties one shard is refused before anything is submitted ----
# Issue 44: the pre-check listed only the last shard, so a filter that left
# shard 1 of 3 no case was submitted and shard 1's job failed. The filter
# here keeps the first entry of shards 2/3 and 3/3 only (each name anchored,
# its regex characters made `.`).
first_entry() {
  local names
  names=$("$opbench" run "$suite" --shard "$1" --list "${quick[@]}")
  printf '%s\n' "$names" | head -n 1 | sed 's/[][().*+?{}|^$\\]/./g'
}
filter="^($(first_entry 2/3)|$(first_entry 3/3))\$"
"$opbench" run "$suite" --shard 3/3 --list "${quick[@]}" --benchmark_filter="$filter" >/dev/null ||
  fail "the filter $filter keeps no case of shard 3/3: the check below would not test shard 1"
jobs_before=$(squeue -h | wc -l)
rc=0
"$src/scripts/slurm-run.sh" "$suite" --shards 3 --out "$work/empty1" --opbench "$opbench" --time=10 -- \
  "${quick[@]}" --benchmark_filter="$filter" >"$work/empty1.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a filter that empties shard 1/3 gave exit $rc, not 2: $(cat "$work/empty1.log")"
grep -qF -- "--benchmark_filter=$filter leaves shard 1/3 with no case" "$work/empty1.log" ||
  fail "the refusal does not name shard 1/3 and the filter: $(cat "$work/empty1.log")"
[ ! -e "$work/empty1" ] && [ "$(squeue -h | wc -l)" -eq "$jobs_before" ] ||
  fail "slurm-run.sh submitted or wrote something before refusing the filter: $(squeue 2>&1)"
# Its advice works: every shard of the count it names keeps a case.
k=$(sed -n 's/.*use --shards \([0-9]*\) .*/\1/p' "$work/empty1.log")
[ -n "$k" ] || fail "the refusal names no shard count that works: $(cat "$work/empty1.log")"
for i in $(seq 1 "$k"); do
  "$opbench" run "$suite" --shard "$i/$k" --list "${quick[@]}" --benchmark_filter="$filter" >/dev/null 2>&1 ||
    fail "the advised --shards $k leaves shard $i/$k with no case"
done
echo "0. ok: a filter emptying shard 1/3 refused before submitting (exit 2; --shards $k advised and checked)"

# --- 1. three shards, merged ------------------------------------------------------
"$opbench" run "$suite" "${quick[@]}" --no-progress --out "$work/whole.json" >"$work/whole.log" 2>&1 ||
  fail "the unsharded run failed: $(tail -n 5 "$work/whole.log")"
read -r array merge merged < <("$src/scripts/slurm-run.sh" "$suite" --shards 3 --out "$work/ok" --parsable \
  --opbench "$opbench" --time=10 -- "${quick[@]}")
echo "1. job array $array, merge job $merge -> $merged"
[ "$(wait_job "$merge")" = COMPLETED ] || fail "merge job $merge: $(state "$merge"); $(cat "$work/ok/logs/merge.log")"
[ "$(state "$array")" = COMPLETED ] || fail "shard jobs of $array: $(state "$array")"
diff <(cases "$work/whole.json") <(cases "$merged") >"$work/diff.txt" ||
  fail "the merged set's cases differ from the unsharded run's (< whole, > merged): $(head -n 20 "$work/diff.txt")"
n=$(cases "$merged" | wc -l)
[ "$n" -ge 20 ] || fail "the merged set has only $n cases"
all_verified "$merged"
for i in 1 2 3; do
  grep -q "node=opbench-node machine=$machine job=${array}_$i" "$work/ok/shard-$i.attempts" ||
    fail "shard $i's attempts file does not record the node and machine $machine: $(cat "$work/ok/shard-$i.attempts")"
done
/usr/bin/python3 /usr/share/benchmark/compare.py benchmarks "$work/whole.json" "$merged" >"$work/compare_py.txt" 2>&1 ||
  fail "compare.py cannot read the merged set: $(tail -n 5 "$work/compare_py.txt")"
# Another machine's shard (its CPU model changed, as on another node type).
python3 - "$work/ok/shard-2.json" "$work/other-2.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["context"]["opbench"]["machine"]["cpu_model"] = "Another CPU"
s["context"]["opbench"]["machine"].pop("id", None)
json.dump(s, open(sys.argv[2], "w"))
EOF
if "$opbench" merge "$work/ok/shard-1.json" "$work/other-2.json" "$work/ok/shard-3.json" -o "$work/mixed.json" \
  2>"$work/mixed.log"; then fail "shards of two machines merged without --allow-mixed-machines"; fi
grep -q "shard 2/3 ($work/other-2.json) was measured on machine another-cpu" "$work/mixed.log" ||
  fail "the mixed-machine refusal does not name shard 2/3: $(cat "$work/mixed.log")"
"$opbench" merge "$work/ok/shard-1.json" "$work/other-2.json" "$work/ok/shard-3.json" -o "$work/mixed.json" \
  --allow-mixed-machines 2>/dev/null || fail "--allow-mixed-machines did not merge"
echo "1. ok: $n cases, as the unsharded run; all verified ($((SECONDS - started)) s)"

# --- 2. a shard cancelled mid-run, then requeued ---------------------------------
# Longer samples than 1.: shard 2 must still be running after its first cases
# are journaled. --exclusive (the default) runs the shards one at a time here.
slow=(--backends naive --warmup 1 --min-time 0.15 --max-time 0.3 --min-samples 2 --repetitions 3)
read -r array merge merged < <("$src/scripts/slurm-run.sh" "$suite" --shards 3 --out "$work/cancel" --parsable \
  --opbench "$opbench" --time=10 -- "${slow[@]}")
echo "2. job array $array, merge job $merge"
journal=$work/cancel/shard-2.json.journal
for t in $(seq 1 1200); do
  done_cases=$(grep -c '"case"' "$journal" 2>/dev/null || true)
  [ "$(state "${array}_2")" = RUNNING ] && [ "${done_cases:-0}" -ge 2 ] && break
  sleep 0.1
done
[ "$(state "${array}_2")" = RUNNING ] || fail "shard 2 is $(state "${array}_2"), not running, with $journal"
# Issue 44: a merge started now, of the shards that have files (shard 2's is
# the empty file its run reserved; shard 3 has none yet), said only
# "shard-2.json: is empty; expected a JSON file". It names shard 2 as
# still running and shard 3 as missing.
if "$opbench" merge "$work"/cancel/shard-{1,2}.json -o "$work/early-run.json" 2>"$work/early-run.log"; then
  fail "a merge while shard 2 runs succeeded"
fi
grep -qF "shard 2/3 ($work/cancel/shard-2.json) is incomplete: still running" "$work/early-run.log" ||
  fail "the merge while shard 2 runs does not name it as running: $(cat "$work/early-run.log")"
grep -qF "shard 3/3 missing" "$work/early-run.log" ||
  fail "the merge while shard 2 runs does not name shard 3/3 as missing: $(cat "$work/early-run.log")"
scancel "${array}_2"
[ "$(wait_job "$merge")" = FAILED ] || fail "the merge ran to $(state "$merge") with shard 2 cancelled"
grep -q "shard 2/3 ($work/cancel/shard-2.json) is incomplete" "$work/cancel/logs/merge.log" ||
  fail "the merge's refusal does not name shard 2/3: $(cat "$work/cancel/logs/merge.log")"
# Its advice is what this test does next (requeue, then --merge).
grep -qF "\`scontrol requeue ${array}_I\` (it resumes from its journal), then \`scripts/slurm-run.sh --merge" \
  "$work/cancel/logs/merge.log" || fail "the merge job does not advise the requeue: $(cat "$work/cancel/logs/merge.log")"
[ "$(state "${array}_2")" = CANCELLED ] || fail "shard 2 is $(state "${array}_2") after scancel"
cp "$work/cancel/shard-2.json" "$work/partial-2.json"
kept=$(entries "$work/partial-2.json" | wc -l)
[ "$kept" -ge 2 ] || fail "the cancelled shard's set kept $kept entries"

scontrol requeue "${array}_2"
# Slurm holds a requeued job back about two minutes; the test does not wait.
scontrol update jobid="${array}_2" StartTime=now
# A merge started before every shard is done: shard 2 is pending or running.
if "$opbench" merge "$work"/cancel/shard-{1,2,3}.json -o "$work/early.json" 2>"$work/early.log"; then
  fail "a merge while shard 2 is $(state "${array}_2") succeeded"
fi
grep -q "shard 2/3 .* is incomplete" "$work/early.log" || fail "the early merge does not name shard 2/3: $(cat "$work/early.log")"
read -r _ _ _ remerge _ < <("$src/scripts/slurm-run.sh" --merge "$work/cancel")
[ "$(wait_job "$remerge")" = COMPLETED ] || fail "the merge after the requeue: $(state "$remerge"); $(tail -n 5 "$work/cancel/logs/merge.log")"
[ "$(state "${array}_2")" = COMPLETED ] || fail "the requeued shard 2: $(state "${array}_2")"
grep -q "attempt 2 (SLURM_RESTART_COUNT=1)" "$work/cancel/logs/shard-2.log" ||
  fail "shard 2's log has no second attempt: $(cat "$work/cancel/logs/shard-2.log")"
grep -q "shard 2: resuming from $journal" "$work/cancel/logs/shard-2.log" || fail "shard 2 did not resume from its journal"
[ "$(grep -c '^attempt=' "$work/cancel/shard-2.attempts")" -eq 2 ] || fail "shard 2.attempts: $(cat "$work/cancel/shard-2.attempts")"
diff <(cases "$work/whole.json") <(cases "$merged") >"$work/diff.txt" ||
  fail "after the requeue the merged cases differ from the unsharded run's: $(head -n 20 "$work/diff.txt")"
[ -z "$(entries "$merged" | sort | uniq -d)" ] || fail "an entry is in the merged set twice"
all_verified "$merged"
python3 - "$work/partial-2.json" "$merged" <<'EOF' || fail "a case that finished before the cancel was measured again"
import json, sys
merged = json.load(open(sys.argv[2]))["benchmarks"]
for e in json.load(open(sys.argv[1]))["benchmarks"]:
    if e not in merged: sys.exit(f"{e['name']}: in the cancelled shard's set, not the same in the merged one")
EOF
echo "2. ok: cancel refused naming shard 2/3; requeued shard kept $kept entries and resumed ($((SECONDS - started)) s)"

# --- 3. one run per node type, compared ---------------------------------------------
one=(--backends naive --warmup 1 --min-time 0.002 --max-time 0.01 --min-samples 2 --repetitions 3
  --benchmark_filter=softmax)
"$src/scripts/slurm-run.sh" "$suite" --per-node-type --constraint=typea --constraint=typeb --out "$work/types" \
  --parsable --opbench "$opbench" --time=10 -- "${one[@]}" >"$work/types.txt"
cmp_job=$(sed -n 's/^compare \([0-9]*\) .*/\1/p' "$work/types.txt")
[ "$(wait_job "$cmp_job")" = COMPLETED ] || fail "compare job: $(state "$cmp_job"); $(cat "$work/types/compare.log")"
for t in typea typeb; do [ -s "$work/types/$t/merged.json" ] || fail "node type $t: no merged set"; done
grep -q "softmax" "$work/types/compare.txt" || fail "compare --by machine printed no softmax row: $(cat "$work/types/compare.txt")"
# Issue 44: both sets and columns were named "merged" (each type's set is TYPE/merged.json).
grep -qw "typea" "$work/types/compare.txt" && grep -qw "typeb" "$work/types/compare.txt" &&
  ! grep -qw "merged" "$work/types/compare.txt" ||
  fail "compare --by machine does not name each column after its node type: $(cat "$work/types/compare.txt")"
echo "3. ok: two node types merged and compared, a column per node type"

keep=0
echo "PASS in $((SECONDS - started)) s"
