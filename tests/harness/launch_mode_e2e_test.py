#!/usr/bin/env python3
"""The launch modes end to end on a CPU (issue 41 item 3).

    launch_mode_e2e_test.py OPBENCH SUITE FAKEGPU_PLUGIN WORKDIR

The fixture GPU plugin (tests/plugins/fake_gpu_plugin.cpp) offers ABI 1.6's
graph_prepare / graph_launch / graph_release (OPBENCH_FAKEGPU_GRAPH=on) and
logs each (OPBENCH_FAKEGPU_GRAPH_LOG). It checks:

  1. default: the entry's settings record launch "single"; its name has no
     launch part;
  2. --launch batch: settings.launch "batch", the name ".../launch:batch";
  3. --launch graph on fakegpu with graph entries: settings.launch "graph";
     the log's captures: one per worker process, each of the entry's calls
     per sample, each released once; its launches: one per sample;
  4. --launch graph on naive (no graph entries): the run says, in one line
     naming the backend, that it measured batch and why, once; the entry
     records launch "batch", launch_requested "graph" and the reason;
  5. OPBENCH_FAKEGPU_GRAPH=refuse: the same with the plugin's reason;
  6. --launch batch or graph with --cache cold: refused (exit 2, as other
     usage errors), the message naming launch, cache and the valid value;
  7. a suite with launch = "hot": file:line:col and the valid values; a suite
     with cache = "cold" and launch = "batch": the launch key's location.
"""
import json
import os
import re
import subprocess
import sys

OPBENCH, SUITE, FAKEGPU, WORK = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run(args, env_extra=None, ok=(0,)):
    env = dict(os.environ, OPBENCH_PLUGIN_PATH=FAKEGPU, OPBENCH_CACHE_DIR=os.path.join(WORK, "cache"),
               OPBENCH_FAKEGPU_DEVICE_SHARE="0.5", **(env_extra or {}))
    p = subprocess.run([OPBENCH, *args], capture_output=True, text=True, env=env)
    if p.returncode not in ok:
        fail(f"opbench {' '.join(args)} exited {p.returncode} (expected {ok}):\n{p.stdout}\n{p.stderr}")
    return p


def measured(tag, extra_args, env_extra=None):
    out = os.path.join(WORK, tag + ".json")
    p = run(["run", SUITE, "--out", out, "--force", "--no-progress", *extra_args], env_extra)
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    entries = [e for e in doc["benchmarks"] if e.get("run_type") == "iteration"]
    if not entries:
        fail(f"{tag}: no iteration entry in the set")
    first = entries[0]  # the per-case fields (settings among them) are on the first
    # starved (a loaded machine, CI's other tests beside it) still records how it was measured
    if first.get("status") not in ("passed", "starved"):
        fail(f"{tag}: entry {first.get('name')} is {first.get('status')}: {first.get('reason')}")
    return doc, entries, first, p.stdout + p.stderr


def check_console_widths(tag, console):
    for line in console.splitlines():
        if len(line) > 100:
            fail(f"{tag}: console line of {len(line)} columns: {line!r}")


def check_default():
    _, _, first, _ = measured("single", [])
    if first["settings"].get("launch") != "single":
        fail(f"default run: settings.launch is {first['settings'].get('launch')!r}, expected 'single'")
    if "launch:" in first["name"]:
        fail(f"default run: the name has a launch part: {first['name']}")


def check_batch():
    _, _, first, _ = measured("batch", ["--launch", "batch"])
    if first["settings"].get("launch") != "batch" or "launch_fallback" in first["settings"]:
        fail(f"--launch batch: settings {first['settings']}")
    if "/launch:batch" not in first["name"]:
        fail(f"--launch batch: the name lacks /launch:batch: {first['name']}")


def graph_log(tag):
    path = os.path.join(WORK, tag + ".graph.log")
    if os.path.exists(path):
        os.remove(path)
    return path


def samples_of(entries):
    """Samples per repetition, from each entry's stored sample count."""
    counts = []
    for e in entries:
        n = (e.get("stats") or {}).get("samples")
        if n is None:
            fail(f"entry {e.get('name')} has no stats.samples: keys {sorted(e)}")
        counts.append(int(n))
    return counts


