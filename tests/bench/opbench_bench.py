#!/usr/bin/python3
"""Measurement proof for opbench (issue 5, "Proof"): benchmarks, not tests.

Each subcommand runs the real opbench program (and, where it compares with
one, the hand-written direct loops of direct_kernels.cpp), then prints a
table. docs/measurement.md explains the method of each and holds a run's
figures. Registered with Meson's benchmark() (tests/bench/meson.build):

    meson test -C build --benchmark --suite proof -v
    /usr/bin/python3 tests/bench/opbench_bench.py --opbench build/harness/opbench \
        --direct build/tests/bench/direct_kernels --source-root . call-path

Subcommands: call-path, accuracy, repeatability, cost, attention-memory,
isolation, scopes-off (needs a second build: meson setup build-noscopes -Dprofiling_scopes=false,
then --opbench-noscopes build-noscopes/harness/opbench), time-to-result, fast-power (issue 10:
verification's cost and power).
Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib
import time

ARGS = None
CRASHES_AT_EXIT = []  # opbench runs that died at exit after writing their result set


def here(*parts):
    return os.path.join(ARGS.source_root, *parts)


def run_opbench(suite, extra=(), env=None, failed_cases_ok=False, keep_output=None, opbench=None):
    """Runs `opbench run`; returns (result set, wall seconds).

    failed_cases_ok: exit status 1 (some cases failed) is expected, not an error.
    keep_output: a list that receives (stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="opbench-bench-") as tmp:
        out = os.path.join(tmp, "r.json")
        cmd = [opbench or ARGS.opbench, "run", suite, "--no-progress", "--out", out, *extra]
        t0 = time.monotonic()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=None if env is None else {**os.environ, **env})
        wall = time.monotonic() - t0
        if keep_output is not None:
            keep_output.append((proc.stdout, proc.stderr))
        if proc.returncode != 0 and not (failed_cases_ok and proc.returncode == 1):
            # A SIGSEGV at exit after a complete result set was seen with the
            # onednn plugin loaded (OpenMP workers in a library being
            # unmapped); the loader now keeps accepted plugins mapped
            # (RTLD_NODELETE). Should it recur, the run is used and counted aloud.
            done = "opbench: " in proc.stdout and os.path.exists(out)
            if proc.returncode == -11 and done:
                CRASHES_AT_EXIT.append(" ".join(cmd))
            else:
                sys.stderr.write(proc.stdout + proc.stderr)
                raise SystemExit(f"opbench failed ({proc.returncode}): {' '.join(cmd)}")
        with open(out) as f:
            return json.load(f), wall


