#!/usr/bin/env python3
"""Issue 16: the harness knows no op by name outside harness/workload/ (the
decoder composes ops by name) and the decoder's schema in suite/ (its
[[workload]] keys and shape name the decoder's parts: `gelu = "tanh"`,
`norm = "rmsnorm"`; issue 44 moved it there from workload/, so that suite/
includes nothing of workload/); everywhere else it reads the op table
(plugins/opbench/ops.hpp). Fails, listing file:line, when any other source
file of harness/ names an op, comments included.

usage: op_names_lint.py SOURCE_ROOT"""
import pathlib
import re
import sys

OP_NAMES = re.compile(r"rmsnorm|layernorm|softmax|gelu|silu|attention|matmul", re.IGNORECASE)
# The decoder's schema: plain data and its [[workload]] table reader, below
# workload/ (which runs it) in suite/.
DECODER_SCHEMA = {"suite/decoder_config.hpp", "suite/decoder_config.cpp", "suite/workload_schema.hpp",
                  "suite/workload_schema.cpp"}


def main() -> int:
    harness = pathlib.Path(sys.argv[1]) / "harness"
    found = []
    for path in sorted(harness.rglob("*")):
        rel = path.relative_to(harness)
        if not path.is_file() or rel.parts[0] == "workload" or rel.as_posix() in DECODER_SCHEMA:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OP_NAMES.search(line):
                found.append(f"harness/{rel}:{number}: {line.strip()}")
    for f in found:
        print(f)
    print(f"op_names_lint: {len(found)} line(s) of harness/ outside workload/ and the decoder's schema name an op"
          + (" (say it through the op table)" if found else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
