#!/usr/bin/env python3
"""The kernel timeline end to end on a CPU (issue 42).

    kernel_timeline_e2e_test.py OPBENCH SUITE FAKEGPU_PLUGIN WORKDIR

The fixture GPU plugin (tests/plugins/fake_gpu_plugin.cpp) offers ABI 1.6's
activity_begin / activity_end: each execute call "runs" three kernels of 10 us
with 10 us gaps between them (OPBENCH_FAKEGPU_TIMELINE=10,10,10,10,10), in
the scopes qk, softmax and pv, on stream 7 of a clock far from the host's.
`opbench run SUITE --profile --trace` of a composed attention must give:

  1. the set: each case's kernel_timeline with 3 kernels per call,
     50 us of device time per call, 30 us busy (60%), 20 us in gaps (40%, two
     of 10 us), gap-bound, the scopes at 20% each, example calls with the
     fixture's kernels; the console's one line per case, <= 100 columns;
  2. the trace: a "GPU stream 7 kernels" track on the device's process with
     3 kernels per recorded execute call, each call's kernels 10 us long and
     10 us apart (the gaps visible), aligned to the host's clock (inside the
     run's span, not at the fixture's device clock);
  3. analyze: the entry named gap-bound with its fixes (fuse, CUDA graph),
     and the components on device time (qk, softmax, pv at 20% each);
  4. OPBENCH_FAKEGPU_TIMELINE=refuse: the run carries on (the entry passes),
     its kernel_timeline says "refused" with the plugin's reason, and the
     console says so in one line, once;
  5. without the entries (the variable unset): no kernel_timeline field.
"""
import json
import os
import subprocess
import sys

OPBENCH, SUITE, FAKEGPU, WORK = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(args, env_extra, ok=(0,)):
    env = dict(os.environ, OPBENCH_PLUGIN_PATH=FAKEGPU, OPBENCH_CACHE_DIR=os.path.join(WORK, "cache"),
               **env_extra)
    p = subprocess.run([OPBENCH, *args], capture_output=True, text=True, env=env)
    if p.returncode not in ok:
        fail(f"opbench {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout + p.stderr


def profiled_run(tag, env):
    out, trace = os.path.join(WORK, tag + ".json"), os.path.join(WORK, tag + ".trace.json")
    console = run(["run", SUITE, "--out", out, "--force", "--no-progress", "--profile", "--trace", trace,
                   "--trace-schedule", "wait=0,warmup=1,active=2,repeat=1"], env, ok=(0, 1))
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    return out, doc, trace, console


def repetitions(doc):
    """Each case's first repetition: a set stores the per-case fields (kernel_timeline among
    them, context.opbench.per_case_fields) on it only."""
    if "kernel_timeline" not in doc["context"]["opbench"].get("per_case_fields", []):
        fail(f"kernel_timeline is not among per_case_fields: {doc['context']['opbench'].get('per_case_fields')}")
    reps, seen = [], set()
    for e in doc["benchmarks"]:
        if e.get("backend") == "fakegpu" and e.get("run_type") == "iteration" and e["run_name"] not in seen:
            seen.add(e["run_name"])
            reps.append(e)
    if not reps:
        fail("no fakegpu repetition in the set")
    return reps


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def check_set(doc, console):
    for e in repetitions(doc):
        if e.get("status") != "passed":
            fail(f"{e['name']}: status {e.get('status')}: {e.get('reason')}")
        t = e.get("kernel_timeline")
        if not isinstance(t, dict) or t.get("status") != "recorded":
            fail(f"{e['name']}: kernel_timeline {t!r}")
        want = {"kernels_per_call": 3, "device_seconds_per_call": 50e-6, "busy_seconds_per_call": 30e-6,
                "gap_seconds_per_call": 20e-6, "busy_share": 0.6, "gap_share": 0.4, "max_gap_seconds": 10e-6}
        for k, v in want.items():
            if not isinstance(t.get(k), (int, float)) or not close(t[k], v):
                fail(f"{e['name']}: kernel_timeline.{k} = {t.get(k)!r}, the fixture's kernels give {v}")
        if t.get("gap_bound") is not True or t.get("samples") != 2 or t.get("calls", 0) < 2:
            fail(f"{e['name']}: gap_bound {t.get('gap_bound')}, samples {t.get('samples')} (2 active), "
                 f"calls {t.get('calls')}")
        scopes = {s["scope"]: s for s in t.get("scopes", [])}
        if sorted(scopes) != ["pv", "qk", "softmax"] or not all(close(s["share"], 0.2) for s in scopes.values()):
            fail(f"{e['name']}: scopes {t.get('scopes')}: each of qk, softmax, pv is 10 of 50 us (20%)")
        ex = t.get("example_calls") or []
        if not ex or [k["name"] for k in ex[0]["kernels"]] != [f"fixture_kernel_{i}" for i in range(3)]:
            fail(f"{e['name']}: example_calls {ex[:1]}")
        if [round(g * 1e6, 6) for g in ex[0]["gaps_seconds"]] != [10, 10] or ex[0]["kernels"][0]["stream"] != 7:
            fail(f"{e['name']}: the first call's gaps {ex[0]['gaps_seconds']} (two of 10 us), stream 7")
    lines = [ln for ln in console.splitlines() if "kernels per call" in ln]
    if not lines or "busy 60%" not in lines[0] or "gaps 40%" not in lines[0]:
        fail(f"the console has no kernel timeline line with busy 60% and gaps 40%:\n{console}")
    # A line that is one file path alone (the machine cache's, under the
    # build directory) cannot wrap; a clone at a deep path ran it past 100.
    wide = [ln for ln in console.splitlines() if len(ln) > 100 and not is_a_path_alone(ln)]
    if wide:
        fail(f"console lines over 100 columns: {wide}")


def is_a_path_alone(line):
    word = line.strip().strip("()")
    return word.startswith("/") and " " not in word


def check_trace(path, doc):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    track = [e for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e["args"].get("name") == "GPU stream 7 kernels"]
    if len(track) != 1 or track[0]["pid"] != 2:
        fail(f"no 'GPU stream 7 kernels' track on the device's process (pid 2): {track}")
    tid = track[0]["tid"]
    kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("pid") == 2 and e.get("tid") == tid),
                     key=lambda e: e["ts"])
    executes = [e for e in events if e.get("ph") == "X" and e.get("name") == "execute"]
    if not kernels or len(kernels) != 3 * len(executes):
        fail(f"{len(kernels)} kernels on the GPU track for {len(executes)} recorded execute calls (3 each)")
    if any(e.get("cat") != "kernel" or not e["name"].startswith("fixture_kernel_") for e in kernels):
        fail(f"a GPU track event is not a fixture kernel: {kernels[:3]}")
    for k in kernels:
        if abs(k["dur"] - 10.0) > 1e-3:
            fail(f"a kernel of {k['dur']} us, the fixture's are 10: {k}")
    # The first call's kernels: the earliest of each name, not the three
    # earliest. The fixture's device never makes the host wait, so a sample
    # that starts under 40 us after the one before (a fast host) puts its
    # first kernel before that one's third on the track; its second and third
    # still come after that one's.
    first = [min((k for k in kernels if k["name"] == f"fixture_kernel_{i}"), key=lambda k: k["ts"])
             for i in range(3)]
    if any(k["args"].get("call") != 0 for k in first):
        fail(f"the earliest kernel of each name is not of a first call: {first}")
    gaps = [first[i + 1]["ts"] - (first[i]["ts"] + first[i]["dur"]) for i in range(2)]
    if any(abs(g - 10.0) > 1e-3 for g in gaps):
        fail(f"the first call's gaps on the GPU track are {gaps} us, the fixture's 10 us")
    run_span = [e for e in events if e.get("ph") == "X" and e.get("name") == "run"]
    if not run_span or not all(run_span[0]["ts"] <= k["ts"] <= run_span[0]["ts"] + run_span[0]["dur"]
                               for k in kernels):
        fail("kernels outside the run's span: the device clock was not aligned to the host's")
    first_exec = min(e["ts"] for e in executes)
    if abs(kernels[0]["ts"] - first_exec) > 1.0:
        fail(f"the first kernel at {kernels[0]['ts']} us, the first recorded execute at {first_exec} us")


