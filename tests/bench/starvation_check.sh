#!/bin/sh
# Issue 26's check: is any number opbench prints on a busy machine the
# machine's rather than the kernel's? The quick suite on onednn at the
# default settings, once with nothing else running (the quiet run, first),
# then ROUNDS times beside two CPU hogs (`yes > /dev/null`, ended by PID).
# Per loaded run, against the quiet run's medians: entries starved, entries
# with a re-measured repetition, entries still starved, entries passed with
# a median over 3x the quiet one (must be 0), and the wall time against the
# quiet run's (docs/measurement.md, "Starved repetitions").
#
# usage: starvation_check.sh OPBENCH OUTDIR [ROUNDS [--tables-only]]
set -eu
opbench=$1 out=$2 rounds=${3:-5} only=${4:-}
suite=$(dirname "$0")/../../suites/quick.toml
mkdir -p "$out"
run() { # NAME: one run, its wall time beside its set
  started=$(date +%s%N)
  "$opbench" run "$suite" --backends onednn --no-progress --out "$out/$1.json" --force > "$out/$1.log" 2>&1
  echo $(( ($(date +%s%N) - started) / 1000000 )) > "$out/$1.wall" # ms
}
if [ "$only" != --tables-only ]; then
  echo "quiet (load $(cut -d' ' -f1 /proc/loadavg))"
  run quiet
  r=1
  while [ "$r" -le "$rounds" ]; do
    yes > /dev/null & hog1=$!
    yes > /dev/null & hog2=$!
    trap 'kill $hog1 $hog2 2>/dev/null || true' EXIT INT TERM
    sleep 1
    echo "loaded $r (load $(cut -d' ' -f1 /proc/loadavg))"
    run "loaded-$r"
    kill $hog1 $hog2
    wait $hog1 $hog2 2>/dev/null || true
    r=$((r + 1))
  done
fi
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def entries(name):
    d = json.load(open(os.path.join(out, name + ".json")))
    by = {}
    for e in d["benchmarks"]:
        if e.get("run_type") != "iteration" or "backend" not in e:
            continue
        n = e["run_name"].removesuffix("/manual_time")
        x = by.setdefault(n, {"status": e.get("status"), "reps": []})
        st = e.get("stats") or {}
        if e.get("status") == "passed" and not e.get("error_occurred"):
            x["reps"].append(st)
        elif e.get("status") == "starved":
            x["reps"] += e.get("starved_repetitions", [])
    for x in by.values():
        timed = [r["median"] for r in x["reps"] if not r.get("starved")]
        x["median"] = statistics.median(timed) if timed and x["status"] == "passed" else None
    return by
def wall(name):
    return float(open(os.path.join(out, name + ".wall")).read()) / 1000
quiet = entries("quiet")
print(f"quiet: {sum(1 for x in quiet.values() if x['status'] == 'starved')} starved, wall {wall('quiet'):.1f} s")
print("| run | entries | starved | with a re-measured repetition | with a starved repetition left out | passed at > 3x quiet | wall (x quiet) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in range(1, rounds + 1):
    name = f"loaded-{r}"
    if not os.path.exists(os.path.join(out, name + ".json")):
        continue
    run = entries(name)
    measured = [n for n, x in run.items() if x["status"] in ("passed", "starved")]
    starved = sum(1 for n in measured if run[n]["status"] == "starved")
    remeasured = sum(1 for n in measured if any(s.get("remeasured", 0) > 0 for s in run[n]["reps"]))
    left_out = sum(1 for n in measured if run[n]["status"] == "passed" and any(s.get("starved") for s in run[n]["reps"]))
    bad = [n for n in measured if run[n]["status"] == "passed" and quiet.get(n, {}).get("median")
           and run[n]["median"] > 3 * quiet[n]["median"]]
    print(f"| {r} | {len(measured)} | {starved} | {remeasured} | {left_out} | {len(bad)} | "
          f"{wall(name):.1f} s ({wall(name) / wall('quiet'):.2f}x) |")
    for n in bad:
        print(f"  passed at {run[n]['median'] / quiet[n]['median']:.1f}x quiet: {n}")
PY
