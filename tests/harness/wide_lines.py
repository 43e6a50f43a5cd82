#!/usr/bin/env python3
"""Prints the lines of FILE wider than 100 columns, counted in characters
(awk counts bytes in the C locale: a line of 100 characters with a "±" read
as 101 and failed a test on a busy machine); exits 1 when there is one.

usage: wide_lines.py FILE [--except TEXT]   (lines containing TEXT, such as a
       temporary directory's path, are not counted)"""
import sys


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--except"):
        sys.exit(__doc__)
    skip = argv[3] if len(argv) == 4 else None
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        wide = [line for line in f.read().splitlines() if len(line) > 100 and not (skip and skip in line)]
    for line in wide:
        print(f"{len(line)} columns: {line}")
    return 1 if wide else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
