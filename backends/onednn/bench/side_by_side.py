#!/usr/bin/env python3
"""Joins opbench result sets (backend onednn) with the direct oneDNN loop's
Google Benchmark JSON files and prints the side-by-side table in Markdown.

  side_by_side.py FILE.json... [--all-threads N]

Each file is recognised by its content (an opbench result set has
context.opbench). Several files per side (interleaved runs) are pooled.

Rows are matched on M, N, K, trans_b/bias, dtype and threads (opbench's
threads = 0 means all cores: N, default os.cpu_count()). Each side's figure is
the median over repetitions of the per-repetition median time.
"""
import argparse
import json
import os
import re
import statistics
import sys


def opbench_rows(path, all_threads):
    rows = {}
    for e in json.load(open(path))["benchmarks"]:
        if e.get("backend") != "onednn" or e.get("run_type") != "iteration":
            continue
        if e.get("status") != "passed":
            continue
        p = e["params"]
        th = e["settings"]["threads"] or all_threads
        linear = bool(p.get("trans_b")) and bool(p.get("bias"))
        key = (p["M"], p["N"], p["K"], linear, e["dtype"], th)
        rows.setdefault(key, []).append(e["stats"]["median"])
    return rows


NAME = re.compile(r"matmul/B:1/M:(\d+)/N:(\d+)/K:(\d+)(/tb:1/bias:1)?/dt:(\w+)/threads:(\d+)/")


def direct_rows(path):
    rows = {}
    for e in json.load(open(path))["benchmarks"]:
        if e.get("run_type") != "iteration" or "median_s" not in e:
            continue
        m = NAME.match(e["name"])
        if not m:
            continue
        key = (int(m[1]), int(m[2]), int(m[3]), bool(m[4]), m[5], int(m[6]))
        rows.setdefault(key, []).append(e["median_s"])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--all-threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    ob, dr = {}, {}
    for f in a.files:
        is_opbench = "opbench" in json.load(open(f)).get("context", {})
        rows = opbench_rows(f, a.all_threads) if is_opbench else direct_rows(f)
        for k, v in rows.items():
            (ob if is_opbench else dr).setdefault(k, []).extend(v)
    print("| problem | dtype | threads | opbench median (ms) | direct median (ms) | gap | GFLOP/s (opbench) | runs |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst = 0.0
    for key in sorted(ob, key=lambda k: (k[4], k[5], not k[3] and -1, k[0], k[1], k[2])):
        if key not in dr:
            print(f"no direct-loop row for {key}", file=sys.stderr)
            continue
        m, n, k, linear, dt, th = key
        o, d = statistics.median(ob[key]), statistics.median(dr[key])
        gap = (o - d) / d * 100.0
        worst = max(worst, abs(gap))
        flops = 2.0 * m * n * k + (m * n if linear else 0)
        what = f"{m}x{n}x{k}" + (" linear (B^T, bias)" if linear else "")
        print(f"| {what} | {dt} | {th} | {o*1e3:.3f} | {d*1e3:.3f} | {gap:+.1f}% | {flops/o*1e-9:.1f} | {len(ob[key])}+{len(dr[key])} |")
    print(f"\nlargest |gap|: {worst:.1f}%")


if __name__ == "__main__":
    main()
