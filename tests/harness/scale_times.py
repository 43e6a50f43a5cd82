#!/usr/bin/env python3
"""Writes a copy of a result set with one backend's times multiplied by a
known factor (1: unchanged), stamped one minute later as a later run would
be: a set with known times for testing compare and the CI gate without two
timed runs that must agree.

--steady: first, every repetition of each entry (every backend) takes the
figures of its fastest one, passed, as a run on an idle machine would
measure them: a busy machine can leave a measured set's repetitions
bimodal or at whole scheduler slices (compare then calls the side
disturbed, never slower, whatever the factor) or every one starved (no
time at all: then nothing is written, and it exits 3). A steady set is
stamped a minute earlier, as a baseline.
usage: scale_times.py IN OUT BACKEND FACTOR [--steady]"""
import copy
import datetime
import json
import sys

STAT_TIMES = ("min", "mean", "median", "p90", "p99", "max", "stddev",
              "cpu_time_per_call", "device_time_per_call")


def scale(entry, factor):
    if entry.get("aggregate_unit", "time") == "time":
        for key in ("real_time", "cpu_time"):
            if isinstance(entry.get(key), (int, float)):
                entry[key] *= factor
    stats = entry.get("stats")
    if isinstance(stats, dict):
        for key in STAT_TIMES:
            if isinstance(stats.get(key), (int, float)):
                stats[key] *= factor
        for key in ("median_ci95", "sample_times"):
            if isinstance(stats.get(key), list):
                stats[key] = [t * factor for t in stats[key]]
        hist = stats.get("sample_histogram")
        if isinstance(hist, dict):
            # Scaling the tick scales every sample (results/README.md, sample_histogram).
            hist["tick_seconds"] *= factor


NO_TIME = 3  # exit status: an entry has no timed repetition to make steady


def timed_repetition(entry):
    return entry.get("run_type") == "iteration" and entry.get("status") in ("passed", "starved") \
        and not entry.get("error_occurred") and isinstance(entry.get("stats"), dict) \
        and isinstance(entry.get("real_time"), (int, float)) and entry["real_time"] > 0


def steady(benchmarks):
    """Each entry's repetitions (iteration rows of one run_name) all take the
    times of the one with the lowest real_time, as passed and not starved;
    its aggregates (mean, median; stddev and cv 0) follow. Exits NO_TIME
    when an entry has no timed repetition at all (every one starved)."""
    fastest = {}
    for entry in benchmarks:
        if timed_repetition(entry):
            best = fastest.get(entry["run_name"])
            if best is None or entry["real_time"] < best["real_time"]:
                fastest[entry["run_name"]] = entry
    # An entry whose every repetition starved is written without one (no
    # time): nothing to make steady from; the caller measures again.
    untimed = sorted({e["run_name"] for e in benchmarks if e.get("run_type") == "iteration"} - set(fastest))
    if untimed:
        print(f"scale_times.py --steady: no timed repetition of {', '.join(untimed)} "
              "(every one starved?)", file=sys.stderr)
        sys.exit(NO_TIME)
    for best in fastest.values():
        best["stats"].update(starved=False, starved_share=0.0, remeasured=0, timed_out=False)
    for entry in benchmarks:
        best = fastest.get(entry.get("run_name"))
        if best is None:
            continue
        if timed_repetition(entry):
            for key in ("real_time", "cpu_time", "stats"):
                if key in best:
                    entry[key] = copy.deepcopy(best[key])
            entry["status"] = "passed"
            entry.pop("reason", None)
            if "repetition_spread" in entry:
                entry["repetition_spread"] = 0.0
        elif entry.get("run_type") == "aggregate":
            entry["status"] = "passed"
            spread = entry.get("aggregate_name") in ("stddev", "cv")
            for key in ("real_time", "cpu_time"):
                if isinstance(entry.get(key), (int, float)) and isinstance(best.get(key), (int, float)):
                    entry[key] = 0.0 if spread else best[key]


def main():
    args = [a for a in sys.argv[1:] if a != "--steady"]
    if len(args) != 4:
        sys.exit(__doc__)
    src, dst, backend, factor = args[0], args[1], args[2], float(args[3])
    with open(src) as f:
        result_set = json.load(f)
    if "--steady" in sys.argv[1:]:
        steady(result_set["benchmarks"])
    scaled = 0
    for entry in result_set["benchmarks"]:
        if entry.get("backend") == backend and entry.get("status") == "passed":
            scale(entry, factor)
            scaled += 1
    context = result_set["context"]
    stamp = datetime.datetime.strptime(context["opbench"]["timestamp"], "%Y-%m-%dT%H:%M:%SZ")
    # A steady set is a baseline: stamped a minute before, so that a run made
    # after it finds it (--baseline-from takes no newer set).
    later = stamp + datetime.timedelta(minutes=-1 if "--steady" in sys.argv[1:] else 1)
    context["opbench"]["timestamp"] = later.strftime("%Y-%m-%dT%H:%M:%SZ")
    context["date"] = later.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    if scaled == 0:
        sys.exit(f"scale_times.py: no passed entry of backend '{backend}' in {src}")
    with open(dst, "w") as f:
        json.dump(result_set, f, indent=1)


if __name__ == "__main__":
    main()
