#!/usr/bin/env bash
# Every console within 100 columns (issue 30, item 2), on a real run of the
# quick suite (naive and onednn, short settings) and of `opbench ab`:
#   - the run's progress lines (on a terminal: `script` gives it one), its
#     `--profile` hot-path tables and notes, and the SIGINT message;
#   - `compare --by backend` on one set and on two;
#   - `compare` of a set with itself and of two shard sets, `analyze`,
#     `history` of an archive, `compare --by machine` with a 65-character
#     CPU model (issue 44: 111-120 columns before);
#   - `compare` on an `ab` set, and `ab`'s own lines;
#   - `opbench machine`, and a first run's "measured this machine's peaks";
#   - `compare --format markdown` (ci-bench's summary): every table cell,
#     since a Markdown row is as long as its cells together.
# A line that is only a path (the machine cache's) or that holds this test's
# own paths is exempt, as the user chose its length. Widths count code points
# ('±' and '…' are one column); escape codes and the '\r' of a rewritten line
# are taken out first. The --help texts have their own check (e2e_quick).
# usage: console_width_test.sh SOURCE_ROOT OPBENCH NAIVE_PLUGIN BACKENDS (naive,onednn where built)
set -euo pipefail
src=$1 opbench=$2 naive=$3 backends=$4
work=$(mktemp -d /tmp/opbench-width-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
short=(--backends "$backends" --warmup 0 --min-time 0.002 --max-time 0.01 --repetitions 3)

# check NAME FILE: no line of FILE wider than 100 columns.
check() {
  /usr/bin/python3 - "$1" "$2" "$work" <<'PY' || exit 1
import re, sys
name, path, work = sys.argv[1:]
escape = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
text = open(path, encoding="utf-8", errors="replace").read()
lines = [escape.sub("", seg) for line in text.split("\n") for seg in line.split("\r")]
wide = [l for l in lines if len(l) > 100 and work not in l and not re.fullmatch(r"\s*/\S+", l)]
if not any(l.strip() for l in lines):
    sys.exit(f"FAIL: {name}: no output at all ({path})")
for l in wide:
    print(f"FAIL: {name}: {len(l)} columns: {l}", file=sys.stderr)
print(f"{name}: {len(lines)} lines, widest {max(len(l) for l in lines)} columns"
      f"{' (exempt paths included)' if wide == [] else ''}")
sys.exit(1 if wide else 0)
PY
}

echo "== the run on a terminal: progress lines, --profile tables"
script -qec "$(printf '%q ' "$opbench" run "$src/suites/quick.toml" "${short[@]}" --profile --out "$work/a.json")" \
  /dev/null > "$work/run.log" 2>&1 || { cat "$work/run.log"; fail "the profiled run failed"; }
grep -q "elapsed, ~" "$work/run.log" || { cat "$work/run.log"; fail "no progress line: not on a terminal?"; }
grep -q "% parent" "$work/run.log" || { cat "$work/run.log"; fail "no hot-path table"; }
grep -q "attention.gqa" "$work/run.log" || fail "the longest case (attention.gqa) did not run"
check "run progress and --profile" "$work/run.log"

echo "== the first run on a machine: its peaks measured, a long cache path"
# A cache directory outside $work (whose paths are exempt), and long: the
# "measured this machine's peaks ... cached in PATH" line must wrap.
cache=$(mktemp -d /tmp/opbench-width-cache-XXXXXX)
trap 'rm -rf "$work" "$cache"' EXIT
long_cache=$cache/a-cache-directory-with-a-long-name/for-the-line-that-names-it
OPBENCH_CACHE_DIR=$long_cache "$opbench" run "$src/suites/quick.toml" "${short[@]}" --benchmark_filter=softmax \
  --no-progress --out "$work/first.json" > "$work/first.log" 2>&1 || { cat "$work/first.log"; fail "the first run failed"; }
grep -q "measured this machine's peaks" "$work/first.log" || { cat "$work/first.log"; fail "no peaks measured"; }
check "first run (peaks measured)" "$work/first.log"

echo "== compare --by backend, one set and two"
cp "$work/a.json" "$work/b.json"
"$opbench" compare --by backend "$work/a.json" > "$work/by1.log" 2>&1 || { cat "$work/by1.log"; fail "--by backend"; }
check "compare --by backend, one set" "$work/by1.log"
"$opbench" compare --by backend "$work/a.json" "$work/b.json" > "$work/by2.log" 2>&1 ||
  { cat "$work/by2.log"; fail "--by backend on two sets"; }
grep -q "naive@b" "$work/by2.log" || { cat "$work/by2.log"; fail "--by backend on two sets lacks a set's level"; }
check "compare --by backend, two sets" "$work/by2.log"

echo "== compare, analyze, history and --by machine with the quick suite's longest names (issue 44)"
# rope/B:1/H:4/KVH:2/S:16/D:32/theta:10000/variant:half_split [naive] is the
# longest row these tables have; a CPU model of 65 characters the widest cell.
grep -q "variant:half_split" "$work/a.json" || fail "the quick set has no rope case"
"$opbench" compare "$work/a.json" "$work/a.json" > "$work/same.log" 2>&1 || { cat "$work/same.log"; fail "compare a a"; }
check "compare, one set twice" "$work/same.log"
"$opbench" analyze "$work/a.json" > "$work/analyze.log" 2>&1 || { cat "$work/analyze.log"; fail "analyze"; }
check "analyze" "$work/analyze.log"
mkdir -p "$work/arch"
"$opbench" archive "$work/arch" "$work/a.json" "$work/first.json" > /dev/null || fail "archive"
"$opbench" history "$work/arch" --suite quick > "$work/history.log" 2>&1 || { cat "$work/history.log"; fail "history"; }
grep -q "half_split" "$work/history.log" || { cat "$work/history.log"; fail "history lacks the rope case"; }
check "history" "$work/history.log"
python3 - "$work/a.json" "$work/xeon.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["context"]["opbench"]["machine"]["cpu_model"] = "Intel(R) Xeon(R) Platinum 8480+ Sapphire Rapids 56-Core Processor"
json.dump(s, open(sys.argv[2], "w"))
PY
"$opbench" compare --by machine "$work/a.json" "$work/xeon.json" > "$work/bymachine.log" 2>&1 ||
  { cat "$work/bymachine.log"; fail "--by machine"; }
grep -q "Machines and their measured peaks" "$work/bymachine.log" || fail "--by machine has no peaks table"
check "compare --by machine (a long CPU model)" "$work/bymachine.log"
for i in 1 2; do
  "$opbench" run "$src/suites/quick.toml" "${short[@]}" --shard $i/2 --no-progress --out "$work/shard$i.json" \
    > "$work/shard$i.log" 2>&1 || { cat "$work/shard$i.log"; fail "shard $i/2"; }
done
"$opbench" compare "$work/shard1.json" "$work/shard2.json" > "$work/shards.log" 2>&1 ||
  { cat "$work/shards.log"; fail "compare on shard sets"; }
check "compare on shard sets" "$work/shards.log"

echo "== compare --format markdown: every cell"
"$opbench" compare "$work/a.json" "$work/b.json" --format markdown > "$work/cmp.md" 2>&1 ||
  { cat "$work/cmp.md"; fail "compare --format markdown"; }
grep -q "| verdict |" "$work/cmp.md" || { cat "$work/cmp.md"; fail "no Markdown comparison table"; }
grep '^|' "$work/cmp.md" | tr '|' '\n' > "$work/cells.txt"
check "Markdown cells" "$work/cells.txt"

echo "== opbench ab and compare on its set"
# Exit 1 only where cases were starved on a busy machine (CI's sanitizer
# build beside other tests), named on their own summary line; never failed.
rc=0
"$opbench" ab "$src/suites/quick.toml" --pairs 6 --seconds 0.002 --plugin naive@a="$naive" \
  --plugin naive@b="$naive" --out "$work/ab.json" > "$work/ab.log" 2>&1 || rc=$?
[ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -qE "^  [0-9]+ not compared: [0-9]+ starved$" "$work/ab.log"; } ||
  { cat "$work/ab.log"; fail "ab exited $rc"; }
check "opbench ab" "$work/ab.log"
"$opbench" compare "$work/ab.json" > "$work/abc.log" 2>&1 || { cat "$work/abc.log"; fail "compare on the ab set"; }
grep -q "paired naive@a -> naive@b" "$work/abc.log" || { cat "$work/abc.log"; fail "not the paired comparison"; }
check "compare on an ab set" "$work/abc.log"

echo "== opbench machine"
"$opbench" machine > "$work/machine.log" 2>&1 || { cat "$work/machine.log"; fail "opbench machine"; }
check "opbench machine" "$work/machine.log"

echo "== SIGINT during a run"
# The quick suite at its own settings runs for tens of seconds; the signal
# goes once the first case has finished (the journal holds it).
"$opbench" run "$src/suites/quick.toml" --backends naive --out "$work/int.json" > "$work/int.log" 2>&1 &
pid=$!
for _ in $(seq 600); do
  grep -qs '"case"' "$work/int.json.journal" && break
  sleep 0.1
done
kill -INT $pid
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 130 ] || { cat "$work/int.log"; fail "the interrupted run exited $rc, not 130"; }
grep -q "SIGINT: stopping" "$work/int.log" || { cat "$work/int.log"; fail "no SIGINT message"; }
check "SIGINT message" "$work/int.log"
echo "every console fits 100 columns"
