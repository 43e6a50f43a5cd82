#!/usr/bin/python3
"""Writes an opbench archive of N runs from one real result set, for timing
`opbench history` and `archive prune` on a large archive (docs/ci.md, "The
archive"): each copy gets its own timestamp (one hour apart), commit and
repetition medians scaled by a small drift. The machine id, suite and build
type are the set's own.

With --opbench PATH the copies are stored by `PATH archive DIR COPIES...`, the
way `opbench run --archive` stores a set (with its entry summaries). Without
it they are laid out and indexed directly, as an opbench before the entry
summaries did: an archive whose history reads every set.

With --plant KIND (issue 43) each case's runs instead carry the run-to-run
noise of this machine's sets and planted changes, and --truth FILE gets what
was planted (scripts/change_points_eval.py scores `history --changes`
against it):
  - each case's run-to-run sigma is its repetitions' spread in SET (clamped
    to 0.1-5%), a whole run is hit by a neighbour's episode (30-90% slower)
    with probability 1% (docs/measurement.md, "Repeatability");
  - aa: nothing planted; steps: a step every ~100 runs (2, 5, 10% in turn,
    up or down); drift: +1% per 10 runs over 50 runs every 200 runs;
  - revert: a 5% step every 200 runs, undone 10-40 runs later;
  - regression: every case 20% slower from the 5th newest run on.
--sigma S sets every case's run-to-run sigma and its repetitions' spread to S
instead (a test's known noise).
--noise-from SET,SET,... takes each case's noise from K real sets measured one
after another instead: its run-to-run sigma as they show it (robust standard
deviation of the log of the run's median, scripts/run_to_run_noise.py), and
each generated run's repetitions spread as one of theirs, drawn at random (so
the runs' intervals differ, as real runs' do). A case without a time in
every one of them is left without a time. The half-range of one set's
repetitions overstates how far a run's median moves (docs/measurement.md,
"Change points in the archive").
Every copy records its commit as context.opbench.code_under_test, and drops
its per-sample arrays (history reads the repetitions' medians).

usage: generate_archive.py SET.json DIR N [--opbench PATH]
                           [--plant aa|steps|drift|revert|regression --truth FILE
                            [--seed S] [--sigma S | --noise-from SET,SET,...]]"""
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone

BATCH = 100  # sets per `opbench archive` call


def main():
    args = sys.argv[1:]
    opbench = None
    if "--opbench" in args:
        i = args.index("--opbench")
        if i + 1 >= len(args):
            sys.exit(__doc__)
        opbench = args[i + 1]
        del args[i:i + 2]
    plant = take_option(args, "--plant")
    truth = take_option(args, "--truth")
    seed = int(take_option(args, "--seed") or 43)
    sigma = take_option(args, "--sigma")
    noise_from = take_option(args, "--noise-from")
    if len(args) != 3 or (plant and (plant not in PLANTS or not truth)) or (sigma and noise_from):
        sys.exit(__doc__)
    src, out, n = args[0], args[1], int(args[2])
    with open(src, encoding="utf-8") as f:
        base = json.load(f)
    ob = base["context"]["opbench"]
    ob.setdefault("machine", {})
    ob["machine"]["id"] = ob["machine"].get("id") or "generated-machine"
    if plant:
        global copies  # pylint: disable=global-statement
        measured = measured_noise(noise_from.split(",")) if noise_from else None
        planted = Planted(base, n, plant, random.Random(seed), float(sigma) if sigma else None, measured)
        copies = planted.copies
        with open(truth, "w", encoding="utf-8") as f:
            json.dump(planted.truth(), f, indent=1)
    if opbench:
        stored = via_opbench(base, out, n, opbench)
    else:
        stored = laid_out(base, out, n)
    print(f"{stored} runs of suite '{ob['suite']['name']}' on {ob['machine']['id']} in {out}")


def take_option(args, name):
    if name not in args:
        return None
    i = args.index(name)
    if i + 1 >= len(args):
        sys.exit(__doc__)
    value = args[i + 1]
    del args[i:i + 2]
    return value


PLANTS = ("aa", "steps", "drift", "revert", "regression")
EPISODE_RATE, EPISODE_SLOWDOWN = 0.01, (1.3, 1.9)