def check_graph():
    log = graph_log("graph")
    _, entries, first, console = measured("graph", ["--launch", "graph"],
                                          {"OPBENCH_FAKEGPU_GRAPH": "on", "OPBENCH_FAKEGPU_GRAPH_LOG": log})
    if first["settings"].get("launch") != "graph" or "launch_fallback" in first["settings"]:
        fail(f"--launch graph: settings {first['settings']}")
    if "measured as batch" in console:
        fail(f"--launch graph with graph entries fell back:\n{console}")
    with open(log, encoding="utf-8") as f:
        lines = f.read().split()
    words = " ".join(lines)
    prepares = [int(k) for k in re.findall(r"prepare (\d+)", words)]
    launches = [int(k) for k in re.findall(r"launch (\d+)", words)]
    releases = words.count("release")
    calls = {int(e["stats"]["calls_per_sample"]) for e in entries}
    if not prepares or releases != len(prepares):
        fail(f"--launch graph: {len(prepares)} captures, {releases} releases (each capture released once)")
    if len(prepares) > len(entries):
        fail(f"--launch graph: {len(prepares)} captures for {len(entries)} repetitions: more than one per process")
    if set(prepares) != calls or set(launches) != calls:
        fail(f"--launch graph: captured {set(prepares)}, launched {set(launches)}, entries' calls {calls}")
    # A starved repetition measured again launched samples the set does not keep.
    samples = sum(samples_of(entries))
    again = sum(int((e.get("stats") or {}).get("remeasured") or 0) for e in entries)
    if (again == 0 and len(launches) != samples) or len(launches) < samples:
        fail(f"--launch graph: {len(launches)} launches for {samples} samples ({again} repetitions measured again)")


def check_fallback(tag, extra_args, env_extra, backend, reason):
    _, _, first, console = measured(tag, extra_args, env_extra)
    s = first["settings"]
    if s.get("launch") != "batch" or s.get("launch_requested") != "graph" or reason not in s.get("launch_fallback", ""):
        fail(f"{tag}: settings {s}")
    said = [line for line in console.splitlines() if "launch graph measured as batch" in line]
    if len(said) != 1 or not said[0].startswith(f"opbench: {backend}:"):
        fail(f"{tag}: expected one line naming {backend}, got {said}:\n{console}")
    if reason not in " ".join(console.split()):  # a long line is wrapped at 100 columns
        fail(f"{tag}: the console does not give the reason {reason!r}:\n{console}")
    check_console_widths(tag, console)


def check_cold_refused():
    for mode in ("batch", "graph"):
        p = run(["run", SUITE, "--out", os.path.join(WORK, "cold.json"), "--force", "--no-progress",
                 "--cache", "cold", "--launch", mode], ok=(2,))
        text = p.stdout + p.stderr
        for part in (f"launch '{mode}'", "cache 'warm'", "launch 'single'"):
            if part not in text:
                fail(f"--cache cold --launch {mode}: the message lacks {part!r}:\n{text}")


def check_suite_errors():
    bad = os.path.join(WORK, "bad_launch.toml")
    with open(SUITE, encoding="utf-8") as f:
        text = f.read()
    with open(bad, "w", encoding="utf-8") as f:
        f.write(text.replace("threads = 1\n", 'threads = 1\nlaunch = "hot"\n'))
    p = run(["run", bad, "--out", os.path.join(WORK, "bad.json"), "--force"], ok=(2,))
    line = text.split("\n").index("threads = 1") + 2
    if not re.search(rf"bad_launch\.toml:{line}:\d+:.*unknown launch mode 'hot' \(valid: single, batch, graph\)",
                     p.stderr):
        fail(f"launch = \"hot\": expected file:{line}:col and the valid values:\n{p.stderr}")
    cold = os.path.join(WORK, "cold_batch.toml")
    with open(cold, "w", encoding="utf-8") as f:
        f.write(text.replace("threads = 1\n", 'threads = 1\ncache = "cold"\nlaunch = "batch"\n'))
    p = run(["run", cold, "--out", os.path.join(WORK, "bad.json"), "--force"], ok=(2,))
    if not re.search(rf"cold_batch\.toml:{line + 1}:\d+:.*launch 'batch' needs cache 'warm'", p.stderr):
        fail(f"cache cold + launch batch in a suite: expected the launch key's file:{line + 1}:col:\n{p.stderr}")


check_default()
check_batch()
check_graph()
check_fallback("naive_fallback", ["--launch", "graph", "--backends", "naive"], None, "naive",
               "naive has no graph entries")
check_fallback("refused", ["--launch", "graph"], {"OPBENCH_FAKEGPU_GRAPH": "refuse"}, "fakegpu",
               "operation not permitted when stream is capturing (fixture)")
check_cold_refused()
check_suite_errors()
print("launch modes: single, batch and graph recorded; graph one capture per process, one launch per sample; "
      "fallback said once and recorded; cold refused; suite errors located")
