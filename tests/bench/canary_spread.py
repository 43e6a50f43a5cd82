#!/usr/bin/env python3
"""How much --normalize canary narrows the run-to-run spread (docs/measurement.md,
"Paired A/B"): for consecutive result sets of the same suite and build (each with a
drift canary, e.g. `opbench ab` A/A runs), the unpaired ratio of each case's median
between the two runs, without and with `opbench compare --normalize canary`.
usage: canary_spread.py OPBENCH SET1.json SET2.json [SET3.json ...]"""
import json
import math
import statistics
import subprocess
import sys


def ratios(opbench, a, b, normalize):
    cmd = [opbench, "compare", "--format", "json", a, b] + (["--normalize", "canary"] if normalize else [])
    data = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return [c["ratio"] for c in data["comparisons"][0]["cases"] if c.get("ratio")]


def main():
    opbench, sets = sys.argv[1], sys.argv[2:]
    for normalize in (False, True):
        spread = []
        for a, b in zip(sets, sets[1:]):
            spread += [abs(math.log(r)) for r in ratios(opbench, a, b, normalize)]
        spread.sort()
        print("{:<22} cases {:3d}: median |change| {:5.1f}%, 90th percentile {:5.1f}%, largest {:5.1f}%".format(
            "normalised by canary" if normalize else "raw", len(spread),
            100 * (math.exp(statistics.median(spread)) - 1),
            100 * (math.exp(spread[int(0.9 * (len(spread) - 1))]) - 1), 100 * (math.exp(spread[-1]) - 1)))


if __name__ == "__main__":
    main()
