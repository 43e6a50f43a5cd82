#!/usr/bin/env python3
"""Writes a copy of a result set with one backend's times multiplied by a
known factor (1: unchanged), stamped one minute later as a later run would
be: a set with known times for testing compare and the CI gate without two
timed runs that must agree.
usage: scale_times.py IN OUT BACKEND FACTOR"""
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


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, dst, backend, factor = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    with open(src) as f:
        result_set = json.load(f)
    scaled = 0
    for entry in result_set["benchmarks"]:
        if entry.get("backend") == backend and entry.get("status") == "passed":
            scale(entry, factor)
            scaled += 1
    context = result_set["context"]
    stamp = datetime.datetime.strptime(context["opbench"]["timestamp"], "%Y-%m-%dT%H:%M:%SZ")
    later = stamp + datetime.timedelta(minutes=1)
    context["opbench"]["timestamp"] = later.strftime("%Y-%m-%dT%H:%M:%SZ")
    context["date"] = later.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    if scaled == 0:
        sys.exit(f"scale_times.py: no passed entry of backend '{backend}' in {src}")
    with open(dst, "w") as f:
        json.dump(result_set, f, indent=1)


if __name__ == "__main__":
    main()