def repetition_medians(result_set):
    """Each case's repetition medians, by run_name, in order of first
    appearance (history's order of cases); none for a case without a time
    (starved, failed: history leaves it out)."""
    cases = {}
    for b in result_set["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        medians = cases.setdefault(b.get("run_name", b.get("name")), [])
        st = b.get("stats")
        if b.get("status", "passed") == "passed" and isinstance(st, dict) \
                and isinstance(st.get("median"), (int, float)) and st["median"] > 0:
            medians.append(st["median"])
    return cases


def events(kind, n, rng):
    """The planted changes of one case: (kind, first run, size, last run)."""
    out = []
    if kind == "steps":
        for k, centre in enumerate(range(50, n - 30, 100)):
            size = (0.02, 0.05, 0.10)[(k + rng.randrange(3)) % 3] * rng.choice((1, -1))
            out.append(("step", centre + rng.randint(-20, 20), size, None))
    elif kind == "drift":
        for start in range(100, n - 60, 200):
            out.append(("drift", start, 0.05, start + 50))
    elif kind == "regression":  # every case 20% slower from the 5th newest run on (the CI gate's test)
        out.append(("step", max(n - 5, n // 2), 0.20, None))
    elif kind == "revert":
        for start in range(100, n - 50, 200):
            out.append(("revert", start, 0.05, start + rng.randint(10, 40)))
    return out


def level(case_events, i):
    """The case's true factor at run i."""
    f = 1.0
    for kind, at, size, end in case_events:
        if kind == "step" and i >= at:
            f *= 1 + size
        elif kind == "drift" and i >= at:
            f *= 1 + size * min(1.0, (i - at) / (end - at))
        elif kind == "revert" and at <= i < end:
            f *= 1 + size
    return f


def measured_noise(paths):
    """{case: (run-to-run sigma, [each set's repetition spread])} over real
    sets measured one after another, from each entry's summary (its median
    and spread, as history reads them; scripts/run_to_run_noise.py reads
    them the same way); only cases with a time in every set."""
    per_set = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            per_set.append(entry_summaries(json.load(f)))
    out = {}
    for name in per_set[0]:
        if not all(name in s for s in per_set):
            continue
        logs = sorted(math.log(s[name][0]) for s in per_set)
        centre = logs[len(logs) // 2]
        deviations = sorted(abs(x - centre) for x in logs)
        sigma = 1.4826 * deviations[len(deviations) // 2]
        out[name] = (max(0.001, sigma), [s[name][1] for s in per_set])
    return out


def entry_summaries(result_set):
    """{case: (median, spread)} from each passed entry's summary."""
    out = {}
    for b in result_set["benchmarks"]:
        summary = b.get("summary")
        if b.get("status", "passed") != "passed" or not isinstance(summary, dict):
            continue
        median, spread = summary.get("median_seconds"), summary.get("spread")
        if isinstance(median, (int, float)) and median > 0 and isinstance(spread, (int, float)):
            out.setdefault(b.get("run_name", b.get("name")), (median, spread))
    return out


class Planted:
    """Copies whose cases carry noise and planted changes."""

    def __init__(self, base, n, kind, rng, sigma=None, measured=None):
        self.base, self.n, self.rng = without_samples(base), n, rng
        self.cases = []
        for name, medians in repetition_medians(base).items():
            if not medians or (measured is not None and name not in measured):
                # no time (in the set, or in one of --noise-from's): history leaves the case out
                self.cases.append({"run_name": name, "sigma": None, "events": []})
                continue
            mid = sorted(medians)[len(medians) // 2]
            spread = (max(medians) - min(medians)) / 2 / mid if len(medians) > 1 else 0.01
            if sigma is not None:
                set_spread(self.base, name, mid, spread, sigma)
            case_sigma = sigma or min(0.05, max(0.001, spread))
            spreads = None
            if measured is not None:
                case_sigma, spreads = measured[name]
                # as factors of the base's spread; at most 0.9 / its spread, so no median goes below 0
                spreads = [min(t / spread, 0.9 / spread) if spread > 0 else 1.0 for t in spreads]
            self.cases.append({"run_name": name, "sigma": case_sigma, "spread_factors": spreads,
                               "events": events(kind, n, rng)})

    def truth(self):
        return {"runs": self.n, "episode_rate": EPISODE_RATE, "cases": [
            {"index": i, "run_name": c["run_name"], "sigma": c["sigma"],
             "events": [{"kind": k, "at": a, "size": s, "end": e} for k, a, s, e in c["events"]]}
            for i, c in enumerate(self.cases)]}

    def factors(self, i):
        """{case: (time factor, repetition spread factor)} of run i."""
        out = {}
        for c in self.cases:
            if c["sigma"] is None:
                continue
            f = level(c["events"], i) * math.exp(self.rng.gauss(0, c["sigma"]))
            if self.rng.random() < EPISODE_RATE:
                f *= self.rng.uniform(*EPISODE_SLOWDOWN)
            out[c["run_name"]] = (f, self.rng.choice(c["spread_factors"]) if c.get("spread_factors") else 1.0)
        return out

    def copies(self, base, n):
        del base, n  # the planted base and count
        ob = self.base["context"]["opbench"]
        start = datetime(2026, 1, 1, tzinfo=timezone.utc)
        for i in range(self.n):
            stamp = (start + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
            commit = f"{(i * 2654435761) % 2**48:012x}"
            ob["timestamp"] = stamp
            ob["build"]["git_commit"] = commit
            ob["code_under_test"] = {"commit": commit, "source": "--commit-under-test"}
            name = stamp.replace("-", "").replace(":", "") + f"-{commit}.json"
            yield name, stamp, commit, json.dumps(scaled_cases(self.base, self.factors(i)))


def set_spread(result_set, name, mid, spread, sigma):
    """Moves a case's repetition medians toward (or away from) their median
    so that their spread is `sigma` (--sigma: a test's known noise)."""
    scale = sigma / spread if spread > 0 else 0
    for b in result_set["benchmarks"]:
        st = b.get("stats")
        if b.get("run_name", b.get("name")) == name and isinstance(st, dict) \
                and isinstance(st.get("median"), (int, float)):
            st["median"] = mid + (st["median"] - mid) * scale


def without_samples(result_set):
    copy = json.loads(json.dumps(result_set))
    for b in copy["benchmarks"]:
        st = b.get("stats")
        if isinstance(st, dict):
            for key in ("sample_times", "sample_histogram"):
                st.pop(key, None)
    return copy


def scaled_cases(result_set, factors):
    """The set with each case's repetition times scaled by its factor, and
    their medians' spread about the case's median by its spread factor."""
    copy = json.loads(json.dumps(result_set))
    mids = {name: sorted(m)[len(m) // 2] for name, m in repetition_medians(copy).items() if m}
    for b in copy["benchmarks"]:
        name = b.get("run_name", b.get("name"))
        f, k = factors.get(name, (None, 1.0))
        st = b.get("stats")
        if f is None or not isinstance(st, dict):
            continue
        if k != 1.0 and isinstance(st.get("median"), (int, float)) and name in mids:
            st["median"] = mids[name] + (st["median"] - mids[name]) * k
        for key in ("min", "mean", "median", "p90", "p99", "max", "stddev"):
            if isinstance(st.get(key), (int, float)):
                st[key] *= f
        if isinstance(st.get("median_ci95"), list):
            st["median_ci95"] = [t * f for t in st["median_ci95"]]
        for key in ("real_time", "cpu_time"):
            if isinstance(b.get(key), (int, float)):
                b[key] *= f
    return copy


def copies(base, n):
    """(file name, text) of each run: its own time, commit and drift."""
    ob = base["context"]["opbench"]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i in range(n):
        stamp = (start + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        commit = f"{(i * 2654435761) % 2**48:012x}"  # distinct in its first 7 digits too
        ob["timestamp"] = stamp
        ob["build"]["git_commit"] = commit
        scale = 1 + 0.01 * ((i * 7) % 5 - 2)  # +-2% drift between runs
        name = stamp.replace("-", "").replace(":", "") + f"-{commit}.json"
        yield name, stamp, commit, json.dumps(scaled(base, scale) if scale != 1 else base)


def via_opbench(base, out, n, opbench):
    staging = tempfile.mkdtemp(prefix="opbench-archive-")
    try:
        batch = []
        for name, _, _, text in copies(base, n):
            path = os.path.join(staging, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            batch.append(path)
            if len(batch) == BATCH:
                store(opbench, out, batch)
                batch = []
        if batch:
            store(opbench, out, batch)
    finally:
        shutil.rmtree(staging)
    return n


def store(opbench, out, paths):
    subprocess.run([opbench, "archive", out, *paths], check=True, stdout=subprocess.DEVNULL)
    for p in paths:
        os.remove(p)


def laid_out(base, out, n):
    ob = base["context"]["opbench"]
    machine, suite = ob["machine"]["id"], ob["suite"]["name"]
    os.makedirs(os.path.join(out, machine, suite), exist_ok=True)
    rows = []
    for name, stamp, commit, text in copies(base, n):
        rel = os.path.join(machine, suite, name)
        with open(os.path.join(out, rel), "w", encoding="utf-8") as f:
            f.write(text)
        rows.append({"path": rel, "machine_id": machine, "suite": suite, "suite_sha256": ob["suite"].get("sha256", ""),
                     "build_type": ob["build"].get("build_type", ""), "commit": commit, "timestamp": stamp,
                     "host_name": base["context"].get("host_name", ""), "cpu_model": ob["machine"].get("cpu_model", ""),
                     "cases": len({b.get("run_name") for b in base["benchmarks"]})})
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"schema_version": 1, "sets": rows}, f, indent=2)
    return n


def scaled(result_set, factor):
    """The set with each repetition's median scaled (what history reads)."""
    copy = json.loads(json.dumps(result_set))
    for b in copy["benchmarks"]:
        st = b.get("stats")
        if isinstance(st, dict) and isinstance(st.get("median"), (int, float)):
            st["median"] *= factor
    return copy


if __name__ == "__main__":
    main()
