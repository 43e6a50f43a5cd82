#!/usr/bin/env bash
# Issue 32 (parts 2 and 3) through the real program: --force never replaces
# an input of the command, --resume is honest, and a live run's journal is
# told from an interrupted one's by its lock, not by its presence.
#   1. --trace/--out over the running opbench (/proc/self/exe), a loaded
#      plugin, `ab --out` over one of its --plugin builds, the archive's
#      index: exit 2 before anything is measured, the file untouched;
#   2. --archive that is a file or /dev/null: exit 2 before the first case;
#   3. a journal held by a live run (flock, here held by flock(1)): a second
#      `--out --force` says a run is still going (not "interrupted"), and
#      --resume of it is refused;
#   4. an interrupted run (faultwrap aborting opbench under --isolate none):
#      --resume DIR exits 2; --resume with --benchmark_* is refused; header
#      args `--trace ../victim --force` are not replayed;
#   5. a journal header edited to `--backends faultwrap` over naive entries:
#      the naive lines are dropped, so the set resumed is of one backend.
# usage: force_inputs_test.sh SOURCE_ROOT OPBENCH NAIVE_PLUGIN FAULTWRAP_PLUGIN
set -euo pipefail
src=$1 opbench=$2 naive=$3 faultwrap=$4
suite=$src/tests/harness/paired.toml
work=$(mktemp -d /tmp/opbench-force-XXXXXX)
holder=
trap '[ -z "$holder" ] || kill "$holder" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
. "$src/tests/harness/e2e_lib.sh" # fail, expect_bad
cd "$work"
fast=(--no-progress --verify off --min-time 0.001 --repetitions 2)

echo "== 1: --force never replaces an input"
cp "$opbench" "$work/opbench" && chmod +x "$work/opbench"
sum=$(md5sum < "$work/opbench")
# A copy, so a regression replaces the copy, not the build's binary; the
# copy finds no build-tree plugins of its own.
opbench_orig=$opbench opbench=$work/opbench
export OPBENCH_PLUGIN_PATH=$naive
expect_bad "the opbench executable running" run "$suite" "${fast[@]}" --out a.json --trace "$work/opbench" --force
expect_bad "the opbench executable running" run "$suite" "${fast[@]}" --out "$work/opbench" --force
[ "$(md5sum < "$work/opbench")" = "$sum" ] || fail "the opbench binary was replaced"
cp "$naive" "$work/opbench-backend-naive.so"
psum=$(md5sum < "$work/opbench-backend-naive.so")
export OPBENCH_PLUGIN_PATH=$work/opbench-backend-naive.so
expect_bad "the loaded plugin naive" run "$suite" "${fast[@]}" --out "$work/opbench-backend-naive.so" --force
expect_bad "the loaded plugin naive" run "$suite" "${fast[@]}" --out a.json --trace "$work/opbench-backend-naive.so" --force
export OPBENCH_PLUGIN_PATH=$naive
cp "$naive" "$work/b.so"
expect_bad "the loaded plugin naive@b" ab "$suite" --plugin naive@a="$naive" --plugin naive@b="$work/b.so" \
  --out "$work/b.so" --force --no-progress
[ "$(md5sum < "$work/opbench-backend-naive.so")" = "$psum" ] || fail "the plugin was replaced"
cmp -s "$naive" "$work/b.so" || fail "ab replaced its own --plugin build"
mkdir -p arch && echo '{"sets": []}' > arch/index.json
expect_bad "the archive this command reads" run "$suite" "${fast[@]}" --out arch/index.json --archive arch --force
expect_bad "the archive this command reads" run "$suite" "${fast[@]}" --out a.json --trace arch/index.json --archive arch --force
[ "$(cat arch/index.json)" = '{"sets": []}' ] || fail "the archive's index was replaced"
opbench=$opbench_orig
unset OPBENCH_PLUGIN_PATH

echo "== 2: --archive checked before the first case"
touch S.toml
expect_bad "is not a directory" run "$suite" "${fast[@]}" --out b.json --archive S.toml
expect_bad "is not a directory" run "$suite" "${fast[@]}" --out c.json --archive /dev/null
[ ! -e b.json ] && [ ! -e c.json ] || fail "a refused --archive left a result set behind"

echo "== 3: a live run's journal (its lock) is not an interrupted run's"
echo x > live.json
echo '{"opbench_journal": 1}' > live.json.journal
# The lock held as a live run holds it; exec: $! is the holder itself.
( flock -x 9; touch held; exec sleep 300 ) 9>> live.json.journal > /dev/null 2>&1 &
holder=$!
while [ ! -e held ]; do sleep 0.05; done
expect_bad "a run still going" run "$suite" "${fast[@]}" --out live.json --force
expect_bad "a run still going holds its journal" run --resume live.json.journal
kill "$holder"; wait "$holder" 2>/dev/null || true; holder=
grep -q "interrupted run" <(set +e; "$opbench" run "$suite" "${fast[@]}" --out live.json --force 2>&1) \
  || fail "an unlocked journal is an interrupted run's"

