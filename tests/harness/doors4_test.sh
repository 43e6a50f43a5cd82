#!/usr/bin/env bash
# Issue 44 (doors, round 4) through the real program; each step failed on the
# main before it:
#   1. every reader's -o (compare, report, history, merge, analyze) over the
#      running opbench, with --force: exit 2, the binary untouched;
#   2. a success line echoing a path escapes its control bytes (report -o
#      with an ESC in the name printed the ESC raw; so did merge's);
#   3. `archive prune --keep` -1 and 99999999999999999999: exit 2, not 0;
#   4. a FIFO (and a device) in OPBENCH_PLUGIN_PATH: `list` answers at once,
#      naming it refused (it hung, reading the FIFO);
#   5. a null context.opbench.machine_peaks: report and compare --by machine
#      exit 0 with a page or table (they aborted, exit 134); a subnormal
#      median (5e-324): report exits 0 with a bounded page (it grew without end);
#   6. analyze refuses what compare refuses (no context, schema 99, a `{}`
#      entry), with the same message; validate refuses a suite whose plugins
#      name /etc/passwd, /dev/zero or the suite itself, as run does;
#   7. a poisoned machine cache (1e308 GFLOP/s) is measured again with one
#      line saying why; with no cache directory, `machine` says in one line
#      that the peaks are not cached (it said "cached in " first);
#   8. a copied journal resumed under another name names the set it writes,
#      and a duplicated journal line is counted once;
#   9. a `run` set records each plugin's path, as `ab` sets do.
# usage: doors4_test.sh SOURCE_ROOT OPBENCH NAIVE_PLUGIN FAULTWRAP_PLUGIN
set -euo pipefail
src=$1 opbench=$2 naive=$3 faultwrap=$4
suite=$src/tests/harness/paired.toml
work=$(mktemp -d /tmp/opbench-doors4-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
. "$src/tests/harness/e2e_lib.sh" # fail, expect_bad
cd "$work"
export OPBENCH_PLUGIN_PATH=$naive OPBENCH_CACHE_DIR=$work/cache
fast=(--no-progress --verify off --min-time 0.001 --repetitions 2)

"$opbench" run "$suite" --backends naive "${fast[@]}" --out s1.json > run.out 2> run.err ||
  { cat run.err; fail "the first run failed"; }

echo "== 1: no reader's -o --force replaces the running opbench"
cp "$opbench" "$work/opbench" && chmod +x "$work/opbench"
sum=$(md5sum < "$work/opbench")
opbench_orig=$opbench opbench=$work/opbench # a regression replaces the copy
mkdir -p arch
"$opbench" archive arch s1.json > /dev/null
expect_bad "the opbench executable running" compare s1.json s1.json -o "$work/opbench" --force
expect_bad "the opbench executable running" report s1.json -o "$work/opbench" --force
expect_bad "the opbench executable running" history arch --suite paired-e2e -o "$work/opbench" --force
expect_bad "the opbench executable running" merge s1.json -o "$work/opbench" --force
expect_bad "the opbench executable running" analyze s1.json -o "$work/opbench" --force
[ "$(md5sum < "$work/opbench")" = "$sum" ] || fail "a reader replaced the opbench binary"
opbench=$opbench_orig

echo "== 2: success lines escape control bytes"
"$opbench" report s1.json -o "$work/c"$'\e'"[31mx.html" > report.out 2> report.err || { cat report.err; fail "report"; }
grep -qF 'c\x1b[31mx.html' report.err || { cat -v report.err; fail "report's success line did not escape the ESC"; }
! grep -q $'\e' report.err || fail "report's success line printed an ESC raw"

echo "== 3: archive prune --keep is bounded"
expect_bad "--keep" archive prune arch --keep -1
expect_bad "--keep" archive prune arch --keep 99999999999999999999
[ -f arch/index.json ] || fail "a refused prune touched the archive"

echo "== 4: a FIFO or a device in OPBENCH_PLUGIN_PATH is refused, never opened"
mkfifo "$work/opbench-backend-fifo.so"
set +e
OPBENCH_PLUGIN_PATH="$naive:$work/opbench-backend-fifo.so:/dev/zero" timeout 20 "$opbench" list > list.out 2>&1
rc=$?
set -e
[ $rc -ne 124 ] || fail "list hung on a FIFO in OPBENCH_PLUGIN_PATH"
tr -s '\n ' '  ' < list.out > list.joined # `list` wraps its lines at 100 columns
grep -qF "opbench-backend-fifo.so: is a FIFO, not a shared library file; not opened" list.joined ||
  { cat list.out; fail "list did not say why the FIFO was refused"; }
grep -qF "/dev/zero: is a character device" list.joined || { cat list.out; fail "list did not refuse /dev/zero"; }

echo "== 5: report and --by machine on a null machine_peaks and a subnormal median"
python3 - s1.json <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["context"]["opbench"]["machine_peaks"] = None
json.dump(s, open("null-peaks.json", "w"))
s = json.load(open(sys.argv[1]))
for e in s["benchmarks"]:
    if e.get("run_type", "iteration") == "iteration" and "real_time" in e:
        e["real_time"] = e["cpu_time"] = 5e-324
        break
json.dump(s, open("subnormal.json", "w"))
EOF
"$opbench" report null-peaks.json -o null.html 2> report.err || { cat report.err; fail "report on null machine_peaks"; }
"$opbench" compare s1.json null-peaks.json --by machine > bymachine.out 2> bymachine.err ||
  { cat bymachine.err; fail "compare --by machine on null machine_peaks"; }
set +e
# A time limit, not a memory one: ulimit -v stops AddressSanitizer's shadow
# memory from being mapped in CI's sanitizer stage.
timeout 60 "$opbench" report subnormal.json -o subnormal.html 2> sub.err
rc=$?
set -e
[ $rc -eq 0 ] || { cat sub.err; fail "report on a 5e-324 median exited $rc"; }
[ "$(stat -c %s subnormal.html)" -lt $((4 * $(stat -c %s null.html) + 1000000)) ] ||
  fail "report's page for a 5e-324 median is out of proportion"

echo "== 6: analyze refuses what compare refuses"
python3 - s1.json <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
json.dump({"benchmarks": s["benchmarks"]}, open("no-context.json", "w"))
t = json.loads(json.dumps(s)); t["context"]["opbench"]["schema_version"] = 99
json.dump(t, open("schema99.json", "w"))
t = json.loads(json.dumps(s)); t["benchmarks"].append({})
json.dump(t, open("empty-entry.json", "w"))
EOF
for bad in no-context.json schema99.json empty-entry.json; do
  set +e
  "$opbench" compare "$bad" s1.json > /dev/null 2> compare.err
  set -e
  why=$(sed -n 's/^opbench[a-z ]*: //p' compare.err | head -1)
  [ -n "$why" ] || { cat compare.err; fail "compare did not refuse $bad"; }
  expect_bad "$why" analyze "$bad"
done

echo "== 6b: validate refuses the plugin files run refuses"
for bad in /etc/passwd /dev/zero SELF; do
  target=$bad
  [ "$bad" = SELF ] && target=$work/plugsuite.toml
  { echo '[suite]'; echo 'name = "plug"'; echo '[defaults]'
    echo "plugins = [\"naive@x=$target\"]"; echo 'backends = ["naive@x"]'
    echo '[[case]]'; echo 'op = "add"'; echo 'rows = 4'; echo 'cols = 8'; } > plugsuite.toml
  set +e
  "$opbench" run plugsuite.toml "${fast[@]}" --no-out > /dev/null 2> run-plug.err
  set -e
  why=$(sed -n 's/^opbench run: //p' run-plug.err | head -1)
  [ -n "$why" ] || { cat run-plug.err; fail "run did not refuse plugin $bad"; }
  expect_bad "opbench validate: $why" validate plugsuite.toml
done

echo "== 7: the machine cache: a poisoned one is measured again; none is said once"
"$opbench" machine > /dev/null 2>&1
cache=$(ls "$work"/cache/machine-*.json)
python3 - "$cache" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1])); c["one_thread"]["f32_gflops"] = 1e308
json.dump(c, open(sys.argv[1], "w"))
EOF
"$opbench" machine > machine.out 2> machine.err
grep -q "the cached machine peaks were not used (the f32 peak on 1 thread(s) is 1e+308" machine.err ||
  { cat machine.err; fail "a 1e308 cache was not measured again with its reason"; }
