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

usage: generate_archive.py SET.json DIR N [--opbench PATH]"""
import json
import os
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
    if len(args) != 3:
        sys.exit(__doc__)
    src, out, n = args[0], args[1], int(args[2])
    with open(src, encoding="utf-8") as f:
        base = json.load(f)
    ob = base["context"]["opbench"]
    ob.setdefault("machine", {})
    ob["machine"]["id"] = ob["machine"].get("id") or "generated-machine"
    if opbench:
        stored = via_opbench(base, out, n, opbench)
    else:
        stored = laid_out(base, out, n)
    print(f"{stored} runs of suite '{ob['suite']['name']}' on {ob['machine']['id']} in {out}")


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
