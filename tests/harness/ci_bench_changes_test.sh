#!/usr/bin/env bash
# scripts/ci-bench.sh --changes-gate (issue 43) on generated archives whose
# times are known, so no two timed runs need to agree:
#   1. one real run of tests/harness/ci_gate.toml is the base set; its
#      --commit-under-test is in the set and the archive index, and a run
#      under GITHUB_SHA records that;
#   2. an A/A archive of 30 runs (scripts/generate_archive.py --plant aa: the
#      base set's spread as run-to-run noise, rare slow runs) passes the gate;
#   3. an archive whose cases all step 20% slower at run 25 of 30 (--plant
#      regression) fails it, the message naming the commit range (runs 24 and
#      25's commits) and the size; the report's history page marks them;
#   4. an archive of 4 runs is too young to hold a change: a note, not a failure;
#      `history --changes` on it exits 2 saying why; on an archive of two
#      machines it reads the one --machine names and says there are two; on
#      one whose run's file is gone it exits 2 naming the file.
# usage: ci_bench_changes_test.sh SOURCE_ROOT OPBENCH SLOWDOWN_PLUGIN
set -euo pipefail
src=$1 opbench=$2 plugin=$3
work=$(mktemp -d /tmp/opbench-ci-changes-XXXXXX)
trap 'rm -rf "$work"' EXIT
export OPBENCH_PLUGIN_PATH=$plugin
unset GITHUB_STEP_SUMMARY GITHUB_SHA CI_COMMIT_SHA OPBENCH_TEST_SLOWDOWN
fail() { echo "FAIL: $*" >&2; exit 1; }
newest() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1] + "/index.json"))["sets"][-1]["path"])' "$1"; }
commit_of_run() { python3 -c "print(f'{($1 * 2654435761) % 2**48:012x}')"; }
# gate ARCHIVE: ci-bench.sh on the archive's newest set, nothing archived.
gate() {
  "$src/scripts/ci-bench.sh" --opbench "$opbench" --archive "$1" --set "$1/$(newest "$1")" --no-archive \
    --compare-args "--threshold 99% --accept-unmet-noise" --changes-gate 8
}

echo "== 1: the base set, with the commit under test"
"$opbench" run "$src/tests/harness/ci_gate.toml" --no-progress --out "$work/base.json" \
  --commit-under-test feedface0123 --archive "$work/real" > "$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "the base run failed"; }
python3 - "$work/base.json" "$work/real/index.json" <<'PY' || fail "the commit under test is not in the set and the index"
import json, sys
cut = json.load(open(sys.argv[1]))["context"]["opbench"]["code_under_test"]
assert cut == {"commit": "feedface0123", "source": "--commit-under-test"}, cut
assert json.load(open(sys.argv[2]))["sets"][0]["commit_under_test"] == "feedface0123"
PY
GITHUB_SHA=0123abcd "$opbench" run "$src/tests/harness/ci_gate.toml" --no-progress --out "$work/env.json" \
  > "$work/env.log" 2>&1 || { cat "$work/env.log"; fail "the run with GITHUB_SHA failed"; }
python3 -c 'import json, sys
cut = json.load(open(sys.argv[1]))["context"]["opbench"]["code_under_test"]
assert cut == {"commit": "0123abcd", "source": "GITHUB_SHA"}, cut' "$work/env.json" ||
  fail "GITHUB_SHA is not recorded as the commit under test"

echo "== 2: A/A archive passes"
python3 "$src/scripts/generate_archive.py" "$work/base.json" "$work/aa" 30 --opbench "$opbench" \
  --plant aa --truth "$work/aa.truth.json" --seed 7 --sigma 0.01 > /dev/null
gate "$work/aa" > "$work/aa.log" 2>&1 || { cat "$work/aa.log"; fail "the A/A archive failed the change gate"; }
grep -q "gate passed" "$work/aa.log" || { cat "$work/aa.log"; fail "no 'gate passed'"; }

echo "== 3: a planted regression fails, naming its commits"
python3 "$src/scripts/generate_archive.py" "$work/base.json" "$work/reg" 30 --opbench "$opbench" \
  --plant regression --truth "$work/reg.truth.json" --seed 7 --sigma 0.01 > /dev/null
