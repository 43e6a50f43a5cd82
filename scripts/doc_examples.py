#!/usr/bin/env python3
"""Regenerates the console examples in README.md and docs/*.md from real runs
(issue 45), so that no example drifts from what the program prints.

usage: scripts/doc_examples.py [--opbench PATH] [--backends naive,onednn] [--keep DIR]
                               [--fixtures] [--check]

In the Markdown, an example is the text between two marker lines:

    <!-- example: NAME -->
    ...replaced...
    <!-- /example -->

NAME is a key of EXAMPLES below: which run or command makes it and which of
its lines are shown. The script runs, in a scratch directory:

  - the quick suite on the backends (`opbench run suites/quick.toml`);
  - the two small sets under docs/examples/ (quick-a.json, quick-b.json: a
    few cases of the quick suite), which the runnable blocks of the README
    read; with --fixtures they are measured again and replaced, otherwise
    they are read as they are;
  - compare, compare --by backend, analyze, and history over an archive of
    the three sets;

then writes each example's lines between its markers with the command and a
line saying on which machine, when and at which commit it was measured.
--check changes nothing and exits 1 when a marker names no known example.
Run it from the repository root after building (build/harness/opbench)."""
import argparse
import datetime
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, List

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FIXTURE_FILTER = "softmax|add|matmul.square|layernorm"  # the cases of docs/examples/quick-*.json


@dataclass
class Example:
    source: str                          # which output: a key of Outputs
    shown: str                           # the command line shown above it
    pick: Callable[[List[str]], List[str]]  # the lines shown


def head(n):
    return lambda lines: lines[:n] + (["..."] if len(lines) > n else [])


def whole(lines):
    return lines


def entries(names, count=None, tail="all"):
    """The run console's entries whose name line matches one of NAMES (each
    with its indented lines), at most COUNT of them, then "..." and its end:
    tail "all" (every line from "Per backend" on) or "table" (the per-backend
    table and the closing "opbench:" line)."""
    def pick(lines):
        out, keep, taken = [], False, 0
        for line in lines:
            if line.startswith("Per backend"):
                break
            if line and not line.startswith(" "):  # an entry's name line
                keep = "/be:" in line and any(re.search(n, line) for n in names)
                keep = keep and (count is None or taken < count)
                taken += keep
            if keep and line.strip():
                out.append(line)
        end = next((i for i, l in enumerate(lines) if l.startswith("Per backend")), len(lines))
        rest = lines[end:]
        if tail == "table":
            table = []
            for line in rest:
                if table and not line.startswith(("  ---", "  backend")) and not re.match(r"  \w+ +\d", line):
                    break
                table.append(line)
            rest = table + [l for l in rest if l.startswith("opbench:")]
        return out + ["..."] + rest
    return pick


EXAMPLES = {
    # README, "What a run looks like": two entries of the quick suite and the tables.
    "readme-run": Example("quick", "opbench run suites/quick.toml --backends {backends}",
                          entries([r"^softmax/B:2/R:16/C:64/dt:f32/"], count=2, tail="table")),
    # docs/cli.md, "What the run prints".
    "run-console": Example("quick", "opbench run suites/quick.toml --backends {backends}",
                           entries([r"^add/", r"^matmul/B:1/M:64/N:64/K:64/"])),
    # docs/compare.md: the README's runnable compare, and --by backend.
    "compare": Example("compare", "opbench compare docs/examples/quick-a.json docs/examples/quick-b.json", whole),
    "by-backend": Example("by-backend", "opbench compare --by backend docs/examples/quick-a.json", whole),
    # docs/bottlenecks.md: analyze on the whole quick run.
    "analyze": Example("analyze", "opbench analyze results/quick.json", head(24)),
    # docs/compare.md: history over an archive of the three sets.
    "history": Example("history", "opbench history archive --suite quick --case 'softmax|add'", whole),
}


def run(cmd, cwd, ok=(0,)):
    print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode not in ok:
        sys.exit(f"doc_examples: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr[-2000:]}")
    return r


