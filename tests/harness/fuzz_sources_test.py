#!/usr/bin/env python3
"""The fuzz targets' harness sources link on their own. tests/fuzz/meson.build
lists the harness sources the libFuzzer targets compile (a project of its
own, built by clang in CI's last stage); a source a listed one comes to
need, and the list lacks, fails that build's link at CI's end. This test
reads this build's objects of the listed sources (nm): every opbench symbol
one of them needs must be defined by another, else it fails naming the
symbols and the source that defines them (to add to the list).

usage: fuzz_sources_test.py SOURCE_ROOT BUILD_ROOT
       fuzz_sources_test.py --self-test SOURCE_ROOT BUILD_ROOT
           leaves machine/device_roofs.cpp out of the list and checks that
           the readers' need of it is caught"""
import glob
import os
import re
import subprocess
import sys

OPBENCH = "7opbench"  # the namespace in an Itanium-mangled name


def listed_sources(source_root):
    with open(os.path.join(source_root, "tests", "fuzz", "meson.build"), encoding="utf-8") as f:
        return re.findall(r"root / 'harness/([^']+\.cpp)'", f.read())


def object_of(build_root, source):
    """This build's object of harness/SOURCE (Meson names it after the path)."""
    found = glob.glob(os.path.join(build_root, "harness", "*.a.p", source.replace("/", "_") + ".o"))
    return found[0] if found else None


UNDEFINED_TYPES = {"U", "w", "v"}  # nm's types of a symbol an object needs and does not define


def symbol_tables(objects):
    """{object: (defined names, needed names)} of OBJECTS, read by one nm
    run: one run per object costs a tenth of a second each, which on a busy
    CI machine ran this test past its timeout."""
    out = subprocess.run(["nm", "-P", "-A", *objects], capture_output=True, text=True, check=True).stdout
    tables = {obj: (set(), set()) for obj in objects}
    for line in out.splitlines():
        obj, _, rest = line.partition(": ")
        fields = rest.split()
        if obj not in tables or len(fields) < 2:
            continue
        defined, needed = tables[obj]
        (needed if fields[1] in UNDEFINED_TYPES else defined).add(fields[0])
    return tables


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def missing_symbols(source_root, build_root, leave_out=()):
    """{mangled symbol: defining source or None} of what the listed sources
    need and none of them defines; exits 1 when a listed source has no
    object here."""
    sources = [s for s in listed_sources(source_root) if s not in leave_out]
    objects = {}
    for s in sources:
        obj = object_of(build_root, s)
        if obj is None:
            sys.exit(f"fuzz_sources: tests/fuzz/meson.build lists harness/{s}, which this build does not compile")
        objects[s] = obj
    every_object = glob.glob(os.path.join(build_root, "harness", "*.a.p", "*.o"))
    tables = symbol_tables(sorted(set(every_object) | set(objects.values())))
    defined, needed = set(), set()
    for obj in objects.values():
        defined |= tables[obj][0]
        needed |= {n for n in tables[obj][1] if OPBENCH in n}
    missing = sorted(needed - defined)
    where = dict.fromkeys(missing)
    for obj in every_object:
        for name in tables[obj][0] & set(missing):
            where[name] = os.path.basename(obj)
    return where


def check(source_root, build_root):
    where = missing_symbols(source_root, build_root)
    if not where:
        print(f"fuzz_sources: the {len(listed_sources(source_root))} listed harness sources define every "
              "opbench symbol they use")
        return 0
    print("fuzz_sources: tests/fuzz/meson.build's harness sources use opbench symbols none of them defines "
          "(the fuzz build's link fails); add the sources that define them:", file=sys.stderr)
    for (name, obj), pretty in zip(where.items(), demangle(list(where))):
        print(f"  {pretty}\n    defined in {obj or 'no harness object'}", file=sys.stderr)
    return 1


def self_test(source_root, build_root):
    where = missing_symbols(source_root, build_root, leave_out=("machine/device_roofs.cpp",))
    if not any(obj and obj.startswith("machine_device_roofs.cpp") for obj in where.values()):
        print(f"fuzz_sources --self-test: machine/device_roofs.cpp left out, nothing missed: {where}",
              file=sys.stderr)
        return 1
    print(f"fuzz_sources --self-test: machine/device_roofs.cpp left out is caught ({len(where)} symbols)")
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--self-test":
        return self_test(argv[2], argv[3])
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    return check(argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
