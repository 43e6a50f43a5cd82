#!/usr/bin/env python3
"""GPU entries judged by their device's measured roofs, and throttled
repetitions, end to end on a CPU (issue 41).

    device_roofs_e2e_test.py OPBENCH SUITE FAKEGPU_PLUGIN WORKDIR

The fixture GPU plugin (tests/plugins/fake_gpu_plugin.cpp) is naive
presented as a GPU whose ABI 1.5 entries give fixture roofs and a fixture
SM clock. Four runs of SUITE (tests/harness/device_roofs.toml), each with a
roof cache of its own:

  1. tiny roofs: each entry's roof by op, dtype and ridge point (simt f32,
     tensor bf16, tensor s8, dram for a GEMV and softmax, none for f16), its
     share (the entry's rate over the roof, as recorded), a cause for every
     share above 100%, and the same roof named in the run console, compare
     --by backend and --by machine, the report, analyze and the Python loader;
  2. the roofs x 1e9: every share below 100%, no cause;
  3. a clock at 900 MHz of a sustained 1500: every entry `throttled` in the
     set, the console, compare, analyze, the report and the loader;
  4. the roof measurement failing: the set says why, and no entry is judged
     by a device roof.
No time is asserted: the shares are checked against the recorded times.
"""
import atexit
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import opbench_results  # noqa: E402

OPBENCH, SUITE, FAKEGPU, WORK = sys.argv[1:5]
# (case, dtype) -> the roof that must judge it; None: no roof measured for it.
EXPECTED = {("gemm", "f32"): "simt f32", ("gemm", "bf16"): "tensor bf16", ("gemm", "f16"): None,
            ("gemm", "s8"): "tensor s8", ("gemv", "f32"): "dram", ("rows", "f32"): "dram"}
