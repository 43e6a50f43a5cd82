#!/usr/bin/python3
"""How much each case's median moves from run to run, against the spread its
repetitions show within a run (issue 43: the noise that change points must
see through). Reads K result sets of one suite on one machine, measured one
after another, and prints per case with a time in every set:
  - sigma: the run-to-run standard deviation of the log of the run's median
    (the entry summary's median_seconds), robust: 1.4826 x the
    median absolute deviation from the median of the K runs;
  - spread: the median over the runs of the entry's repetition spread
    (half-range / median, the entry summary's `spread`; what
    scripts/generate_archive.py takes as a case's run-to-run sigma without
    --noise-from);
and the quantiles of both over the cases, with the share of cases whose
sigma is at most 1%, 2%, 3% (docs/measurement.md, "Change points in the
archive", gives the detection rate at each sigma), and how well a run's
spread predicts how far its median moved (Spearman's rank correlation).

usage: run_to_run_noise.py SET.json SET.json [SET.json...] [--cases]"""
import json
import math
import statistics
import sys


def run_medians(path):
    """{case: (median, spread)} of one set: each entry's own summary (the one
    median and repetition spread the harness computed, starved repetitions
    left out: what history reads)."""
    with open(path, encoding="utf-8") as f:
        result_set = json.load(f)
    return entry_summaries(result_set)


def entry_summaries(result_set):
    out = {}
    for b in result_set["benchmarks"]:
        summary = b.get("summary")
        if b.get("status", "passed") != "passed" or not isinstance(summary, dict):
            continue
        median, spread = summary.get("median_seconds"), summary.get("spread")
        if isinstance(median, (int, float)) and median > 0 and isinstance(spread, (int, float)):
            out.setdefault(b.get("run_name", b.get("name")), (median, spread))
    return out


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0] * len(values)
    for r, i in enumerate(order):
        out[i] = r
    return out


def spread_predicts(runs, cases):
    """Spearman's rank correlation, over every case and run, of how far the
    run's median is from its case's median (in units of the case's median
    deviation) with the run's spread (over its case's median spread): near
    0, a run's spread says nothing of how far its median moved."""
    dev, spr = [], []
    for c in cases:
        logs = [math.log(r[c][0]) for r in runs]
        centre = statistics.median(logs)
        mad = statistics.median(abs(x - centre) for x in logs) or 1e-12
        mid_spread = statistics.median(r[c][1] for r in runs) or 1e-12
        for x, r in zip(logs, runs):
            dev.append(abs(x - centre) / mad)
            spr.append(r[c][1] / mid_spread)
    a, b = ranks(dev), ranks(spr)
    ma, mb = statistics.mean(a), statistics.mean(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    var = math.sqrt(sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    return cov / var if var > 0 else 0.0


def quantiles(values):
    v = sorted(values)
    return [v[min(len(v) - 1, int(q * len(v)))] for q in (0.1, 0.5, 0.9)]


def main():
    args = [a for a in sys.argv[1:] if a != "--cases"]
    if len(args) < 3:
        sys.exit(__doc__)
    runs = [run_medians(p) for p in args]
    common = [c for c in runs[0] if all(c in r for r in runs)]
    if not common:
        sys.exit("run_to_run_noise.py: no case has a time in every set")
    rows = []
    for c in common:
        logs = [math.log(r[c][0]) for r in runs]
        centre = statistics.median(logs)
        sigma = 1.4826 * statistics.median(abs(x - centre) for x in logs)
        spread = statistics.median(r[c][1] for r in runs)
        rows.append((c, sigma, spread))
    if "--cases" in sys.argv:
        for c, sigma, spread in sorted(rows, key=lambda r: r[1]):
            print(f"{sigma * 100:6.2f}% {spread * 100:6.2f}%  {c[:84]}")
    sig = [r[1] for r in rows]
    spr = [r[2] for r in rows]
    print(f"{len(args)} sets, {len(rows)} cases with a time in each")
    print("              10%     50%     90%  (quantiles over the cases)")
    print("sigma     " + "".join(f"{q * 100:7.2f}%" for q in quantiles(sig)))
    print("spread    " + "".join(f"{q * 100:7.2f}%" for q in quantiles(spr)))
    ratio = [s / p for s, p in zip(sig, spr) if p > 0]
    print("sigma/spread " + "".join(f"{q:7.2f} " for q in quantiles(ratio)))
    print(f"rank correlation of a run's deviation with its spread: {spread_predicts(runs, common):.2f} "
          f"over {len(common) * len(runs)} case-runs")
    for limit in (0.01, 0.02, 0.03):
        share = sum(s <= limit for s in sig) / len(sig)
        print(f"sigma <= {limit * 100:.0f}%: {share * 100:.0f}% of cases")


if __name__ == "__main__":
    main()