rc=0
gate "$work/reg" > "$work/reg.log" 2>&1 || rc=$?
[ $rc -eq 1 ] || { cat "$work/reg.log"; fail "a planted regression gave exit $rc, not 1"; }
before=$(commit_of_run 24) after=$(commit_of_run 25)
grep -q "regression: .*% slower .* between $before (run 24) and $after (run 25)" "$work/reg.log" ||
  { cat "$work/reg.log"; fail "the message does not name runs 24..25 ($before..$after)"; }
grep -q "change point to slower among the newest 8" "$work/reg.log" || { cat "$work/reg.log"; fail "no gate line"; }
# The console table of those changes: one row per case (ci_gate.toml: 2 cases x
# 2 backends), within 100 columns.
"$opbench" history "$work/reg" --suite ci-gate --changes > "$work/reg-console.txt"
python3 - "$work/reg-console.txt" <<'PY' || fail "history --changes' console table"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
wide = [l for l in lines if len(l) > 100]
assert not wide, f"lines over 100 columns: {wide[:3]}"
rows = [l for l in lines if "[naive]" in l or "[slowdown]" in l]
assert len(rows) == 4 and all(".." in r and "1.2" in r for r in rows), rows
PY
# The report's history page marks them (without a browser: the Chromium test
# looks at the page), one dashed line per case's chart and a table row each.
"$opbench" report "$work/reg/$(newest "$work/reg")" --history "$work/reg" -o "$work/reg.html" > /dev/null
[ "$(grep -c '<line class="change"' "$work/reg.html")" -eq 4 ] && grep -q "Change points of suite &#39;ci-gate&#39;" "$work/reg.html" ||
  fail "the report's history page does not mark the 4 changes"
# Each row of its change table names its case as the case's chart is titled.
python3 - "$work/reg.html" <<'PY' || fail "the change table's case names are not the charts' titles"
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
titles = sorted(html.unescape(t) for t in re.findall(
    r'<svg class="chart small" data-chart="history".*?<text x="4" y="16" font-weight="bold">(.*?)</text>', page, re.S))
table = re.search(r'<div class="changes">(.*?)</div>', page, re.S).group(1)
rows = [html.unescape(re.sub("<[^>]*>", "", r)) for r in re.findall(r"<tr[^>]*>\s*<td[^>]*>(.*?)</td>", table, re.S)]
names = [r[:r.rfind(" [")] for r in rows]
assert len(titles) == 4 and sorted(names) == titles, (titles, names)
PY

echo "== 4: too few runs, a missing set"
python3 "$src/scripts/generate_archive.py" "$work/base.json" "$work/young" 4 --opbench "$opbench" \
  --plant aa --truth "$work/young.truth.json" > /dev/null
gate "$work/young" > "$work/young.log" 2>&1 || { cat "$work/young.log"; fail "a young archive failed the gate"; }
grep -q "too few runs" "$work/young.log" || { cat "$work/young.log"; fail "no note on too few runs"; }
rc=0
"$opbench" history "$work/young" --suite ci-gate --changes > "$work/young-h.log" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "has 4 runs on machine .*need at least 6" "$work/young-h.log" ||
  { cat "$work/young-h.log"; fail "history --changes on 4 runs: exit $rc, not 2 with the reason"; }
# Two machines in one archive: the newest run's machine, and a note naming both.
python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); s["context"]["opbench"]["machine"]["id"] = "other-machine"
json.dump(s, open(sys.argv[2], "w"))' "$work/base.json" "$work/other.json"
python3 "$src/scripts/generate_archive.py" "$work/other.json" "$work/aa" 8 --opbench "$opbench" \
  --plant aa --truth "$work/other.truth.json" > /dev/null
"$opbench" history "$work/aa" --suite ci-gate --changes --machine other-machine > "$work/two.log" 2>&1 ||
  { cat "$work/two.log"; fail "history --changes on two machines failed"; }
grep -q "on other-machine (8 runs" "$work/two.log" && grep -q "on 2 machines" "$work/two.log" ||
  { cat "$work/two.log"; fail "two machines: not the one asked for, or no note"; }
gone=$(newest "$work/aa")
rm "$work/aa/$gone" "$work/aa/${gone%.json}.summaries.cbor"
rc=0
"$opbench" history "$work/aa" --suite ci-gate --changes > "$work/gone.log" 2>&1 || rc=$?
[ $rc -eq 2 ] && grep -q "$(basename "$gone")" "$work/gone.log" ||
  { cat "$work/gone.log"; fail "history --changes with a set gone: exit $rc, not 2 naming it"; }
echo "ok"