echo "== 4: honest --resume"
mkdir -p sub && cd sub
set +e
OPBENCH_FAULT=abort OPBENCH_PLUGIN_PATH=$faultwrap "$opbench" run "$src/tests/harness/workload_fault.toml" \
  --isolate none --no-progress --verify off --out "$work/sub/int.json" > int.log 2>&1
rc=$?
set -e
[ $rc -ne 0 ] && [ -e int.json.journal ] || { cat int.log; fail "the faulting run left no journal (exit $rc)"; }
cd "$work"
expect_bad "is a directory" run --resume "$work/sub"
expect_bad "--benchmark_filter=softmax" run --resume sub/int.json --benchmark_filter=softmax
expect_bad "--benchmark_repetitions=1" run --resume sub/int.json --benchmark_repetitions=1
# A header whose args name an output: never replayed. Case lines that are
# not the run's (an unknown case, a negative time, a case carrying another's
# entries, entries cut to one repetition): dropped, said, measured again.
echo victim > victim.txt
python3 - sub/int.json.journal <<'PY'
import copy, json, sys
p = sys.argv[1]
lines = [json.loads(l) for l in open(p).read().splitlines()]
h = lines[0]
h["args"] += ["--trace", "../victim.txt", "--force"]
cases = [l for l in lines if "case" in l and l["status"] == "passed"]
assert cases, "the interrupted run finished no case"
good = cases[0]
unknown = copy.deepcopy(good); unknown["case"] = "nosuch/be:naive"
negative = copy.deepcopy(good); negative["entries"][0]["real_time"] = -5
cut = copy.deepcopy(good); cut["entries"] = cut["entries"][:1]
for e in cut["entries"]: e["repetitions"] = 2
lines += [unknown, negative]
open(p, "w").writelines(json.dumps(l) + "\n" for l in lines)
open(p + ".cut", "w").write(json.dumps(cut) + "\n")
PY
set +e
OPBENCH_PLUGIN_PATH=$faultwrap "$opbench" run --resume sub/int.json > res.log 2>&1
set -e
[ "$(cat victim.txt)" = victim ] || { cat res.log; fail "resume replayed the header's --trace --force over ../victim.txt"; }
grep -qF "journal line dropped (nosuch/be:naive: is not a case of this run)" res.log || { cat res.log; fail "an unknown case was trusted"; }
grep -qF "has real_time -5" res.log || { cat res.log; fail "a negative time was trusted"; }
python3 - sub/int.json "$src/tests/harness/workload_fault.toml" <<'PY' || fail "the resumed set is not whole"
import json, sys
rs = json.load(open(sys.argv[1]))
assert rs["context"]["opbench"]["complete"] is True
names = {e["run_name"] for e in rs["benchmarks"]}
assert not any(n.startswith("nosuch") for n in names), names
assert all(e.get("real_time", 0) >= 0 for e in rs["benchmarks"])
PY

echo "== 5: a header's --backends does not mix backends into the set"
mkdir -p sub5 && cd sub5
set +e
OPBENCH_FAULT=abort OPBENCH_PLUGIN_PATH=$faultwrap "$opbench" run "$src/tests/harness/workload_fault.toml" \
  --isolate none --no-progress --verify off --out "$work/sub5/int.json" > int.log 2>&1
set -e
[ -e int.json.journal ] || { cat int.log; fail "the faulting run left no journal"; }
python3 - int.json.journal <<'PY'
import json, sys
p = sys.argv[1]
lines = [json.loads(l) for l in open(p).read().splitlines()]
assert any(l.get("case", "").endswith("/be:naive") for l in lines), "no naive case finished before the fault"
lines[0]["args"] += ["--backends", "faultwrap"]
open(p, "w").writelines(json.dumps(l) + "\n" for l in lines)
PY
OPBENCH_PLUGIN_PATH=$faultwrap "$opbench" run --resume int.json > res.log 2>&1 || { cat res.log; fail "resume failed"; }
grep -qF "/be:naive: is not a case of this run)" res.log || { cat res.log; fail "naive lines were kept"; }
python3 - int.json <<'PY' || fail "the resumed set mixes backends"
import json, sys
rs = json.load(open(sys.argv[1]))
assert rs["context"]["opbench"]["complete"] is True
backends = {e["backend"] for e in rs["benchmarks"]}
assert backends == {"faultwrap"}, backends
PY
cd "$work"
echo "ok"
