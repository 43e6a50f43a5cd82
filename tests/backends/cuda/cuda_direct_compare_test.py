#!/usr/bin/env python3
"""compare_direct.py (backends/cuda/bench; issue 41 item 5) on fixture files:
an opbench result set (backend cuda) and cuda-direct-bench's JSON, written
here with the fields each really writes (results/README.md; direct_cases.cpp
write_json). Checks the matching, the ratios over both timings, the summary
against 0.98-1.02, the rows one side only has, and the refusals.

usage: cuda_direct_compare_test.py SOURCE_ROOT"""
import json
import os
import subprocess
import sys
import tempfile

MM = {"B": 1, "K": 2048, "M": 2048, "N": 2048, "bias": False, "trans_a": False, "trans_b": False}
ATT = {"B": 4, "D": 128, "H": 16, "KVH": 16, "Skv": 4096, "Sq": 4096, "causal": True}


def opbench_set(entries):
    benchmarks = []
    for op, dtype, variant, params, cache, device_times, status in entries:
        for i, t in enumerate(device_times or [None]):
            p = dict(params)
            if op == "attention":
                p["scale"] = 0.08838834764831845
            benchmarks.append({
                "name": f"{op}/.../be:cuda", "run_type": "iteration", "repetition_index": i, "backend": "cuda",
                "op": op, "dtype": dtype, "variant": variant, "params": p, "status": status,
                "reason": "" if status == "passed" else "cuDNN refused",
                "settings": {"cache": cache, "warmup": 2},
                "stats": {"median": (t or 0) * 1.3, "device_time_per_call": t},
            })
    return {"context": {"opbench": {"version": "0.1.0"}}, "benchmarks": benchmarks}


