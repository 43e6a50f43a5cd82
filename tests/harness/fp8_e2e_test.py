#!/usr/bin/env python3
"""Issue 42 (FP8 as a dtype, e4m3) through the real program, no GPU needed:
  1. a suite with dtype "f8e4m3" on matmul (linear layers with bias, an f32 and
     a bf16 output) runs on naive: verified (full and fast), named dt:f8e4m3,
     bytes counting the 1-byte operands, the f32 scales and the output;
  2. onednn (where built) skips each FP8 case with one line naming what runs it;
  3. f8e4m3 on an op other than matmul is refused at the dtype with why;
  4. `compare --by backend` lists the levels of one shape f32 -> tf32 -> bf16 ->
     f8e4m3 whatever order the suite gave them.
usage: fp8_e2e_test.py OPBENCH NAIVE_PLUGIN [ONEDNN_PLUGIN]"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

opbench, naive = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
onednn = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else ""
work = tempfile.mkdtemp(prefix="opbench-fp8-")
if not os.environ.get("KEEP"):
    atexit.register(shutil.rmtree, work, True)
env = dict(os.environ, OPBENCH_PLUGIN_PATH=":".join(p for p in (naive, onednn) if p))
backends = "naive,onednn" if onednn else "naive"

SUITE = """
[suite]
name = "fp8-e2e"
[defaults]
warmup = 0
min_time = 0.001
max_time = 0.05
min_samples = 1
repetitions = 1
[[case]]
op = "matmul"
name = "linear"
m = 8
n = 32
k = 64
trans_b = true
bias = true
dtype = ["f8e4m3", "bf16", "f32"]
[[case]]
op = "matmul"
name = "linear"
m = 8
n = 32
k = 64
trans_b = true
bias = true
variant = "tf32"
[[case]]
op = "matmul"
name = "linear.out"
m = 4
n = 16
k = 32
trans_b = true
dtype = "f8e4m3"
out_dtype = "bf16"
"""


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(*args, ok=True):
    p = subprocess.run([opbench, *args], cwd=work, env=env, capture_output=True, text=True)
    if ok and p.returncode != 0:
        print(p.stdout, p.stderr)
        fail(f"opbench {' '.join(args)} exited {p.returncode}")
    return p


with open(os.path.join(work, "fp8.toml"), "w") as f:
    f.write(SUITE)

print("== 1, 2: run on", backends)
for verify in ("full", "fast"):
    out = f"fp8-{verify}.json"
    run("run", "fp8.toml", "--backends", backends, "--verify", verify, "--no-progress", "--out", out)
    entries = json.load(open(os.path.join(work, out)))["benchmarks"]
    fp8 = [e for e in entries if e.get("dtype") == "f8e4m3"]
    if not fp8:
        fail("no f8e4m3 entries")
    for e in fp8:
        if "/dt:f8e4m3/" not in e["name"]:
            fail(f"name without dt:f8e4m3: {e['name']}")
        if e["backend"] == "naive":
            # Timing may be starved beside CPU hogs; verification is what this checks.
            if e["status"] in ("failed", "skipped") or not e.get("verified"):
                fail(f"naive fp8 not verified ({verify}): {e['name']}: {e['status']} {e.get('reason')}")
            p = e["params"]
            out_bytes = 2 if "/out:bf16/" in e["name"] else 4
            want = p["M"] * p["K"] + p["K"] * p["N"] + 4 + 4 + (4 * p["N"] if p["bias"] else 0) + \
                out_bytes * p["M"] * p["N"]
            if e["bytes"] != want:
                fail(f"{e['name']}: bytes {e['bytes']}, want {want}")
            if verify == "fast" and e["verification"].get("method") != "freivalds":
                fail(f"{e['name']}: fast verification by {e['verification'].get('method')}")
        elif e["backend"] == "onednn":
            why = e.get("reason", "")
            if e["status"] != "skipped" or "cuda" not in why or "sm_89" not in why or "\n" in why:
                fail(f"onednn fp8 not skipped with one line naming cuda sm_89+: {e['status']} {why!r}")
    if not any("/out:bf16/" in e["name"] and e["backend"] == "naive" for e in fp8):
        fail("no bf16-output fp8 entry")
    print(f"   {verify}: {len(fp8)} fp8 entries as expected")

print("== 3: f8e4m3 on softmax is refused at the dtype")
with open(os.path.join(work, "bad.toml"), "w") as f:
    f.write('[suite]\nname = "bad"\n[[case]]\nop = "softmax"\nrows = 4\ncols = 8\ndtype = "f8e4m3"\n')
p = run("validate", "bad.toml", ok=False)
text = p.stdout + p.stderr
if p.returncode == 0 or "f8e4m3" not in text or "matmul" not in text:
    fail(f"softmax f8e4m3 not refused with why (exit {p.returncode}): {text}")
p = run("validate", "fp8.toml")

print("== 4: compare --by backend orders the levels f32 -> tf32 -> bf16 -> f8e4m3")
p = run("compare", "--by", "backend", "fp8-full.json", "--format", "json")
doc = json.loads(p.stdout)
levels = []
for r in doc["rows"]:
    label = r["case"]
    if "linear" not in label or "linear.out" in label:
        continue
    levels.append("tf32" if "tf32" in label else next((d for d in ("f8e4m3", "bf16", "f32") if d in label), label))
if levels != ["f32", "tf32", "bf16", "f8e4m3"]:
    fail(f"level rows in order {levels}")
print("PASS")