def machine_line(commit):
    """Where and when the examples were measured, from lscpu and the clock."""
    info = {}
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            key, _, value = line.partition(":")
            info[key.strip()] = value.strip()
    except OSError:
        pass
    cpu = info.get("Model name", "unknown CPU")
    if "CPU family" in info:
        cpu += f" (family {info['CPU family']}, model {info.get('Model', '?')})"
    guest = f", a {info['Hypervisor vendor']} guest" if info.get("Hypervisor vendor") else ""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Measured on {cpu}{guest}, {os.cpu_count()} vCPUs, load {os.getloadavg()[0]:.1f};\n"
            f"{when}, commit {commit}; `scripts/doc_examples.py` regenerates it.")


def outputs(args, work):
    """Each source's console lines."""
    opbench = os.path.abspath(args.opbench)
    shutil.copytree(os.path.join(ROOT, "suites"), os.path.join(work, "suites"))
    os.makedirs(os.path.join(work, "results"))
    os.makedirs(os.path.join(work, "docs", "examples"))
    fixtures = [os.path.join(ROOT, "docs", "examples", f"quick-{s}.json") for s in "ab"]
    for side, path in zip("ab", fixtures):
        if args.fixtures or not os.path.exists(path):
            out = os.path.join(work, "docs", "examples", f"quick-{side}.json")
            run([opbench, "run", "suites/quick.toml", "--backends", args.backends, "--repetitions", "5",
                 f"--benchmark_filter={FIXTURE_FILTER}", "--out", out], work, ok=(0, 1))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copy(out, path)
        else:
            shutil.copy(path, os.path.join(work, "docs", "examples"))
    quick = run([opbench, "run", "suites/quick.toml", "--backends", args.backends, "--out", "results/quick.json"],
                work, ok=(0, 1))
    res = {"quick": (quick.stdout + quick.stderr).splitlines()}
    a, b = "docs/examples/quick-a.json", "docs/examples/quick-b.json"
    res["compare"] = run([opbench, "compare", a, b], work, ok=(0, 1)).stdout.splitlines()
    res["by-backend"] = run([opbench, "compare", "--by", "backend", a], work).stdout.splitlines()
    res["analyze"] = run([opbench, "analyze", "results/quick.json"], work).stdout.splitlines()
    run([opbench, "archive", "archive", a, b, "results/quick.json"], work)
    res["history"] = run([opbench, "history", "archive", "--suite", "quick", "--case", "softmax|add"],
                         work).stdout.splitlines()
    return res


MARKER = re.compile(r"^(<!-- example: ([\w-]+) -->\n)(.*?)^(<!-- /example -->)$", re.S | re.M)


def markdown_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opbench", default=os.path.join(ROOT, "build", "harness", "opbench"))
    p.add_argument("--backends", default="naive,onednn")
    p.add_argument("--keep", help="keep the runs' files in this directory")
    p.add_argument("--fixtures", action="store_true", help="measure docs/examples/quick-{a,b}.json again")
    p.add_argument("--check", action="store_true", help="only check that every marker names a known example")
    args = p.parse_args()

    unknown = [(f, m.group(2)) for f in markdown_files() for m in MARKER.finditer(open(f).read())
               if m.group(2) not in EXAMPLES]
    for f, name in unknown:
        print(f"doc_examples: {os.path.relpath(f, ROOT)}: no example named '{name}'", file=sys.stderr)
    if args.check or unknown:
        return 1 if unknown else 0

    work = args.keep or tempfile.mkdtemp(prefix="doc-examples-")
    os.makedirs(work, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    res = outputs(args, work)
    caption = machine_line(commit)
    for f in markdown_files():
        text = open(f).read()

        def fill(m):
            ex = EXAMPLES[m.group(2)]
            shown = ex.shown.format(backends=args.backends)
            lines = [l.rstrip() for l in ex.pick(res[ex.source])]
            return (m.group(1) + caption + "\n\n```text\n$ " + shown + "\n" + "\n".join(lines) + "\n```\n"
                    + m.group(4))

        new = MARKER.sub(fill, text)
        if new != text:
            open(f, "w").write(new)
            print(f"doc_examples: wrote {os.path.relpath(f, ROOT)}", file=sys.stderr)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
