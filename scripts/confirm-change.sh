#!/usr/bin/env bash
# Confirms a change point of `opbench history --changes` (issue 43, item 3):
# builds the plugin at the last commit before the change and at the first
# after it, measures the two builds side by side with `opbench ab` (paired,
# ABBA: docs/measurement.md, "Paired A/B"), and records the verdict of each
# case beside the change, in ARCHIVE/confirmations.json, where
# `history --changes` shows it ("confirmed" in its JSON, a line under its
# table).
#
# usage: confirm-change.sh --opbench OPBENCH --archive DIR --suite SUITE.toml
#          --backend NAME --before COMMIT --after COMMIT --build 'COMMAND'
#          [--pairs N] [--case REGEX] [--work DIR]
#   --build: a shell command that builds the plugin at $COMMIT and writes
#     it to $PLUGIN_OUT (both set in its environment); run once per commit.
#   --case: measure only the cases whose name matches (--benchmark_filter).
# Exit: 0 recorded (whatever the verdict), 1 a build or ab failed, 2 bad usage.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "confirm-change.sh: $1" >&2; exit "${2:-2}"; }

opbench= archive= suite= backend= before= after= build= pairs=30 case= work=
while [ $# -gt 0 ]; do
  case $1 in
    --opbench|--archive|--suite|--backend|--before|--after|--build|--pairs|--case|--work)
      [ $# -ge 2 ] || die "$1 needs a value"
      v=$2
      case $1 in
        --opbench) opbench=$v ;; --archive) archive=$v ;; --suite) suite=$v ;; --backend) backend=$v ;;
        --before) before=$v ;; --after) after=$v ;; --build) build=$v ;; --pairs) pairs=$v ;;
        --case) case=$v ;; --work) work=$v ;;
      esac
      shift 2 ;;
    -h|--help) usage ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
for need in opbench archive suite backend before after build; do
  [ -n "${!need}" ] || die "--$need is required (see --help)"
done
[ -x "$opbench" ] || die "--opbench $opbench: not an executable file"
[ -f "$archive/index.json" ] || die "--archive $archive: no index.json (an archive opbench archive wrote)"
[ -f "$suite" ] || die "--suite $suite: no such file"
[[ $backend =~ ^[A-Za-z0-9_]+$ ]] || die "--backend '$backend': a plugin name (letters, digits, _)"
[[ $pairs =~ ^[0-9]+$ ]] || die "--pairs '$pairs': a number of ABBA blocks (6 to 1000)"
[ "$before" != "$after" ] || die "--before and --after are the same commit ($before)"
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/opbench-confirm-XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# build_at COMMIT OUT: the user's build command at COMMIT, its log kept.
build_at() {
  local log="$work/build-${1:0:12}.log"
  if ! COMMIT=$1 PLUGIN_OUT=$2 bash -c "$build" > "$log" 2>&1; then
    tail -20 "$log" >&2
    die "--build failed at commit $1 (the end of its log above)" 1
  fi
  [ -f "$2" ] || die "--build at commit $1 exited 0 but wrote no plugin to \$PLUGIN_OUT ($2)" 1
}
echo "confirm-change.sh: building $backend at $before and at $after" >&2
build_at "$before" "$work/before.so"
build_at "$after" "$work/after.so"

stamp=$(date -u +%Y%m%dT%H%M%SZ)
rel="confirmations/$stamp-${before:0:12}-${after:0:12}.json"
mkdir -p "$archive/confirmations"
filter=()
[ -z "$case" ] || filter=(--benchmark_filter "$case")
echo "confirm-change.sh: opbench ab, $pairs pairs per case" >&2
rc=0
"$opbench" ab "$suite" --plugin "$backend@before=$work/before.so" --plugin "$backend@after=$work/after.so" \
  --pairs "$pairs" --no-progress --out "$archive/$rel" "${filter[@]}" > "$work/ab.log" 2>&1 || rc=$?
# ab exits 0 whatever the verdict, 1 when some case was not compared (starved on a
# busy machine, or failed: its summary names which); anything else is a failure.
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
  tail -20 "$work/ab.log" >&2
  die "opbench ab exited $rc" 1
fi
"$opbench" compare "$archive/$rel" --format json > "$work/verdict.json"

# Append the record under the archive's index lock (DIR/.index.lock, opbench archive's
# file), so two confirmations do not lose each other's.
python3 - "$archive" "$rel" "$work/verdict.json" "$backend" "$before" "$after" <<'PY'
import fcntl, json, os, sys
archive, rel, verdict_path, backend, before, after = sys.argv[1:7]
with open(verdict_path, encoding="utf-8") as f:
    verdict = json.load(f)
record = {"backend": backend, "last_before": before, "first_after": after, "set": rel,
          "threshold": verdict.get("threshold"), "alpha": verdict.get("alpha"),
          "cases": [{"case": c["case"], "verdict": c["verdict"], "ratio": c.get("ratio"),
                     "ratio_ci95": c.get("ratio_ci95"), "pairs": c.get("pairs")} for c in verdict["cases"]]}
path = os.path.join(archive, "confirmations.json")
with open(os.path.join(archive, ".index.lock"), "a") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    doc = {"schema_version": 1, "confirmations": []}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    doc["confirmations"].append(record)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)
for c in record["cases"]:
    print(f"{c['case']} [{backend}] {before[:7]}..{after[:7]}: {c['verdict']} x{c['ratio']:.3f}")
print(f"confirm-change.sh: recorded in {path} (set {rel})", file=sys.stderr)
PY
