#!/usr/bin/env python3
"""Per case of an opbench result set: naive vs onednn throughput, Markdown.

  naive_vs_onednn.py RESULT.json

GFLOP/s for matmul and attention, GB/s for the memory-bound ops (softmax,
norms, activations, add), from the median over repetitions of each entry's
own rate. Skipped or failed entries show their status and reason.
"""
import json
import statistics
import sys

MEMORY_BOUND = {"softmax", "layernorm", "rmsnorm", "gelu", "silu", "add"}


def main():
    d = json.load(open(sys.argv[1]))
    cases = {}
    for e in d["benchmarks"]:
        if e.get("run_type") != "iteration" or "backend" not in e:
            continue
        key = (e["name"].split("/be:")[0], e.get("case", ""))
        c = cases.setdefault(key, {"op": e["op"], "dtype": e["dtype"], "params": e["params"],
                                   "variant": e.get("variant", "default")})
        be = c.setdefault(e["backend"], {"status": e["status"], "reason": e.get("reason", ""), "v": []})
        if e["status"] == "passed":
            be["v"].append(e["bytes/s"] * 1e-9 if e["op"] in MEMORY_BOUND else e["FLOP/s"] * 1e-9)
    print("| case | op | variant | shape | dtype | unit | naive | onednn | onednn / naive |")
    print("| --- | --- | --- | --- | --- | --- | ---: | ---: | ---: |")
    for (name, case), c in cases.items():
        unit = "GB/s" if c["op"] in MEMORY_BOUND else "GFLOP/s"
        shape = ",".join(f"{k}={v:.4g}" if isinstance(v, float) else
                         (k if isinstance(v, bool) else f"{k}={v}")
                         for k, v in c["params"].items() if v is not False)
        cells = []
        vals = {}
        for be in ("naive", "onednn"):
            r = c.get(be)
            if r is None:
                cells.append("—")
            elif r["status"] != "passed" or not r["v"]:
                cells.append(f"{r['status']}: {r['reason'][:48]}…")
            else:
                vals[be] = statistics.median(r["v"])
                cells.append(f"{vals[be]:.2f}")
        ratio = f"{vals['onednn'] / vals['naive']:.1f}x" if len(vals) == 2 and vals["naive"] > 0 else "—"
        print(f"| {case or '-'} | {c['op']} | {c['variant']} | {shape} | {c['dtype']} | {unit} | {cells[0]} | {cells[1]} | {ratio} |")


if __name__ == "__main__":
    main()
