#!/usr/bin/env bash
# Issue 43, item 0: `opbench ab --commit-under-test` through the real program.
#   1. ab --commit-under-test SHA records {"commit": SHA, "source":
#      "--commit-under-test"} as the set's context.opbench.code_under_test;
#   2. without the option, CI's CI_COMMIT_SHA is recorded (source named),
#      and the option wins over it;
#   3. with neither, the set has no code_under_test (old readers unchanged);
#   4. archived, the index row carries the set's commit_under_test, and
#      `history --format json` names each run by it.
# No timing is asserted: it must pass beside CPU hogs.
# usage: ab_commit_under_test_test.sh SOURCE_ROOT OPBENCH NAIVE_PLUGIN
set -euo pipefail
src=$1 opbench=$2 naive=$3
work=$(mktemp -d /tmp/opbench-ab-cut-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
. "$src/tests/harness/e2e_lib.sh" # fail
cd "$work"
unset GITHUB_SHA CI_COMMIT_SHA
export OPBENCH_PLUGIN_PATH=$naive

cat > suite.toml <<'TOML'
[suite]
name = "ab-cut"
[defaults]
backends = ["naive"]
dtypes = ["f32"]
warmup = 1
[[case]]
op = "add"
rows = 8
cols = 64
TOML

# ab_set OUT [ARGS...]: a small paired run of two copies of the naive plugin;
# exit 1 only where cases starved on a busy machine (named on their line).
ab_set() {
  local out=$1 rc=0
  shift
  "$opbench" ab suite.toml --plugin naive@a="$naive" --plugin naive@b="$naive" --pairs 6 --seconds 0.002 \
    --threshold 0.5 --no-progress --out "$out" "$@" > "$out.log" 2>&1 || rc=$?
  [ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -qE "^  [0-9]+ not compared: [0-9]+ starved$" "$out.log"; } ||
    { cat "$out.log"; fail "ab $* exited $rc"; }
}
# cut_of SET: the set's code_under_test as JSON ("null" without one).
cut_of() {
  python3 -c 'import json, sys
print(json.dumps(json.load(open(sys.argv[1]))["context"]["opbench"].get("code_under_test"), sort_keys=True))' "$1"
}

echo "== 1: --commit-under-test"
ab_set given.json --commit-under-test c0ffee0123456789
[ "$(cut_of given.json)" = '{"commit": "c0ffee0123456789", "source": "--commit-under-test"}' ] ||
  fail "ab --commit-under-test recorded $(cut_of given.json)"

echo "== 2: CI_COMMIT_SHA, and the option over it"
CI_COMMIT_SHA=abcdef0987 ab_set env.json
[ "$(cut_of env.json)" = '{"commit": "abcdef0987", "source": "CI_COMMIT_SHA"}' ] ||
  fail "ab under CI_COMMIT_SHA recorded $(cut_of env.json)"
CI_COMMIT_SHA=abcdef0987 ab_set both.json --commit-under-test 1234567aaaa
[ "$(cut_of both.json)" = '{"commit": "1234567aaaa", "source": "--commit-under-test"}' ] ||
  fail "--commit-under-test did not win over CI_COMMIT_SHA: $(cut_of both.json)"

echo "== 3: neither"
ab_set none.json
[ "$(cut_of none.json)" = null ] || fail "ab without a commit under test recorded $(cut_of none.json)"

echo "== 4: archived: the index and history name the commit under test"
"$opbench" archive arch given.json env.json > archive.log 2>&1 || { cat archive.log; fail "archive failed"; }
python3 - arch/index.json <<'PY' || fail "the index lacks the sets' commit_under_test"
import json, sys
rows = json.load(open(sys.argv[1]))["sets"]
assert sorted(r.get("commit_under_test") for r in rows) == ["abcdef0987", "c0ffee0123456789"], rows
PY
"$opbench" history arch --suite ab-cut --format json > history.json 2> history.err ||
  { cat history.err; fail "history failed"; }
python3 - history.json <<'PY' || fail "history does not name the runs by their commit under test"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert sorted(r.get("commit_under_test") for r in runs) == ["abcdef0987", "c0ffee0123456789"], runs
PY
echo "ok"
