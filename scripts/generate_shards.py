#!/usr/bin/python3
"""Writes N shard sets from one real result set, for timing `opbench merge`
of many shards (docs/ci.md, "A Slurm job array": a merge of 100 shards):
shard i of N is a copy of every entry of SET with its case name marked
`/gen:i` (so no two shards overlap), recorded as `--shard i/N`, complete.
The machine id, suite and settings are SET's own, so the shards merge.

usage: generate_shards.py SET.json DIR N"""
import json
import os
import sys


def mark(name, i):
    # The case name is everything before Google Benchmark's /manual_time and
    # aggregate suffixes; the mark goes after the case's own segments.
    head, sep, tail = name.partition("/manual_time")
    return f"{head}/gen:{i}{sep}{tail}"


def main():
    if len(sys.argv) != 4 or not sys.argv[3].isdigit() or int(sys.argv[3]) < 1:
        sys.exit(__doc__)
    src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(src) as f:
        base = json.load(f)
    os.makedirs(out, exist_ok=True)
    for i in range(1, n + 1):
        s = dict(base)
        ob = dict(base["context"]["opbench"])
        ob["shard"] = {"index": i, "count": n}
        ob["complete"] = True
        s["context"] = dict(base["context"], opbench=ob)
        s["benchmarks"] = []
        for e in base["benchmarks"]:
            e = dict(e)
            for key in ("name", "run_name"):
                if key in e:
                    e[key] = mark(e[key], i)
            s["benchmarks"].append(e)
        with open(os.path.join(out, f"shard-{i}.json"), "w") as f:
            json.dump(s, f)
    print(f"generate_shards: {n} shards of {len(base['benchmarks'])} entries each in {out}")


if __name__ == "__main__":
    main()
