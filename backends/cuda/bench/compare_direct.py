#!/usr/bin/env python3
"""opbench's cuda backend beside cuda-direct-bench (issue 41 item 5): one
Markdown table of opbench/direct per shape.

  compare_direct.py FILE.json... [--out TABLE.md]

Each file is recognised by its content: an opbench result set
(context.opbench) or the direct program's JSON (context.program ==
"cuda-direct-bench"). Rows are matched on op, dtype, variant, the shape
parameters and the cache state.

Each side's figure is the median over repetitions of the per-repetition median
device time per call: opbench's stats.device_time_per_call (CUDA events),
the direct program's repetition medians. The direct program times each case
twice: `canonical` (stop event right after the launches) and `opbench-order`
(stop event after a stream synchronize, the order opbench's recipe uses); the
table gives opbench over each. The summary gives the median ratio over the
gemm shapes and over the attention prefill shapes, against issue 41's
0.98-1.02. Rows only one side has are listed apart. fp8 rows pair with
opbench's f8e4m3 cases (direct.toml gives them out_dtype "bf16", the direct
program's D type; out_dtype is not part of the match).
Direct entries of several back-to-back calls per sample (--calls N, warm)
are listed apart too, as the figures to set beside public warm ones.

Exit 0 when it printed a table, 2 when an input is unreadable or no row matched.
"""
import argparse
import json
import statistics
import sys

MATMUL_KEYS = ("B", "M", "N", "K", "trans_a", "trans_b", "bias")
ATTENTION_KEYS = ("B", "H", "KVH", "Sq", "Skv", "D", "causal")
# The figures issue 41 sets the direct program beside (public, H100 SXM).
PUBLIC = [
    ("matmul/B:1/M:2048/N:2048/K:2048/variant:default/dt:bf16", "warm",
     "about 677 TFLOP/s, public warm-L2 cuBLAS figure for this shape on an H100"),
    ("attention/B:4/H:16/S:4096/D:128/causal:1/variant:fused/dt:bf16", None,
     "518 TFLOP/s, FlashAttention-3 paper's cuDNN row (H100, causal, bf16, head dim 128, seq 4k; "
     "the paper's FLOP count: paper_tflops)"),
]


def key_of(op, dtype, variant, params, cache):
    keys = MATMUL_KEYS if op == "matmul" else ATTENTION_KEYS
    shape = tuple((k, params.get(k)) for k in keys)
    return (op, dtype, variant, shape, cache)


def label_of(key):
    op, dtype, variant, shape, _ = key
    p = dict(shape)
    if op == "matmul":
        s = f"matmul/B:{p['B']}/M:{p['M']}/N:{p['N']}/K:{p['K']}"
        s += "/tA:1" if p["trans_a"] else ""
        s += "/tB:1" if p["trans_b"] else ""
        s += "/bias:1" if p["bias"] else ""
    else:
        s = f"attention/B:{p['B']}/H:{p['H']}"
        s += f"/KVH:{p['KVH']}" if p["KVH"] != p["H"] else ""
        s += f"/S:{p['Sq']}" if p["Sq"] == p["Skv"] else f"/Sq:{p['Sq']}/Skv:{p['Skv']}"
        s += f"/D:{p['D']}/causal:{int(bool(p['causal']))}"
    return f"{s}/variant:{variant}/dt:{dtype}"


def read(paths):
    """(opbench rows, direct rows, devices): rows map key -> list of per-repetition seconds."""
    ob, direct, devices = {}, {}, []
    for path in paths:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            sys.exit(f"compare_direct: {path}: {e}")
        ctx = doc.get("context", {})
        if ctx.get("program") == "cuda-direct-bench":
            devices.append(f"direct: {ctx['device']['name']} (sm_{ctx['device']['cc']}), "
                           f"cuBLASLt {ctx['versions']['cublaslt']}, cuDNN {ctx['versions']['cudnn']}, "
                           f"{ctx['date']}")
            for e in doc["entries"]:
                k = key_of(e["op"], e["dtype"], e["variant"], e["params"], e["cache"])
                side = direct.setdefault(k, {"canonical": [], "opbench-order": [], "status": [], "batched": [],
                                             "flops": e["flops"], "paper_flops": e["paper_flops"]})
                if e["status"] == "passed" and e.get("calls_per_sample", 1) > 1:
                    side["batched"].append((e["calls_per_sample"], statistics.median(e["repetition_medians"])))
                elif e["status"] == "passed":
                    side[e["timing"]] += e["repetition_medians"]
                else:
                    side["status"].append(f"{e['status']}: {e['reason']}")
        elif "opbench" in ctx:
            for e in doc.get("benchmarks", []):
                if e.get("backend") != "cuda" or e.get("run_type") != "iteration":
                    continue
                k = key_of(e["op"], e["dtype"], e["variant"], e.get("params", {}),
                           (e.get("settings") or {}).get("cache", "warm"))
                row = ob.setdefault(k, {"device": [], "status": []})
                dev = (e.get("stats") or {}).get("device_time_per_call")
                if e.get("status") == "passed" and isinstance(dev, (int, float)):
                    row["device"].append(dev)
                elif e.get("status") != "passed":
                    row["status"].append(f"{e.get('status')}: {e.get('reason', '')}")
        else:
            sys.exit(f"compare_direct: {path}: neither an opbench result set nor cuda-direct-bench's JSON")
    return ob, direct, devices