! grep -q "e+308" machine.out || fail "machine printed the poisoned figure"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['one_thread']['f32_gflops'] < 1e6" "$cache" ||
  fail "the poisoned cache was not rewritten"
env -u HOME -u XDG_CACHE_HOME -u OPBENCH_CACHE_DIR "$opbench" machine > nocache.out 2> nocache.err
grep -q "not cached (no cache directory" nocache.err || { cat nocache.err; fail "no line saying not cached"; }
! grep -q "cached in" nocache.out nocache.err || fail "said 'cached in' with no cache"

echo "== 8: resume names the set it writes and counts each case once"
set +e
OPBENCH_FAULT=abort OPBENCH_PLUGIN_PATH=$faultwrap "$opbench" run "$src/tests/harness/workload_fault.toml" \
  --isolate none --no-progress --verify off --out "$work/f.json" > f.log 2>&1
set -e
[ -e f.json.journal ] || { cat f.log; fail "the faulting run left no journal"; }
mv f.json.journal x.json.journal
rm -f f.json
python3 - x.json.journal <<'EOF2'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
first = next(l for l in lines[1:] if '"case"' in l)  # a finished case's line, twice
open(sys.argv[1], "a").write(first + "\n")
EOF2
distinct=$(python3 -c "
import json, sys
print(len({json.loads(l)['case'] for l in open(sys.argv[1]).read().splitlines()[1:] if '\"case\"' in l}))" \
  x.json.journal)
set +e
OPBENCH_PLUGIN_PATH=$faultwrap "$opbench" run --resume x.json.journal > resume.out 2> resume.err
set -e
grep -qF "resuming $work/x.json ($distinct case x backend finished)" resume.err ||
  { cat resume.err; fail "the resume line did not name x.json with $distinct distinct cases"; }
grep -q "(the journal was written for .*f.json)" resume.err || { cat resume.err; fail "no word of f.json"; }

echo "== 9: a run set records each plugin's path"
python3 - s1.json "$naive" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))["context"]["opbench"]["backends"]
paths = [v.get("path") for v in (b.values() if isinstance(b, dict) else b)]
assert sys.argv[2] in paths, f"no plugin path in the set's backends: {paths}"
EOF
echo "doors4: all passed"