def run_direct(*args):
    """Runs direct_kernels; returns its median seconds per call, or None (not built)."""
    proc = subprocess.run([ARGS.direct, *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode == 77:
        return None
    if proc.returncode != 0:
        raise SystemExit(f"direct_kernels {args} failed: {proc.stderr}")
    fields = dict(kv.split("=") for kv in proc.stdout.split())
    return float(fields["median_s"])


def backends_built(result):
    return result["context"]["opbench"]["build"]["backends_built"]


def cases(result):
    """name -> {'medians': [per-repetition median s], 'noise': [...], entry fields}."""
    out = {}
    for b in result["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("status") != "passed":
            continue
        name = b["run_name"].removesuffix("/manual_time")
        c = out.setdefault(name, {"medians": [], "noise": [], "met": [], "entry": b,
                                  "spread": b.get("repetition_spread") or 0.0})
        c["medians"].append(b["stats"]["median"])
        c["noise"].append(b["stats"]["noise"])
        c["met"].append(b["stats"]["noise_target_met"])
    for c in out.values():
        c["median"] = statistics.median(c["medians"])
    return out


def us(seconds):
    return f"{seconds * 1e6:10.3f}"


def table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).rjust(w) for x, w in zip(r, widths))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def one_by_backend(cs):
    return {c["entry"]["backend"]: c for c in cs.values()}


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


# ---- call path -------------------------------------------------------------

def call_path():
    quick = here("suites", "quick.toml")
    res, _ = run_opbench(here("tests", "bench", "call_path.toml"))
    built = [b for b in ("naive", "onednn") if b in backends_built(res)]
    overhead = res["context"]["opbench"]["measurement"]["timer_overhead_seconds"]
    one = cases(res)
    q, _ = run_opbench(quick, ["--backends", ",".join(built), "--repetitions", "1"])
    qc = cases(q)
    direct = run_direct("naive-add", 1, 1, 1.0)
    plugin = run_direct("naive-plugin-add", 1, 1, 1.0)
    print(f"timer overhead (one pair of steady_clock::now()): {overhead * 1e9:.1f} ns")
    print(f"direct loop, naive::add 1x1 kernel (no plugin, no harness): {direct * 1e9:.1f} ns/call")
    print(f"direct loop, naive plugin's execute+synchronize, 1x1 add (no harness): {plugin * 1e9:.1f} ns/call")
    if "naive" in one_by_backend(one):
        o = one_by_backend(one)["naive"]["median"]
        print(f"opbench, naive 1x1 add: {o * 1e9:.1f} ns/call -> harness's share {(o - plugin) * 1e9:.1f} ns,"
              f" plugin glue's {(plugin - direct) * 1e9:.1f} ns, kernel's {direct * 1e9:.1f} ns\n")
    rows = []
    for be in built:
        mine = [c for n, c in one.items() if c["entry"]["backend"] == be]
        if not mine:
            continue
        c1 = mine[0]
        smallest_name, smallest = min(((n, c) for n, c in qc.items() if c["entry"]["backend"] == be),
                                      key=lambda nc: nc[1]["median"])
        rows.append([be, f"{c1['median'] * 1e9:.1f}", str(c1["entry"]["stats"]["calls_per_sample"]),
                     smallest_name.split("/be:")[0], f"{smallest['median'] * 1e9:.1f}",
                     f"{100 * c1['median'] / smallest['median']:.2f}%"])
    table(["backend", "1x1 add ns/call", "calls/sample", "smallest quick.toml case",
           "its ns/call", "1x1 / smallest"], rows)
    nb = one_by_backend(one)
    if "naive" in nb:
        small = min(c["median"] for c in qc.values() if c["entry"]["backend"] == "naive")
        print(f"\nharness's share alone (opbench 1x1 - plugin direct 1x1) / smallest naive quick case:"
              f" {100 * (nb['naive']['median'] - plugin) / small:.2f}%")
    print("\nThe 1x1 add is the whole per-call cost of the path (harness loop, C table call,"
          "\nthe plugin's checks, a 1-element kernel); naive's direct loop shows the kernel's share.")


# ---- accuracy --------------------------------------------------------------

ACCURACY_CASES = {
    # name: (backend, op and shape lines of the [[case]])
    "naive.add": ("naive", 'op = "add"\nrows = 32\ncols = 128'),
    "naive.matmul": ("naive", 'op = "matmul"\nm = 128\nn = 128\nk = 128'),
    "onednn.matmul.t1": ("onednn", 'op = "matmul"\nm = 512\nn = 512\nk = 512\nthreads = 1'),
    "onednn.matmul": ("onednn", 'op = "matmul"\nm = 512\nn = 512\nk = 512'),
}


def accuracy_suite(tmp, name):
    """A one-case suite (one per case rather than --benchmark_filter on a shared
    suite: a backend opened but never run is then never loaded at all)."""
    backend, body = ACCURACY_CASES[name]
    path = os.path.join(tmp, name + ".toml")
    with open(path, "w") as f:
        f.write(f'[suite]\nname = "bench-accuracy"\n\n[defaults]\nbackends = ["{backend}"]\n'
                f'dtypes = ["f32"]\nwarmup = 3\nmin_time = 0.3\nmax_time = 2.0\nrepetitions = 3\n\n'
                f'[[case]]\nname = "{name}"\n{body}\n')
    return path


def accuracy(rounds=5):
    tmp = tempfile.mkdtemp(prefix="opbench-accuracy-")
    # case -> [(what the direct loop runs, direct_kernels arguments)]
    direct_args = {
        "naive.add": [("kernel", ("naive-add", 32, 128, 1.0)),
                      ("plugin", ("naive-plugin-add", 32, 128, 1.0))],
        "naive.matmul": [("kernel", ("naive-matmul", 128, 128, 128, 1.0))],
        "onednn.matmul.t1": [("primitive", ("onednn-matmul", 512, 512, 512, 1.0, 1))],
        "onednn.matmul": [("primitive", ("onednn-matmul", 512, 512, 512, 1.0, 0))],
    }
    gaps = {(k, lbl): [] for k, v in direct_args.items() for lbl, _ in v}
    times = {key: ([], []) for key in gaps}
    built = None
    for r in range(rounds):
        # Each comparison back to back (direct loop, then opbench on that case
        # alone), so that the machine's drift hits both sides alike.
        for name, pairs in direct_args.items():
            if built is not None and ACCURACY_CASES[name][0] not in built:
                continue
            for lbl, a in pairs:
                d = run_direct(*a)
                if d is None:
                    continue
                res, _ = run_opbench(accuracy_suite(tmp, name))
                built = backends_built(res)
                found = [c for c in cases(res).values() if c["entry"]["case"] == name]
                if not found:
                    continue
                o = found[0]["median"]
                gaps[(name, lbl)].append(o / d - 1)
                times[(name, lbl)][0].append(o)
                times[(name, lbl)][1].append(d)
    rows = []
    for (name, lbl), g in gaps.items():
        if not g:
            rows.append([name, lbl, "-", "-", "-", "not built"])
            continue
        o, d = (statistics.median(x) for x in times[(name, lbl)])
        rows.append([name, lbl, us(o), us(d), f"{100 * statistics.median(g):+.2f}%",
                     " ".join(f"{100 * x:+.1f}" for x in g)])
    table(["case", "direct loop of", "opbench us", "direct us", "median gap", "per round gap %"], rows)
    print(f"\n{rounds} rounds; in each, every comparison runs back to back: the direct loop (median per"
          "\ncall over 1 s), then opbench on that case alone (median of its 3 repetition medians)."
          "\nTimes are medians over rounds; the gap is the median of the per-round gaps.")


# ---- repeatability ---------------------------------------------------------

def repeatability(runs=3):
    quick = here("suites", "quick.toml")
    extra = ["--backends", "naive,onednn"]
    if ARGS.interleave:
        extra.append("--benchmark_enable_random_interleaving=true")
    results = [run_opbench(quick, extra)[0] for _ in range(runs)]
    per = [cases(r) for r in results]
    rows, within, within_spread, total = [], 0, 0, 0
    for name in per[0]:
        if not all(name in p for p in per):
            continue
        meds = [p[name]["median"] for p in per]
        noise = max(max(p[name]["noise"]) for p in per)
        spread = max(p[name]["spread"] for p in per)
        met = all(all(p[name]["met"]) for p in per)
        center = statistics.median(meds)
        dev = max(abs(m - center) / center for m in meds)
        ok = dev <= noise
        ok_spread = dev <= max(noise, spread)
        within += ok
        within_spread += ok_spread
        total += 1
        rows.append([name.replace("/dt:f32", "").replace("/manual_time", ""),
                     " ".join(f"{m * 1e6:.3f}" for m in meds), f"{100 * dev:.2f}%",
                     f"{100 * noise:.2f}%", f"{100 * spread:.2f}%", "yes" if met else "no",
                     "yes" if ok else "NO", "yes" if ok_spread else "NO"])
    table(["case", "medians of 3 runs (us)", "max dev", "reported noise", "rep. spread", "target met",
           "within noise", "within noise or spread"], rows)
    print(f"\n{within} of {total} cases: every run's median within the largest noise the runs reported;"
          f"\n{within_spread} of {total} within the larger of that noise and the largest repetition_spread."
          "\n(max dev: largest |run median - median of runs| / median of runs.)")


# ---- cost ------------------------------------------------------------------

def cost():
    quick = here("suites", "quick.toml")
    with open(quick, "rb") as f:
        d = tomllib.load(f)["defaults"]
    reps = d["repetitions"]
    fixed = ["--min-time", "0.5", "--max-time", "0.5", "--noise", "1e9", "--warmup", "0", "--min-samples", "1"]
    modes = [
        (f"opbench defaults (quick.toml: noise {100 * d.get('noise', 0.01):g}%, min {d['min_time']} s, "
         f"max {d['max_time']} s, {reps} reps)", []),
        ("Google Benchmark defaults (0.5 s, 1 rep, no noise target)", ["--repetitions", "1", *fixed]),
        (f"Google Benchmark 0.5 s, {reps} reps (quick.toml's repetitions)", ["--repetitions", str(reps), *fixed]),
    ]
    rows = []
    for label, extra in modes:
        res, wall = run_opbench(quick, ["--backends", "naive,onednn", *extra])
        cs = cases(res)
        noise = statistics.median(max(c["noise"]) for c in cs.values())
        rows.append([label, f"{wall:.1f}", str(len(cs)), f"{100 * noise:.2f}%"])
    table(["mode", "wall s", "cases", "median noise"], rows)


# ---- attention memory ------------------------------------------------------

def attention_memory():
    res, _ = run_opbench(here("tests", "bench", "attention_memory.toml"))
    rows = []
    mib = lambda b: f"{b / 2**20:.2f}"
    for name, c in cases(res).items():
        e = c["entry"]
        m = e["memory"]
        rows.append([e["variant"], e["params"]["Sq"],
                     mib(m["workspace_bytes"]), mib(m["plugin_peak_bytes"]), mib(m["heap_peak_bytes"]),
                     mib(m["rss_peak_bytes"]), f"{c['median']:.3f}"])
    rows.sort(key=lambda r: (r[0], int(r[1])))
    table(["variant", "seq", "workspace MiB", "plugin peak MiB", "heap peak MiB", "RSS peak MiB",
           "s/call"], rows)
    print("\nnaive, f32, batch 1, heads 1, head_dim 64. workspace / plugin peak / heap peak are the"
          "\ncase's own (heap: above the case's starting level); RSS peak is the process high-water"
          "\nmark, reset at the case's start (so it includes the process's baseline).")

# ---- time to result (issue 10) ---------------------------------------------

def sample_seconds(result):
    """Seconds spent inside timed samples: every sample's time per call x its calls."""
    total = 0.0
    for b in result["benchmarks"]:
        if b.get("run_type") == "iteration" and b.get("status") == "passed" and "stats" in b:
            st = b["stats"]
            if "sample_histogram" in st:  # whole ticks per sample, as differences (results/README.md)
                h, tick = st["sample_histogram"], 0
                for step, count in zip(map(int, h["ticks"].split()), map(int, h["counts"].split())):
                    tick += step
                    total += tick * count * h["tick_seconds"]
            else:
                total += sum(st["sample_times"]) * st["calls_per_sample"]
    return total


def entry_seconds(result, field):
    """Sum of a per-case field (verify_seconds, ...) over cases (once per case, not per repetition)."""
    seen, total = set(), 0.0
    for b in result["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].removesuffix("/manual_time")
        if name not in seen:
            seen.add(name)
            total += b.get(field) or 0.0
    return total


def time_to_result():
    """Wall time against summed sample time, fast vs full (vs full again: the reference cache)."""
    suites = ARGS.suite or [here("suites", "gemm.toml"), here("suites", "transformer-shapes.toml")]
    extra = ARGS.opbench_args.split() if ARGS.opbench_args else []
    backends = ["--backends", ARGS.backends]
    rows, medians = [], {}
    with tempfile.TemporaryDirectory(prefix="opbench-refcache-") as cache:
        env = {"OPBENCH_CACHE_DIR": cache}
        # The machine's peaks are cached per machine: copy them so no run pays for them.
        real = os.environ.get("OPBENCH_CACHE_DIR") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "opbench")
        if os.path.isdir(real):
            for f in os.listdir(real):
                if f.startswith("machine-"):
                    with open(os.path.join(real, f), "rb") as src, open(os.path.join(cache, f), "wb") as dst:
                        dst.write(src.read())
        for suite in suites:
            for mode, label in [("fast", "fast (default)"), ("full", "full, cold cache"), ("full", "full, cached")]:
                if ARGS.modes and mode not in ARGS.modes.split(","):
                    continue
                res, wall = run_opbench(suite, [*backends, "--verify", mode, *extra], env=env)
                cs = cases(res)
                measured = sample_seconds(res)
                verify = entry_seconds(res, "verify_seconds")
                # Each case's fields are on its first entry (cases(): "entry").
                methods = sorted({(c["entry"].get("verification") or {}).get("method", "-") for c in cs.values()})
                unverified = sum(1 for c in cs.values() if not c["entry"].get("verified"))
                failed = sum(1 for b in res["benchmarks"] if b.get("status") == "failed")
                rows.append([os.path.basename(suite), label, str(len(cs)), f"{wall:.1f}", f"{measured:.1f}",
                             f"{100 * measured / wall:.0f}%", f"{verify:.1f}", "+".join(methods),
                             str(unverified), str(failed)])
                medians[(suite, label)] = {n: c["median"] for n, c in cs.items()}
    table(["suite", "verify", "cases", "wall s", "in samples s", "measuring", "verify s", "methods",
           "unverified", "failed"], rows)
    # Medians of the same cases, fast against full: verification must not change them.
    for suite in suites:
        a, b = medians.get((suite, "fast (default)")), medians.get((suite, "full, cold cache"))
        if not a or not b:
            continue
        ratios = sorted(a[n] / b[n] for n in a if n in b and b[n] > 0)
        if ratios:
            print(f"\n{os.path.basename(suite)}: median time per call, fast / full, over {len(ratios)} cases: "
                  f"min {ratios[0]:.3f}, median {statistics.median(ratios):.3f}, max {ratios[-1]:.3f}")
    print(f"\nbackends {ARGS.backends}; extra opbench arguments: {' '.join(extra) or '(none)'}")


# ---- fast mode's power, end to end (issue 10) -------------------------------

def fast_power():
    """The corrupt test backend makes one element / one row wrong at a seeded place; how often is it caught?"""
    suite = here("tests", "bench", "fast_power.toml")
    plugin_dir = ARGS.corrupt_plugin_dir
    rows = []
    for mode in ["element", "row"]:
        for verify in ["fast", "full"]:
            caught, trials, by_op, checked = 0, 0, {}, {}
            for seed in range(ARGS.seeds):
                env = {"OPBENCH_PLUGIN_PATH": plugin_dir, "OPBENCH_CORRUPT": mode,
                       "OPBENCH_CORRUPT_SEED": str(seed)}
                res, _ = run_opbench(suite, ["--backends", "corrupt", "--verify", verify], env=env,
                                     failed_cases_ok=True)
                for b in res["benchmarks"]:
                    if b.get("run_type") != "iteration" and not b.get("error_occurred"):
                        continue
                    if b.get("backend") != "corrupt" or b.get("status") == "skipped":
                        continue
                    key = (b["op"], b["dtype"])
                    name = b["run_name"]
                    if (seed, name) in checked:
                        continue
                    checked[(seed, name)] = True
                    hit = b.get("status") == "failed" and "verification failed" in (b.get("reason") or "")
                    t = by_op.setdefault(key, [0, 0, None])
                    t[0] += hit
                    t[1] += 1
                    v = b.get("verification") or {}
                    if v.get("unit") == "rows":
                        t[2] = f"{v['checked']}/{v['total']} rows"
                    elif v.get("method"):
                        t[2] = v.get("method")
            for (op, dtype), (hit, n, cover) in sorted(by_op.items()):
                rows.append([mode, verify, op, dtype, str(n), str(hit), f"{100 * hit / n:.0f}%", cover or "-"])
    table(["error", "verify", "op", "dtype", "trials", "caught", "rate", "coverage"], rows)
    print(f"\n{ARGS.seeds} seeds; element: one output element moved by the output's rms; "
          "row: one output row (last axis) scaled by 0.8.")


# ---- isolation ---------------------------------------------------------------

def isolation():
    """The worker process's cost: the same suites with --isolate process and
    --isolate none, alternated (ABAB...) so a slow spell of the machine hits
    both; per case the median of the per-run medians, and their ratio.
    One thread per op: on a shared machine an OpenMP team of two waits for a
    descheduled member (medians of 1 us or 20 ms for the same oneDNN case, in
    either mode), which would swamp what is compared here."""
    rounds = 3
    suites = [(here("tests", "bench", "call_path.toml"), []),
              (here("suites", "quick.toml"), ["--repetitions", "3"])]
    first, _ = run_opbench(suites[0][0], ["--isolate", "none"])
    built = [b for b in ("naive", "onednn") if b in backends_built(first)]
    medians = {"process": {}, "none": {}}
    walls = {"process": [], "none": []}
    for _ in range(rounds):
        for mode in ("process", "none"):
            wall = 0.0
            for suite, extra in suites:
                res, w = run_opbench(suite, ["--isolate", mode, "--backends", ",".join(built), "--threads", "1",
                                             *extra])
                wall += w
                for name, c in cases(res).items():
                    medians[mode].setdefault(name, []).append(c["median"])
            walls[mode].append(wall)
    rows, ratios = [], []
    for name in sorted(medians["process"]):
        if name not in medians["none"]:
            continue
        p, n = statistics.median(medians["process"][name]), statistics.median(medians["none"][name])
        spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs)
        ratios.append(p / n)
        rows.append([name.split("/be:")[0][:60], name.split("/be:")[1].split("/")[0], us(n), us(p),
                     f"{p / n:.3f}", f"{100 * spread(medians['none'][name]):.1f}%",
                     f"{100 * spread(medians['process'][name]):.1f}%"])
    table(["case", "backend", "none us", "process us", "process/none", "spread none", "spread process"], rows)
    print(f"\nmedian of the ratios process/none over {len(ratios)} case x backend: {statistics.median(ratios):.3f}"
          f" (min {min(ratios):.3f}, max {max(ratios):.3f}); {rounds} alternated rounds of each mode")
    print(f"wall time of the two suites: none {statistics.median(walls['none']):.1f} s, process "
          f"{statistics.median(walls['process']):.1f} s (medians of {rounds})")
    print("spread: (max - min) / median of one case's per-run medians within a mode: the run-to-run noise"
          "\nthat a process/none ratio must be read against.")