def us(s):
    return f"{s * 1e6:.2f}" if s else "-"


def ratio(a, b):
    return a / b if a and b else None


def fmt_ratio(r):
    return f"{r:.3f}" if r else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", help="also write the table here")
    a = ap.parse_args()
    ob, direct, devices = read(a.files)
    lines = [f"- {d}" for d in devices]
    lines += ["", "| case | cache | opbench µs | direct µs | opbench/direct | direct, opbench-order µs | "
              "opbench/opbench-order | direct TFLOP/s |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    groups = {"gemm": [], "attention": []}
    matched = 0
    only = []
    for k in sorted(set(ob) | set(direct), key=lambda k: (k[0] != "matmul", k[4], label_of(k))):
        o, d = ob.get(k), direct.get(k)
        label, cache = label_of(k), k[4]
        if not o and d and not (d["canonical"] or d["opbench-order"] or d["status"]):
            continue  # back-to-back figures only: their own table below
        if not o or not d:
            side = d or o
            why = "; ".join(sorted(set(side["status"])))[:120] if side["status"] else ""
            fig = ""
            if d and d["canonical"]:
                t = statistics.median(d["canonical"])
                fig = f"{us(t)} µs, {d['flops'] / t * 1e-12:.1f} TFLOP/s"
            only.append(("direct" if d else "opbench", f"{label} ({cache})", fig, why))
            continue
        ot = statistics.median(o["device"]) if o["device"] else None
        dc = statistics.median(d["canonical"]) if d["canonical"] else None
        do = statistics.median(d["opbench-order"]) if d["opbench-order"] else None
        r = ratio(ot, dc)
        if r:
            matched += 1
            groups["gemm" if k[0] == "matmul" else "attention"].append(r)
        tf = f"{d['flops'] / dc * 1e-12:.1f}" if dc else "-"
        if k[0] == "attention" and dc:
            tf += f" ({d['paper_flops'] / dc * 1e-12:.1f} paper)"
        note = ""
        if not o["device"] and o["status"]:
            note = " " + o["status"][0][:60]
        lines.append(f"| {label}{note} | {cache} | {us(ot)} | {us(dc)} | {fmt_ratio(r)} | {us(do)} | "
                     f"{fmt_ratio(ratio(ot, do))} | {tf} |")
    lines.append("")
    for name, rs in groups.items():
        if rs:
            m = statistics.median(rs)
            verdict = "within" if 0.98 <= m <= 1.02 else "outside"
            lines.append(f"- {name}: median opbench/direct {m:.3f} over {len(rs)} rows ({verdict} 0.98-1.02; "
                         f"range {min(rs):.3f}-{max(rs):.3f})")
    for prefix, cache, public in PUBLIC:
        for k, d in direct.items():
            if label_of(k) != prefix or (cache is not None and k[4] != cache):
                continue
            figs = [(1, statistics.median(d["canonical"]))] if d["canonical"] else []
            figs += d["batched"]
            for calls, t in figs:
                lines.append(f"- {prefix} ({k[4]}, {calls} call{'s' if calls > 1 else ''} per sample): direct "
                             f"{d['flops'] / t * 1e-12:.1f} TFLOP/s ({d['paper_flops'] / t * 1e-12:.1f} by the "
                             f"paper's count); public: {public}")
    batched = [(label_of(k), k[4], calls, t, d["flops"]) for k, d in direct.items() for calls, t in d["batched"]]
    if batched:
        lines += ["", "Direct, back-to-back calls per sample (launch overhead amortised):", "",
                  "| case | cache | calls per sample | µs per call | TFLOP/s |", "| --- | --- | ---: | ---: | ---: |"]
        lines += [f"| {lab} | {cache} | {calls} | {us(t)} | {f / t * 1e-12:.1f} |"
                  for lab, cache, calls, t, f in sorted(batched)]
    if only:
        lines += ["", "Rows one side only:", ""]
        by_reason = {}
        for side, label, fig, why in only:
            by_reason.setdefault((side, why), []).append((label, fig))
        for (side, why), rows in by_reason.items():
            if len(rows) > 5 and why:  # one line for many rows that share a reason (a backend not usable)
                lines.append(f"- {len(rows)} rows {side} only: {why}")
                continue
            lines += [" ".join(x for x in (f"- {side} only: {label}", fig, why) if x) for label, fig in rows]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if matched == 0:
        print("compare_direct: no row of opbench matched a row of the direct program", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
