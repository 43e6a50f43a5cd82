#!/usr/bin/python3
"""Writes an opbench archive of N runs from one real result set, for timing
`opbench history` and `archive prune` on a large archive (docs/ci.md): each
copy gets its own timestamp (one hour apart), commit and medians scaled by a
small drift, laid out and indexed as `opbench archive` does (results/README.md,
"Archive"). The machine id, suite and build type are the set's own.

usage: generate_archive.py SET.json DIR N"""
import json
import os
import sys
from datetime import datetime, timedelta, timezone


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(src, encoding="utf-8") as f:
        base = json.load(f)
    ob = base["context"]["opbench"]
    machine = ob.get("machine", {}).get("id") or "generated-machine"
    ob.setdefault("machine", {})["id"] = machine
    suite = ob["suite"]["name"]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rows = []
    os.makedirs(os.path.join(out, machine, suite), exist_ok=True)
    for i in range(n):
        stamp = (start + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        commit = f"{i:012x}"
        ob["timestamp"] = stamp
        ob["build"]["git_commit"] = commit
        scale = 1 + 0.01 * ((i * 7) % 5 - 2)  # +-2% drift between runs
        text = json.dumps(base)
        rel = os.path.join(machine, suite, stamp.replace("-", "").replace(":", "") + f"-{commit}.json")
        with open(os.path.join(out, rel), "w", encoding="utf-8") as f:
            f.write(text if scale == 1 else scaled(base, scale))
        rows.append({"path": rel, "machine_id": machine, "suite": suite, "suite_sha256": ob["suite"].get("sha256", ""),
                     "build_type": ob["build"].get("build_type", ""), "commit": commit, "timestamp": stamp,
                     "host_name": base["context"].get("host_name", ""), "cpu_model": ob["machine"].get("cpu_model", ""),
                     "cases": len({b.get("run_name") for b in base["benchmarks"]})})
    with open(os.path.join(out, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"schema_version": 1, "sets": rows}, f, indent=2)
    print(f"{n} runs of suite '{suite}' on {machine} in {out}")


def scaled(result_set, factor):
    """The set with each repetition's median scaled (what history reads)."""
    copy = json.loads(json.dumps(result_set))
    for b in copy["benchmarks"]:
        st = b.get("stats")
        if isinstance(st, dict) and isinstance(st.get("median"), (int, float)):
            st["median"] *= factor
    return json.dumps(copy)


if __name__ == "__main__":
    main()