def direct_json(entries):
    out = []
    for entry in entries:
        op, dtype, variant, params, cache, timing, medians, status = entry[:8]
        calls = entry[8] if len(entry) > 8 else 1
        flops = 2.0 * 2048 ** 3 if op == "matmul" else 1.1e12
        out.append({
            "name": f"{op}/.../be:cuda-direct", "op": op, "dtype": dtype, "variant": variant, "label": dtype,
            "suite_case": "gemm:square", "params": params, "cache": cache, "timing": timing, "status": status,
            "reason": "" if status == "passed" else "fp8 e4m3 GEMMs need sm_89 or newer", "flops": flops,
            "paper_flops": flops if op == "matmul" else 1.09e12,
            "seconds_per_call": medians[len(medians) // 2] if medians else None, "tflops": None,
            "paper_tflops": None, "spread": 0, "repetition_medians": medians, "samples": [100] * len(medians),
            "calls_per_sample": calls, "check_error": 1e-6, "kernel": "cuBLASLt algo 66", "workspace_bytes": 0,
        })
    return {"context": {"program": "cuda-direct-bench", "date": "2026-11-28T10:00:00Z",
                        "device": {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-x", "cc": "9.0", "sm_count": 132,
                                   "l2_bytes": 52428800, "memory_bytes": 85000000000, "sm_clock_mhz": 1980},
                        "versions": {"driver": "CUDA 13.0", "runtime": "13.0", "cublaslt": "13.1.0",
                                     "cudnn": "9.14.0"},
                        "settings": {"warmup": 2}},
            "entries": out}


def run(script, files):
    r = subprocess.run([sys.executable, script] + files, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def main():
    root = sys.argv[1]
    script = os.path.join(root, "backends", "cuda", "bench", "compare_direct.py")
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        ob = os.path.join(d, "opbench-cold.json")
        di = os.path.join(d, "direct-cold.json")
        fp8 = dict(MM, trans_b=True)
        json.dump(opbench_set([
            ("matmul", "bf16", "default", MM, "cold", [31e-6, 30e-6, 32e-6], "passed"),
            ("matmul", "f32", "tf32", MM, "cold", [101e-6, 100e-6, 99e-6], "passed"),
            ("attention", "bf16", "fused", ATT, "cold", [2.00e-3, 2.02e-3, 1.98e-3], "passed"),
        ]), open(ob, "w"))
        json.dump(direct_json([
            ("matmul", "bf16", "default", MM, "cold", "canonical", [25e-6, 25e-6, 25e-6], "passed"),
            ("matmul", "bf16", "default", MM, "cold", "opbench-order", [31e-6, 31e-6, 31e-6], "passed"),
            ("matmul", "f32", "tf32", MM, "cold", "canonical", [100e-6, 100e-6, 100e-6], "passed"),
            ("matmul", "f32", "tf32", MM, "cold", "opbench-order", [105e-6, 105e-6, 105e-6], "passed"),
            ("attention", "bf16", "fused", ATT, "cold", "canonical", [2.0e-3, 2.0e-3, 2.0e-3], "passed"),
            ("matmul", "f8e4m3", "default", fp8, "cold", "canonical", [], "skipped"),
        ]), open(di, "w"))
        b2b = os.path.join(d, "direct-warm-b2b.json")
        json.dump(direct_json([
            ("matmul", "bf16", "default", MM, "warm", "canonical", [26e-6, 25.4e-6, 25e-6], "passed", 20),
        ]), open(b2b, "w"))
        rc, out, err = run(script, [ob, di, b2b])
        expect(rc == 0, f"exit {rc} ({err})")
        row = [l for l in out.splitlines()
               if l.startswith("| matmul/B:1/M:2048/N:2048/K:2048/variant:default/dt:bf16 | cold |")]
        expect(len(row) == 1, f"one bf16 row: {out}")
        if row:
            cells = [c.strip() for c in row[0].split("|")]
            expect(cells[2:8] == ["cold", "31.00", "25.00", "1.240", "31.00", "1.000"], f"bf16 cells: {cells}")
        expect("| matmul/B:1/M:2048/N:2048/K:2048/variant:tf32/dt:f32 | cold | 100.00 | 100.00 | 1.000 |" in out,
               f"tf32 row: {out}")
        # Summary: gemm median of 1.24 and 1.0 is 1.12 (outside), attention 1.0 (within).
        expect("- gemm: median opbench/direct 1.120 over 2 rows (outside 0.98-1.02" in out, f"gemm summary: {out}")
        expect("- attention: median opbench/direct 1.000 over 1 rows (within 0.98-1.02" in out, f"attention: {out}")
        expect("paper)" in out, "attention rows carry the paper's count")
        expect("518 TFLOP/s" in out and "FlashAttention-3" in out, "the public FA3 figure is set beside")
        expect("direct only: matmul/B:1/M:2048/N:2048/K:2048/tB:1/variant:default/dt:f8e4m3 (cold)" in out
               and "sm_89" in out, f"fp8 row listed apart with its reason: {out}")
        # Back-to-back direct figures: apart, never in a ratio, and beside the public warm figure.
        expect("| matmul/B:1/M:2048/N:2048/K:2048/variant:default/dt:bf16 | warm | 20 | 25.40 | 676.4 |" in out,
               f"back-to-back row: {out}")
        expect("(warm, 20 calls per sample): direct 676.4 TFLOP/s" in out and "677" in out, f"public warm: {out}")
        expect("direct only: matmul/B:1/M:2048/N:2048/K:2048/variant:default/dt:bf16 (warm)" not in out,
               "back-to-back figures are not rows without a partner")
        expect("NVIDIA H100 80GB HBM3 (sm_9.0), cuBLASLt 13.1.0, cuDNN 9.14.0" in out, "device line")

        # Nothing matched: exit 2 with the reason.
        only_direct = os.path.join(d, "only.json")
        json.dump(direct_json([("matmul", "bf16", "default", MM, "warm", "canonical", [25e-6], "passed")]),
                  open(only_direct, "w"))
        rc, out, err = run(script, [ob, only_direct])
        expect(rc == 2 and "no row of opbench matched" in err, f"no match: exit {rc}, {err}")

        # A file that is neither: refused by name.
        other = os.path.join(d, "other.json")
        json.dump({"benchmarks": []}, open(other, "w"))
        rc, out, err = run(script, [ob, other])
        expect(rc != 0 and "other.json" in err and "neither" in err, f"unknown file: exit {rc}, {err}")
        broken = os.path.join(d, "broken.json")
        open(broken, "w").write("{")
        rc, out, err = run(script, [broken])
        expect(rc != 0 and "broken.json" in err, f"broken file: exit {rc}, {err}")

    for f in failures:
        print("FAIL:", f)
    print(f"cuda_direct_compare: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