def check_analyze(out):
    text = run(["analyze", out], {})
    if "gap-bound" not in text or "fuse" not in text or "CUDA graph" not in text:
        fail(f"analyze names no gap-bound entry with its fixes (fuse, CUDA graphs):\n{text}")
    js = json.loads(run(["analyze", out, "--format", "json"], {}))
    entries = js.get("data", js).get("entries", [])
    if not entries:
        fail(f"analyze --format json has no entries: {str(js)[:2000]}")
    a = entries[0]
    if not a.get("kernel_timeline", {}).get("gap_bound"):
        fail(f"analyze's entry has no gap-bound kernel_timeline: {a}")
    comp = a.get("components") or {}
    shares = {s["component"]: s["share"] for s in comp.get("shares", [])}
    if not comp.get("device_time") or sorted(shares) != ["pv", "qk", "softmax"] or \
            not all(close(v, 0.2) for v in shares.values()):
        fail(f"analyze's components are not the device time's (qk, softmax, pv at 20%): {comp}")
    wide = [ln for ln in text.splitlines() if len(ln) > 100]
    if wide:
        fail(f"analyze lines over 100 columns: {wide}")


def main():
    env = {"OPBENCH_FAKEGPU_TIMELINE": "10,10,10,10,10", "OPBENCH_FAKEGPU_TIMELINE_SCOPES": "qk,softmax,pv"}
    out, doc, trace, console = profiled_run("recorded", env)
    check_set(doc, console)
    check_trace(trace, doc)
    check_analyze(out)
    print("recorded: kernels per call, busy share and gaps in the set; the GPU track; analyze's gap-bound")

    _, doc, _, console = profiled_run("refused", {"OPBENCH_FAKEGPU_TIMELINE": "refuse"})
    for e in repetitions(doc):
        t = e.get("kernel_timeline") or {}
        if e.get("status") != "passed" or t.get("status") != "refused" or "INSUFFICIENT_PRIVILEGES" not in \
                t.get("reason", ""):
            fail(f"{e['name']}: status {e.get('status')}, kernel_timeline {t}: the run must carry on and say why")
    said = [ln for ln in console.splitlines() if "no kernel timeline" in ln]
    if len(said) != 1 or "INSUFFICIENT_PRIVILEGES" not in console:
        fail(f"the refusal is said {len(said)} times (once expected, with the reason):\n{console}")
    print("refused: the run carried on; the entry and the console say why, once")

    _, doc, _, _ = profiled_run("absent", {})
    if any("kernel_timeline" in e for e in repetitions(doc)):
        fail("a plugin without the entries got a kernel_timeline field")
    print("absent: no kernel_timeline field")


main()
