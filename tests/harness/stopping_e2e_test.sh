#!/usr/bin/env bash
# Issue 32: how a run stops, and what it echoes, through the real program
# (isolation.toml: naive and the fault plugin, whose rows = 13 case can hang):
#   1. --case-timeout under --isolate none is refused (exit 2), not ignored;
#   2. one SIGTERM ends an --isolate none run hung in a plugin call: exit 143,
#      the partial set (complete: false) and the journal;
#   3. SIGHUP and SIGQUIT end a run as SIGTERM does: exit 129 / 131, the
#      partial set (not a 0-byte reservation) and the journal;
#   4. past `ulimit -f` a run ends with exit 3 and "File too large" (was
#      killed by SIGXFSZ, exit 153, no message), the journal kept;
#   5. --allow-insecure-plugins is warned about on the console and recorded
#      in context.opbench.insecure_plugins_allowed;
#   6. control characters in a --plugin spec, and in what CLI11's usage
#      errors echo (a bad option value, a missing file), are shown as \xHH.
# No step relies on a sleep being long enough: each waits for a state (a
# journal line, the process's end) with a generous upper bound.
# usage: stopping_e2e_test.sh SOURCE_ROOT OPBENCH FAULT_PLUGIN NAIVE_PLUGIN
set -euo pipefail
src=$1 opbench=$2 fault=$3 naive=$4
suite=$src/tests/harness/isolation.toml
work=$(mktemp -d /tmp/opbench-stopping-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
export OPBENCH_PLUGIN_PATH=$fault
unset OPBENCH_FAULT OPBENCH_FAULT_PHASE OPBENCH_FAULT_ROWS
fail() { echo "FAIL: $*" >&2; exit 1; }
# wait_for SECONDS COMMAND...: poll COMMAND until it succeeds, at most SECONDS
wait_for() {
  local limit=$1
  shift
  for _ in $(seq 1 $((limit * 10))); do
    if "$@"; then return 0; fi
    sleep 0.1
  done
  return 1
}
# ended PID: PID has exited (a zombie until `wait` reaps it counts as ended)
ended() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null) || return 0
  [ -z "$state" ] || [ "$state" = Z ]
}
# finish PID SECONDS: waits for PID's end (at most SECONDS, else fails; the
# trap kills it) and sets `rc` to its exit status
finish() {
  local pid=$1 limit=$2
  wait_for "$limit" ended "$pid" || fail "pid $pid still running ${limit}s after the signal"
  set +e
  wait "$pid"
  rc=$?
  set -e
}
# partial_set FILE: a result set marked incomplete holding the rows = 12 cases
partial_set() {
  python3 - "$1" << 'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["context"]["opbench"]["complete"] is False, "not marked incomplete"
names = {b["name"] for b in s["benchmarks"]}
assert any(n.startswith("add/R:12/C:16/dt:f32/be:naive") for n in names), names
EOF
}
# start_hung NAME ARGS...: a run whose fault case (rows = 13) hangs in
# execute, started in the background; returns once the case before it is
# journaled (the run is then at or in the hang)
start_hung() {
  local name=$1
  shift
  OPBENCH_FAULT=hang "$opbench" run "$suite" --out "$name.json" --no-progress "$@" > "$name.out" 2> "$name.err" &
  pid=$!
  pids+=("$pid")
  wait_for 300 grep -q '"case":"add/R:13/C:16/dt:f32/be:naive"' "$name.json.journal" 2> /dev/null \
    || fail "$name: the run never reached the hanging case"
}

# 1. --case-timeout under --isolate none: refused up front with the reason.
set +e
"$opbench" run "$suite" --isolate none --case-timeout 1 --out none.json > /dev/null 2> none.err
rc=$?
set -e
[ "$rc" = 2 ] || fail "--isolate none --case-timeout: exit $rc, expected 2"
grep -q -- "--case-timeout cannot hold under --isolate none" none.err || fail "no reason given: $(cat none.err)"
[ ! -e none.json ] || fail "--isolate none --case-timeout: reserved none.json before refusing"

