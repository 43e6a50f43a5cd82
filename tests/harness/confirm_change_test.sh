#!/usr/bin/env bash
# scripts/confirm-change.sh (issue 43, item 3) with a fixture build command:
#   1. an archive whose slowdown cases step 20% slower at run 25 of 30
#      (generate_archive.py --plant regression); its commits stand for the
#      two commits of a scratch repository of the slowdown test plugin, the
#      second of which does 3x the work, built in;
#   2. confirm-change.sh builds both with the build command (g++ on the
#      source as committed), runs `opbench ab` on them and records each
#      case's verdict in ARCHIVE/confirmations.json: slower (3x the work is
#      a difference no load hides, as in ci_bench_test.sh);
#   3. `history --changes` shows the verdict beside the change: `confirmed`
#      in its JSON, a line under its console table (within 100 columns);
#      the changes it did not confirm say null;
#   4. bad input: a missing option, a build that fails, a build that writes
#      no plugin, and a broken confirmations.json each say what and where.
# usage: confirm_change_test.sh SOURCE_ROOT OPBENCH SLOWDOWN_PLUGIN
set -euo pipefail
src=$1 opbench=$2 plugin=$3
work=$(mktemp -d /tmp/opbench-confirm-test-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
. "$src/tests/harness/e2e_lib.sh" # fail
export OPBENCH_PLUGIN_PATH=$plugin
unset GITHUB_SHA CI_COMMIT_SHA OPBENCH_TEST_SLOWDOWN
commit_of_run() { python3 -c "print(f'{($1 * 2654435761) % 2**48:012x}')"; }
before=$(commit_of_run 24) after=$(commit_of_run 25)

echo "== 1: the archive and the scratch repository"
"$opbench" run "$src/tests/harness/ci_gate.toml" --no-progress --out "$work/base.json" > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "the base run failed"; }
python3 "$src/scripts/generate_archive.py" "$work/base.json" "$work/arch" 30 --opbench "$opbench" \
  --plant regression --truth "$work/truth.json" --seed 7 --sigma 0.01 > /dev/null
repo=$work/repo
git init -q "$repo"
cp "$src/tests/plugins/slowdown_plugin.cpp" "$repo/"
git -C "$repo" -c user.name=t -c user.email=t@t add slowdown_plugin.cpp
git -C "$repo" -c user.name=t -c user.email=t@t commit -qm "the slowdown plugin"
sed -i 's/    b->factor = 1;/    b->factor = 3; \/\/ the regression/' "$repo/slowdown_plugin.cpp"
grep -q "b->factor = 3;" "$repo/slowdown_plugin.cpp" || fail "the fixture's regression was not written"
git -C "$repo" -c user.name=t -c user.email=t@t commit -qam "3x the work"
# The build command: the archive's commit names the repository's revision.
cat > "$work/build.sh" <<EOF
set -e
case \$COMMIT in
  ${before:0:7}*) rev=HEAD~1 ;;
  ${after:0:7}*) rev=HEAD ;;
  *) echo "no such commit: \$COMMIT" >&2; exit 1 ;;
esac
git -C "$repo" show "\$rev:slowdown_plugin.cpp" > "$work/src-\$COMMIT.cpp"
g++ -std=c++20 -O2 -shared -fPIC -fvisibility=hidden -I "$src/plugins" "$work/src-\$COMMIT.cpp" -o "\$PLUGIN_OUT"
EOF

# 8 pairs: a pair lost to a starved repetition on a busy machine still
# leaves 7, which can reach p < 0.05 (5 never can: the signed-rank test gives
# 0.059 at best).
confirm() {
  "$src/scripts/confirm-change.sh" --opbench "$opbench" --archive "$work/arch" \
    --suite "$src/tests/harness/ci_gate.toml" --backend slowdown --pairs 8 "$@"
}

echo "== 2: confirm the change"
confirm --before "$before" --after "${after:0:7}" --build "bash $work/build.sh" > "$work/confirm.out" \
  2> "$work/confirm.err" || { cat "$work/confirm.err"; fail "confirm-change.sh failed"; }
python3 - "$work/arch/confirmations.json" "$before" "${after:0:7}" <<'PY' || fail "the record is not what ab said"
import json, sys
doc = json.load(open(sys.argv[1]))
[rec] = doc["confirmations"]
assert rec["backend"] == "slowdown" and rec["last_before"] == sys.argv[2] and rec["first_after"] == sys.argv[3], rec
assert len(rec["cases"]) == 2 and all(c["verdict"] == "slower" and c["ratio"] > 1.5 for c in rec["cases"]), rec
PY
[ -f "$work/arch/$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["confirmations"][0]["set"])' \
  "$work/arch/confirmations.json")" ] || fail "ab's set is not kept in the archive"

echo "== 3: history --changes shows it"
"$opbench" history "$work/arch" --suite ci-gate --changes --format json > "$work/changes.json"
python3 - "$work/changes.json" "$before" "$after" <<'PY' || fail "history --changes' JSON lacks the confirmation"
import json, sys
data = json.load(open(sys.argv[1]))
confirmed, unconfirmed = [], []
for case in data["cases"]:
    for c in case["changes"]:
        (confirmed if c["confirmed"] else unconfirmed).append((case["case"], c))
assert len(confirmed) == 2 and all(n.endswith("[slowdown]") for n, _ in confirmed), confirmed
assert all(c["last_before"]["commit"] == sys.argv[2] and c["first_after"]["commit"] == sys.argv[3]
           and c["confirmed"]["verdict"] == "slower" for _, c in confirmed), confirmed
assert unconfirmed and all(n.endswith("[naive]") for n, _ in unconfirmed), unconfirmed
PY
"$opbench" history "$work/arch" --suite ci-gate --changes > "$work/changes.txt"
[ "$(grep -c "confirmed by opbench ab: .*\[slowdown\] ${before:0:7}..${after:0:7}: slower" "$work/changes.txt")" -eq 2 ] ||
  { cat "$work/changes.txt"; fail "the console does not show the two confirmations"; }
/usr/bin/python3 "$src/tests/harness/wide_lines.py" "$work/changes.txt" ||
  fail "history --changes' console is over 100 columns"

echo "== 4: bad input"
rc=0
confirm --before "$before" --after "$after" > "$work/bad.out" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q -- "--build is required" "$work/bad.out" || { cat "$work/bad.out"; fail "no --build: exit $rc"; }
rc=0
confirm --before 0000000 --after "$after" --build "bash $work/build.sh" > "$work/bad.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q -- "--build failed at commit 0000000" "$work/bad.out" ||
  { cat "$work/bad.out"; fail "a failing build: exit $rc"; }
rc=0
confirm --before "$before" --after "$after" --build "true" > "$work/bad.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "wrote no plugin" "$work/bad.out" || { cat "$work/bad.out"; fail "no plugin written: exit $rc"; }
echo '{"schema_version": 1, "confirmations": [{"backend": 3}]}' > "$work/arch/confirmations.json"
rc=0
"$opbench" history "$work/arch" --suite ci-gate --changes > "$work/bad.out" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "confirmations.json: confirmations\[0\].backend: expected a string" "$work/bad.out" ||
  { cat "$work/bad.out"; fail "a broken confirmations.json: exit $rc"; }
echo "ok"