DATASHEET = {"simt f32": 2e6, "tensor bf16": None, "tensor s8": None, "dram": 1e18}


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(args, env_extra, ok=(0,)):
    env = dict(os.environ, OPBENCH_PLUGIN_PATH=FAKEGPU, **env_extra)
    p = subprocess.run([OPBENCH, *args], capture_output=True, text=True, env=env)
    if p.returncode not in ok:
        fail(f"opbench {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout + p.stderr


def measured_set(tag, **env):
    # The cache under /tmp: the run's console names its file, a path that
    # cannot wrap, and the build directory's (CI's build-asan/...) ran it
    # past 100 columns.
    out = os.path.join(WORK, tag + ".json")
    # A busy machine can starve an entry (no time to judge): measured again,
    # up to 3 runs in all, so the checks below always have every entry. Each
    # run its own cache, so each measures the roofs (not reads them).
    for attempt in range(1, 4):
        cache = tempfile.mkdtemp(prefix=f"opb-roofs-{tag}-")
        atexit.register(shutil.rmtree, cache, ignore_errors=True)
        console = run(["run", SUITE, "--out", out, "--force", "--no-progress"],
                      dict(OPBENCH_CACHE_DIR=cache, **env), ok=(0, 1))
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        starved = sorted({e["name"] for e in doc["benchmarks"]
                          if e.get("backend") == "fakegpu" and e.get("status") == "starved"})
        if not starved:
            break
        print(f"{tag}: run {attempt} starved {len(starved)} fakegpu entries (a busy machine), e.g. {starved[0]}")
    return out, doc, console


def gpu_entries(doc):
    """The fakegpu entries with a time: (case, dtype) -> first iteration entry."""
    out = {}
    for e in doc["benchmarks"]:
        if e.get("backend") == "fakegpu" and e.get("run_type") == "iteration" and e.get("status") == "passed":
            out.setdefault((e["case"], e["dtype"]), e)
    return out


def check_judgements(doc, above):
    """Each entry's recorded roof, share and cause; returns the roofs seen."""
    entries = gpu_entries(doc)
    missing = set(EXPECTED) - set(entries) - {("gemm", "f16")}  # naive may not run f16
    if missing:
        fail(f"no timed fakegpu entry for {sorted(missing)}")
    seen = set()
    for key, e in entries.items():
        roofline = e.get("roofline") or {}
        dev = roofline.get("device_roof")
        if not isinstance(dev, dict):
            fail(f"{key}: no roofline.device_roof: {roofline}")
        want = EXPECTED[key]
        if dev.get("roof") != want:
            fail(f"{key}: judged by {dev.get('roof')!r}, its op, dtype and ridge point give {want!r}")
        if want is None:
            if "tensor f16" not in dev.get("missing", ""):
                fail(f"{key}: no roof, and no word of which: {dev}")
            continue
        seen.add(want)
        if dev.get("datasheet") != DATASHEET[want] and not (DATASHEET[want] and
                                                            math.isclose(dev["datasheet"], DATASHEET[want] * above[1])):
            fail(f"{key}: datasheet {dev.get('datasheet')!r}, the plugin gave {DATASHEET[want]!r}")
        median = e["summary"]["median_seconds"]
        rate = (e["bytes"] if want == "dram" else e["flops"]) / median
        if not math.isclose(dev["share"], rate / dev["measured"], rel_tol=1e-6):
            fail(f"{key}: share {dev['share']}, the rate over the roof is {rate / dev['measured']}")
        pct = roofline["pct_peak_bandwidth" if want == "dram" else "pct_peak_compute"]
        if not math.isclose(pct, 100 * dev["share"], rel_tol=1e-6):
            fail(f"{key}: % of peak {pct}, the share is {dev['share']}")
        if above[0] and not (dev["share"] > 1 and "above the" in dev["cause"] and roofline["above_roof_cause"]):
            fail(f"{key}: a share of {dev['share']:.3g} without its cause: {dev}, {roofline['above_roof_cause']!r}")
        if not above[0] and (dev["share"] >= 1 or dev["cause"] or roofline["above_roof_cause"]):
            fail(f"{key}: a share of {dev['share']:.3g} at roofs x1e9, or a cause for none: {dev}")
    return seen


def check_views(path, console, roofs):
    """Every view that shows a % of peak names the device roof that judged it."""
    lines = console.splitlines()
    for i, line in enumerate(lines):
        if len(line) > 100:
            fail(f"run console line over 100 columns: {line!r}")
        # f16, whose roof was not measured: no % shown (not its DRAM share).
        if "dt:f16" in line and "be:fakegpu" in line and "%" in lines[i + 1].split("GFLOP/s")[-1].split("passed")[0]:
            fail(f"an f16 entry, without a measured roof, shows a % of peak: {lines[i + 1]!r}")
    views = {"run console": console,
             "compare --by backend": run(["compare", path, "--by", "backend"], {}),
             "compare --by machine": run(["compare", path, "--by", "machine", "--wide"], {}),
             "compare --by machine (markdown)": run(["compare", path, "--by", "machine", "--format", "markdown"], {})}
    report = os.path.join(WORK, "report.html")
    run(["report", path, "-o", report, "--force"], {})
    with open(report, encoding="utf-8") as f:
        views["report"] = f.read()
    for name, text in views.items():
        for roof in roofs:
            if not re.search(r"\d+% " + roof + r"\b", text):
                fail(f"{name}: no '% {roof}' shown:\n{text[:4000]}")
        if "% peak above 100%" not in text and "% peak above 100%".replace("%", "&#37;") not in text:
            fail(f"{name}: shares above 100% shown without the note of their cause:\n{text[:4000]}")
    analyze = run(["analyze", path, "--wide", "--top", "100"], {})
    if "device roofs measured by fakegpu: tensor bf16, dram" not in analyze:
        fail(f"analyze does not judge against the device's measured roofs:\n{analyze}")
    if "no roofline: its device's plugin (fakegpu) measured no tensor f16 roof" not in " ".join(analyze.split()):
        fail(f"analyze does not say which roof an f16 entry lacks:\n{analyze}")
    # The Python loader reads the same shares as opbench's views.
    by_name = {r["name"]: r for r in opbench_results.load_records(path)}
    with open(path, encoding="utf-8") as f:
        for e in gpu_entries(json.load(f)).values():
            dev = e["roofline"]["device_roof"]
            r = by_name[e["run_name"].removesuffix("/manual_time")]
            if dev["roof"] and not math.isclose(r["pct_peak_compute" if dev["roof"] != "dram" else
                                                  "pct_peak_bandwidth"], 100 * dev["share"], rel_tol=1e-6):
                fail(f"loader: {e['run_name']} % of peak differs from the recorded share")


def check_throttled(path, doc, console):
    entries = gpu_entries(doc)
    for key, e in entries.items():
        if e["summary"]["quality"] != "throttled" or not e["stats"]["throttled"]:
            fail(f"{key}: at 900 MHz of a sustained 1500, quality {e['summary']['quality']}")
        # 2 re-measures for the clock; a busy machine may add starved ones
        if e["stats"]["sm_clock_mhz"] != 900 or e["stats"]["remeasured"] < 2:
            fail(f"{key}: clock {e['stats']['sm_clock_mhz']}, remeasured {e['stats']['remeasured']}")
        if (e.get("bottleneck") or {}).get("kind") != "throttled":
            fail(f"{key}: bottleneck {e.get('bottleneck')}, not throttled")
    views = {"run console": console, "compare --by backend": run(["compare", path, "--by", "backend", "--wide"], {}),
             "compare": run(["compare", path, path], {}), "analyze": run(["analyze", path], {})}
    report = os.path.join(WORK, "report-throttled.html")
    run(["report", path, "-o", report, "--force"], {})
    with open(report, encoding="utf-8") as f:
        views["report"] = f.read()
    for name, text in views.items():
        if "throttled" not in text:
            fail(f"{name}: throttled entries shown without the word:\n{text[:4000]}")
    for r in opbench_results.load_records(path):
        if r["backend"] == "fakegpu" and r["status"] == "ok" and r["quality"] != "throttled":
            fail(f"loader: {r['name']} quality {r['quality']}")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    path, doc, console = measured_set("tiny")
    ctx = doc["context"]["opbench"]["backends"]["fakegpu"]
    if not ctx.get("device_roofs", {}).get("roofs") or "measured" not in ctx.get("device_roofs_origin", ""):
        fail(f"the set holds no device roofs: {ctx}")
    roofs = check_judgements(doc, (True, 1))
    check_views(path, console, roofs)
    _, big, _ = measured_set("x1e9", OPBENCH_FAKEGPU_ROOF_SCALE="1e9")
    check_judgements(big, (False, 1e9))
    tpath, throttled, tconsole = measured_set("throttled", OPBENCH_FAKEGPU_CLOCK_MHZ="900")
    check_throttled(tpath, throttled, tconsole)
    _, failed, fconsole = measured_set("failed", OPBENCH_FAKEGPU_ROOFS="fail")
    ctx = failed["context"]["opbench"]["backends"]["fakegpu"]
    if "measure_roofs failed" not in ctx.get("device_roofs_error", "") or "device_roofs" in ctx:
        fail(f"a failed roof measurement is not recorded: {ctx}")
    for key, e in gpu_entries(failed).items():
        if "device_roof" in (e.get("roofline") or {}):
            fail(f"{key}: judged by a device roof its plugin failed to measure")
    print("device roofs and throttled entries: every check passed")


main()