# 2. One SIGTERM ends an --isolate none run hung in the plugin.
start_hung inproc --isolate none
kill -TERM "$pid"
finish "$pid" 120
[ "$rc" = 143 ] || fail "--isolate none, one SIGTERM: exit $rc, expected 143"
partial_set inproc.json || fail "--isolate none, SIGTERM: no partial set"
[ -s inproc.json.journal ] || fail "--isolate none, SIGTERM: journal gone"

# 3. SIGHUP and SIGQUIT stop like SIGTERM (--case-timeout keeps the hang
#    longer than any wait here).
for sig in HUP:129 QUIT:131; do
  name=${sig%%:*} status=${sig##*:}
  start_hung "sig$name" --case-timeout 3600
  kill -"$name" "$pid"
  finish "$pid" 120
  [ "$rc" = "$status" ] || fail "SIG$name: exit $rc, expected $status"
  grep -q "SIG$name: stopping" "sig$name.err" || fail "SIG$name: no message: $(cat "sig$name.err")"
  partial_set "sig$name.json" || fail "SIG$name: no partial set ($(stat -c %s "sig$name.json") bytes)"
  [ -s "sig$name.json.journal" ] || fail "SIG$name: journal gone"
done

# 4. A file size limit: EFBIG reported, exit 3 (not SIGXFSZ, 153).
set +e
(ulimit -f 8 && exec "$opbench" run "$suite" --backends naive --out big.json --no-progress > big.out 2> big.err)
rc=$?
set -e
[ "$rc" = 3 ] || fail "ulimit -f: exit $rc, expected 3"
grep -q "File too large" big.err || fail "ulimit -f: no message: $(cat big.err)"
grep -q -- "--resume big.json" big.err || fail "ulimit -f: no resume command: $(cat big.err)"
[ -s big.json.journal ] || fail "ulimit -f: journal gone"

# 5. --allow-insecure-plugins leaves a trace: a warning and the set's context.
mkdir open && cp "$naive" open/naive-copy.so && chmod 0777 open
"$opbench" run "$suite" --backends naive --plugin "naive@open=$work/open/naive-copy.so" --allow-insecure-plugins \
  --benchmark_filter='R:12' --out trust.json --no-progress > trust.out 2> trust.err \
  || fail "--allow-insecure-plugins run failed: $(cat trust.err)"
grep -q "warning: --allow-insecure-plugins loaded $work/open/naive-copy.so: its directory" trust.err \
  || fail "no warning naming the file: $(cat trust.err)"
python3 - trust.json "$work/open/naive-copy.so" << 'EOF' || fail "context.opbench.insecure_plugins_allowed missing"
import json, sys
allowed = json.load(open(sys.argv[1]))["context"]["opbench"]["insecure_plugins_allowed"]
assert len(allowed) == 1 and allowed[0].startswith(sys.argv[2] + ": "), allowed
EOF

# 6. Control characters in a --plugin spec are shown escaped.
set +e
"$opbench" run "$suite" --plugin $'naive@a=\x1b[31mX\rY' > ctl.out 2> ctl.err
rc=$?
set -e
[ "$rc" = 2 ] || fail "--plugin with control characters: exit $rc, expected 2"
grep -qF 'naive@a=\x1b[31mX\x0dY' ctl.err || fail "not escaped: $(od -c ctl.err | head)"
if grep -q $'[\x1b\r]' ctl.err; then fail "raw control characters echoed: $(od -c ctl.err | head)"; fi
for args in "run --min-time 1"$'\x1b[31m'" $suite" "compare x"$'\x1b[31m'".json"; do
  set +e
  # shellcheck disable=SC2086 # split on purpose: each string is a command line
  "$opbench" $args > ctl.out 2> ctl.err
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "'$args': exit $rc, expected 2"
  grep -qF '1\x1b[31m' ctl.err || grep -qF 'x\x1b[31m.json' ctl.err || fail "'$args' not escaped: $(od -c ctl.err | head)"
  if grep -q $'\x1b' ctl.err; then fail "'$args': raw control characters echoed: $(od -c ctl.err | head)"; fi
done
echo "stopping_e2e: all passed"
