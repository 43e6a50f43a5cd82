#!/usr/bin/env python3
"""Issue 16: the harness knows no op by name outside harness/workload/ (the
decoder composes ops by name); everywhere else it reads the op table
(plugins/opbench/ops.hpp). Fails, listing file:line, when a source file of
harness/ outside workload/ names an op, comments included.

usage: op_names_lint.py SOURCE_ROOT"""
import pathlib
import re
import sys

OP_NAMES = re.compile(r"rmsnorm|layernorm|softmax|gelu|silu|attention|matmul", re.IGNORECASE)


def main() -> int:
    harness = pathlib.Path(sys.argv[1]) / "harness"
    found = []
    for path in sorted(harness.rglob("*")):
        rel = path.relative_to(harness)
        if not path.is_file() or rel.parts[0] == "workload":
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OP_NAMES.search(line):
                found.append(f"harness/{rel}:{number}: {line.strip()}")
    for f in found:
        print(f)
    print(f"op_names_lint: {len(found)} line(s) of harness/ outside workload/ name an op"
          + (" (say it through the op table)" if found else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
