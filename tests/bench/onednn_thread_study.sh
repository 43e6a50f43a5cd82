#!/bin/sh
# Does a different default make oneDNN's numbers stable on a loaded 2-core
# machine? (issue 17, item 2; docs/measurement.md, "oneDNN threads on a
# loaded machine"). Under `stress-ng --cpu 2` (two busy loops, on top of
# whatever else runs), the quick suite on onednn under each setting, ROUNDS
# times interleaved (so drifting load hits every setting alike):
#   default   oneDNN's default: an OpenMP team of every allowed CPU, spinning waits
#   threads1  --threads 1
#   passive   OMP_WAIT_POLICY=passive (waiting threads sleep instead of spinning)
#   pinned    --cpus 0,1 (opbench and the backend's threads pinned)
# Then, per setting: the entries' qualities (clean / noisy / disturbed), the
# median spread of their repetitions, and the run-to-run change of each
# entry's median between rounds (the median and the largest |log ratio|).
#
# usage: onednn_thread_study.sh OPBENCH OUTDIR [ROUNDS [--tables-only]]   (needs stress-ng)
#   --tables-only: no runs, the tables of the sets OUTDIR holds
set -eu
opbench=$1 out=$2 rounds=${3:-2} only=${4:-}
suite=$(dirname "$0")/../../suites/quick.toml
mkdir -p "$out"
[ "$only" = --tables-only ] || {
stress-ng --cpu 2 --timeout 900s --quiet &
stress=$!
trap 'kill $stress 2>/dev/null || true' EXIT INT TERM
sleep 2
r=1
while [ "$r" -le "$rounds" ]; do
  for setting in default threads1 passive pinned; do
    case $setting in
      default) set -- ;;
      threads1) set -- --threads 1 ;;
      passive) set -- ;;
      pinned) set -- --cpus 0,1 ;;
    esac
    echo "round $r: $setting (load $(cut -d' ' -f1 /proc/loadavg))"
    # Only `passive` sets OMP_WAIT_POLICY: unset, libgomp spins a while, then sleeps.
    if [ "$setting" = passive ]; then run_env="env OMP_WAIT_POLICY=passive"; else run_env=env; fi
    $run_env "$opbench" run "$suite" --backends onednn --no-progress \
      --out "$out/$setting-$r.json" --force "$@" > "$out/$setting-$r.log" 2>&1
  done
  r=$((r + 1))
done
kill $stress 2>/dev/null || true
}
python3 - "$out" "$rounds" <<'EOF'
import json, math, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def entries(path):
    """name -> (median seconds, quality, spread) of each measured onednn entry."""
    with open(path, encoding="utf-8") as f:
        s = json.load(f)
    e = {}
    for b in s["benchmarks"]:
        if b.get("backend") == "onednn" and b.get("status") == "passed" and "summary" in b:
            m = b["summary"]
            e[b["run_name"]] = (m["median_seconds"], m["quality"], m.get("spread") or 0.0)
    return e

print(f"{'setting':9} {'entries':>7} {'clean':>5} {'noisy':>5} {'disturbed':>9} {'median spread':>13} "
      f"{'run-to-run median':>17} {'run-to-run max':>14}  (entries x rounds)")
for setting in ["default", "threads1", "passive", "pinned"]:
    runs = [entries(f"{out}/{setting}-{r}.json") for r in range(1, rounds + 1)]
    q = [v[1] for run in runs for v in run.values()]
    spreads = [v[2] for run in runs for v in run.values()]
    changes = []
    for name in runs[0]:
        times = [run[name][0] for run in runs if name in run]
        if len(times) > 1:
            changes.append(max(abs(math.log(t / times[0])) for t in times[1:]))
    n = len(q) // rounds
    print(f"{setting:9} {n:>7} {q.count('clean'):>5} {q.count('noisy'):>5} {q.count('disturbed'):>9} "
          f"{statistics.median(spreads) * 100:>12.1f}% "
          f"{math.exp(statistics.median(changes)):>16.3g}x "
          f"{math.exp(max(changes)):>13.3g}x")
EOF