# ---- profiling scopes when off ---------------------------------------------

def scopes_off():
    """The 1 x 1 add of call_path.toml on two builds, run alternately: this one
    (scopes compiled in and off: one branch per scope) and --opbench-noscopes
    (built with -Dprofiling_scopes=false: no scope code at all). The naive add
    passes one scope (the op's), onednn's two (the op's and its one step's).
    --threads 1: on a loaded machine an OpenMP team of two waits whole
    scheduler slices at its barrier (milliseconds against a microsecond call),
    which would bury a nanosecond difference; one thread keeps the call path."""
    if not ARGS.opbench_noscopes:
        raise SystemExit("scopes-off needs --opbench-noscopes: an opbench built with -Dprofiling_scopes=false")
    suite = here("tests", "bench", "call_path.toml")
    builds = {"scopes in (off)": ARGS.opbench, "compiled out": ARGS.opbench_noscopes}
    per_round = {label: {} for label in builds}  # label -> backend -> [round medians]
    for r in range(ARGS.rounds):
        # Alternate which build goes first, so a drift in load favours neither.
        order = list(builds.items()) if r % 2 == 0 else list(builds.items())[::-1]
        for label, exe in order:
            res, _ = run_opbench(suite, ["--threads", "1"], opbench=exe)
            for be, c in one_by_backend(cases(res)).items():
                per_round[label].setdefault(be, []).append(c["median"])
    rows = []
    for be in sorted(per_round["compiled out"]):
        on = per_round["scopes in (off)"].get(be, [])
        off = per_round["compiled out"][be]
        if not on:
            continue
        m_on, m_off = statistics.median(on), statistics.median(off)
        spread = (max(off) - min(off)) / 2
        rows.append([be, f"{m_on * 1e9:.1f}", f"{m_off * 1e9:.1f}", f"{(m_on - m_off) * 1e9:+.1f}",
                     f"{100 * (m_on - m_off) / m_off:+.2f}%", f"{spread * 1e9:.1f}",
                     "yes" if abs(m_on - m_off) <= spread else "no"])
    print(f"{ARGS.rounds} rounds, each build once per round, alternating which goes first;"
          " per build the median of the rounds' medians (ns per call)")
    table(["backend", "scopes in, off", "compiled out", "difference", "relative",
           "half-range (compiled out)", "within noise"], rows)
    for label in builds:
        for be, v in sorted(per_round[label].items()):
            print(f"  {label:16s} {be:7s} rounds: " + ", ".join(f"{x * 1e9:.1f}" for x in v))


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opbench", required=True)
    p.add_argument("--direct", required=True)
    p.add_argument("--source-root", required=True)
    p.add_argument("what", choices=["call-path", "accuracy", "repeatability", "cost", "attention-memory",
                                    "isolation", "scopes-off", "time-to-result", "fast-power"])
    p.add_argument("--opbench-noscopes", help="scopes-off: opbench built with -Dprofiling_scopes=false")
    p.add_argument("--rounds", type=int, default=5, help="scopes-off: rounds of the two builds")
    p.add_argument("--suite", action="append",
                   help="time-to-result: a suite to run (repeatable; default gemm and transformer-shapes)")
    p.add_argument("--backends", default="onednn", help="time-to-result: --backends for opbench")
    p.add_argument("--modes", default="", help="time-to-result: only these --verify modes (fast,full)")
    p.add_argument("--opbench-args", default="",
                   help="time-to-result: extra opbench arguments, e.g. '--repetitions 1 "
                        "--benchmark_filter=linear'")
    p.add_argument("--corrupt-plugin-dir", default="",
                   help="fast-power: directory of opbench-backend-corrupt.so (build/tests/plugins)")
    p.add_argument("--seeds", type=int, default=50, help="fast-power: seeds (trials per case)")
    p.add_argument("--interleave", action="store_true",
                   help="repeatability: spread each case's repetitions over the run "
                        "(--benchmark_enable_random_interleaving=true)")
    ARGS = p.parse_args()
    t0 = time.monotonic()
    print(f"(load average at start: {loadavg()}; {os.cpu_count()} CPUs)")
    {"call-path": call_path, "accuracy": accuracy, "repeatability": repeatability, "cost": cost,
     "attention-memory": attention_memory, "isolation": isolation, "scopes-off": scopes_off,
     "time-to-result": time_to_result, "fast-power": fast_power}[ARGS.what]()
    if CRASHES_AT_EXIT:
        print(f"\nWARNING: {len(CRASHES_AT_EXIT)} opbench run(s) died of SIGSEGV at exit after writing"
              " a complete result set (known harness bug); their results were used.")
    print(f"\n({ARGS.what}: {time.monotonic() - t0:.0f} s on {os.uname().nodename};"
          f" load average at end: {loadavg()})")


if __name__ == "__main__":
    main()
