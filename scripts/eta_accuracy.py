#!/usr/bin/python3
"""How well the run's progress line estimates the time left (issue 30).

Runs `opbench run SUITE` with its stderr on a pseudo-terminal (the progress
line is printed on a terminal only), timestamps each progress line
("[5/8  7s elapsed, ~7s left]  name"), and when the run has ended compares
each line's estimate with the time that was really left. Lines in the first
quarter of the run are left out: an estimate has little to go on there.
With --hogs N, N `yes > /dev/null` processes run beside it (ended after).

    scripts/eta_accuracy.py build/harness/opbench suites/quick.toml
    scripts/eta_accuracy.py build/harness/opbench suites/gemm.toml --hogs 2 \\
        -- --benchmark_filter='case:square' --backends naive,onednn

Prints one row per progress line (the error only in the last three quarters,
each with how long the entry before it took), then the
worst and median error of the estimate, and of "elapsed / done x left" (the
estimate before issue 30) computed from the same lines, and how many lines
were within --tolerance (default 0.30) of the time left, or within the line's
resolution of it (it prints whole seconds: 0.5 s, plus the moment between the
line's print and its reading, so a 1 s floor). Exit 1 when a line was not.
"""
import argparse
import os
import pty
import re
import statistics
import subprocess
import sys
import tempfile
import time

LINE = re.compile(r"\[(\d+)/(\d+)\s+(\d+)s elapsed, ~(\?|\d+)s? left\]\s*(\S*)")


def run_with_progress(opbench, suite, extra, keep_set=None):
    """[(seconds since start, at, of, estimate or None, name, its elapsed)], run seconds."""
    master, slave = pty.openpty()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        out = keep_set or os.path.join(tmp, "set.json")
        p = subprocess.Popen([opbench, "run", suite, "--out", out, "--force", *extra],
                             stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        lines, buf = [], b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            now = time.monotonic() - start
            buf += chunk
            *done, buf = re.split(rb"[\r\n]", buf)
            for raw in done:
                m = LINE.search(re.sub(r"\x1b\[[0-9;]*m", "", raw.decode(errors="replace")))
                if m:
                    left = None if m.group(4) == "?" else float(m.group(4))
                    lines.append((now, int(m.group(1)), int(m.group(2)), left, m.group(5), float(m.group(3))))
        rc = p.wait()
        total = time.monotonic() - start
        os.close(master)
    if rc != 0:
        sys.exit(f"opbench exited {rc}")
    return lines, total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("opbench")
    ap.add_argument("suite")
    ap.add_argument("--hogs", type=int, default=0, help="`yes > /dev/null` processes beside the run")
    ap.add_argument("--tolerance", type=float, default=0.30)
    ap.add_argument("--set", help="keep the run's result set here (each entry's measure, prepare and verify "
                    "seconds, to see where an estimate went wrong)")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []  # more `opbench run` arguments
    a = ap.parse_args(argv[:len(argv) - len(extra) - (1 if "--" in argv else 0)])
    a.extra = extra
    hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(a.hogs)]
    try:
        lines, total = run_with_progress(a.opbench, a.suite, a.extra, a.set)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    if not lines:
        sys.exit("no progress lines: is the run's progress on (no --no-progress)?")
    # The run's own clock started a little before its first line (its
    # elapsed there, whole seconds): the old estimate used that clock.
    first_t, first_elapsed = lines[0][0], lines[0][5]
    new_err, old_err = [], []
    print(f"{'at':>7} {'time':>7} {'left':>7} {'est.':>6} {'error':>7} {'old est.':>8} {'old err':>7}  "
          "name (took: the entry before)")
    previous = None
    for t, at, of, est, name, _ in lines:
        actual = total - t
        took = f" (took {t - previous:.1f} s)" if previous is not None else ""
        previous = t
        if t < total / 4 or est is None or actual <= 0:
            print(f"{at:>3}/{of:<3} {t:7.1f} {actual:7.1f} {'-' if est is None else f'{est:.0f}':>6} {'':>7} "
                  f"{'':>8} {'':>7}  {name[:40]}{took}  [first quarter]")
            continue
        # As opbench printed it before issue 30: elapsed / entries before x entries from here.
        old = (t - first_t + first_elapsed) / (at - 1) * (of - at + 1) if at > 1 else None
        new_err.append(est / actual - 1)
        if old is not None:
            old_err.append(old / actual - 1)
        old_text = f"{old:8.1f} {old / actual - 1:+7.0%}" if old is not None else f"{'-':>8} {'-':>7}"
        print(f"{at:>3}/{of:<3} {t:7.1f} {actual:7.1f} {est:6.0f} {est / actual - 1:+7.0%} {old_text}  {name[:40]}{took}")
    if not new_err:
        sys.exit("no estimate after the first quarter of the run")
    worst = max(new_err, key=abs)
    # Within tolerance, or within the display's resolution: whole seconds.
    within = sum(1 for t, _, _, est, _, _ in lines
                 if t >= total / 4 and est is not None and total - t > 0
                 and abs(est - (total - t)) <= max(a.tolerance * (total - t), 1.0))
    print(f"run {total:.1f} s, {len(lines)} progress lines, {len(new_err)} after the first quarter; "
          f"hogs {a.hogs}")
    print(f"estimate: worst {worst:+.0%}, median |error| {statistics.median(map(abs, new_err)):.0%}; "
          f"{within} of {len(new_err)} lines within {a.tolerance:.0%} (or 1 s)")
    if old_err:
        print(f"elapsed/done x left (before issue 30): worst {max(old_err, key=abs):+.0%}, "
              f"median |error| {statistics.median(map(abs, old_err)):.0%}")
    return 0 if within == len(new_err) else 1


if __name__ == "__main__":
    sys.exit(main())
