#!/usr/bin/python3
"""Scores `opbench history DIR --suite S --changes` on an archive that
scripts/generate_archive.py --plant wrote, against its --truth file
(issue 43; docs/measurement.md, "Change points in the archive"):
  - steps: the share found at the right run (the change's first run after
    within 1 run of the step's), by size;
  - drift: the share of drifts with a change inside them;
  - revert: the share of reverted steps whose step and return are both found
    (+-1 run) and the step marked undone;
  - every other change is false: per 1,000 case-runs;
  - the wall time of the history command.
usage: change_points_eval.py OPBENCH DIR SUITE TRUTH.json [history options...]"""
import json
import subprocess
import sys
import time


SIGMA_BANDS = (0.01, 0.02, 0.03, 1.0)  # the truth's run-to-run sigma of a case, grouped


LOOSE = 5  # runs: a step found this near is found, if not at its commit


def near(change_run, at, within=1):
    return abs(change_run - at) <= within


def score_case(events, changes, tally):
    """Marks each planted event found or not; returns the changes no event explains."""
    used = set()
    for e in events:
        kind, at, end = e["kind"], e["at"], e["end"]
        if kind == "step":
            hit = [i for i, c in enumerate(changes) if near(c["first_after"]["run"], at)]
            key = f"step {abs(e['size']) * 100:g}%"
            loose = [i for i, c in enumerate(changes) if near(c["first_after"]["run"], at, LOOSE)]
            found, total = tally.get(key + f" (+-{LOOSE} runs)", (0, 0))
            tally[key + f" (+-{LOOSE} runs)"] = (found + bool(loose), total + 1)
        elif kind == "drift":
            hit = [i for i, c in enumerate(changes) if at <= c["first_after"]["run"] <= end + 1]
            key = "drift 5% over 50 runs"
        else:
            up = [i for i, c in enumerate(changes) if near(c["first_after"]["run"], at) and c["undone_by"] is not None]
            down = [i for i, c in enumerate(changes) if near(c["first_after"]["run"], end)]
            hit = up + down if up and down else []
            key = "revert 5% after 10-40 runs"
        found, total = tally.get(key, (0, 0))
        tally[key] = (found + bool(hit), total + 1)
        used.update(hit)
        if kind == "drift":  # a drift may be fitted as several small steps
            used.update(i for i, c in enumerate(changes) if at <= c["first_after"]["run"] <= end + 1)
    return len(changes) - len(used)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    opbench, archive, suite, truth_path = sys.argv[1:5]
    with open(truth_path, encoding="utf-8") as f:
        truth = json.load(f)
    cmd = [opbench, "history", archive, "--suite", suite, "--changes", "--format", "json", *sys.argv[5:]]
    started = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - started
    data = json.loads(out)
    if len(data["cases"]) != len(truth["cases"]):
        sys.exit(f"history has {len(data['cases'])} cases, the truth {len(truth['cases'])}")
    tally, by_band, false_changes = {}, {}, 0
    for planted, found in zip(truth["cases"], data["cases"]):
        false_changes += score_case(planted["events"], found["changes"], tally)
        if planted["sigma"] is None:
            continue
        band = next(b for b in SIGMA_BANDS if planted["sigma"] <= b)
        score_case(planted["events"], found["changes"], by_band.setdefault(band, {}))
    # The case-runs of cases given noise (a case --noise-from had no time for
    # keeps the base set's time in every run: nothing to find, nothing to count).
    case_runs = sum(c["usable_runs"] for c, t in zip(data["cases"], truth["cases"]) if t["sigma"] is not None)
    print(" ".join(cmd))
    print(f"{len(data['runs'])} runs x {len(data['cases'])} cases, history --changes: {wall:.2f} s wall")
    for key, (found, total) in sorted(tally.items()):
        print(f"  {key:28} found {found}/{total} = {100 * found / total:.1f}%")
    for band, t in sorted(by_band.items()):
        cases = sum(1 for c in truth["cases"] if c["sigma"] and next(b for b in SIGMA_BANDS if c["sigma"] <= b) == band)
        shown = ", ".join(f"{k} {f}/{n}" for k, (f, n) in sorted(t.items()))
        edges = (0,) + SIGMA_BANDS
        low = edges[SIGMA_BANDS.index(band)]
        name = f"> {low * 100:g}%" if band == SIGMA_BANDS[-1] else f"{low * 100:g}-{band * 100:g}%"
        print(f"  cases with run-to-run sigma {name} ({cases}): {shown}")
    print(f"  changes not planted: {false_changes} = {1000 * false_changes / case_runs:.3f} per 1,000 case-runs")


if __name__ == "__main__":
    main()
