#!/usr/bin/env python3
"""harness/ in folders, and the walls between them (shared/design/LAYOUT.md, and
harness/README.md): which folder's files may never include which. Reads every
#include "folder/..." line under harness/, backends/ and plugins/ and fails
on each one that crosses a wall, naming the file, the line and the wall.

Crossings that exist today and need a small split are listed in KNOWN with
the split that ends each; the lint fails on any other crossing, and on a
KNOWN entry that no longer crosses (so the list stays true).

usage: include_lint.py SOURCE_ROOT
       include_lint.py --self-test SOURCE_ROOT   plant a forbidden include in
                                                 a copy and check it is caught"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

FOLDERS = {"cli", "run", "entry", "workload", "readers", "profile", "isolate", "check", "suite",
           "plugin", "measure", "machine", "writers", "files"}

# A -/-> B: nothing in A includes anything in B.
NEVER = {
    # a workload is an entry the runner drives, never its caller
    "workload": {"run", "cli"},
    # the parser holds the workload schema (suite/workload_schema.hpp,
    # suite/decoder_config.hpp), which workload/ reads; it knows no runner
    "suite": {"workload", "run", "cli", "readers", "entry", "isolate"},
    # the recipe and records stand below every runner and know no process
    "measure": {"run", "isolate", "cli", "readers", "entry", "workload"},
    # the loader forwards scopes through a hook (plugin/scope_sink.hpp);
    # host tensors are plain data below both (plugin/host_tensors.hpp)
    "plugin": {"run", "check", "profile", "cli", "readers", "entry", "workload"},
    # memory figures are records (measure/), not result-set structs (entry/)
    "check": {"run", "cli", "readers", "entry"},
    "profile": {"run", "cli", "readers", "entry", "isolate"},
    # The case host runs jobs through an interface (isolate/case_host.hpp's
    # JobKinds) that entry/ and workload/ implement; profiling reaches a job
    # through its recipe, never through the host.
    "isolate": {"run", "cli", "readers", "entry", "workload", "profile"},
    # readers read result sets only, never the writer's structs, and load no plugin
    "readers": {"run", "plugin", "isolate", "workload", "cli", "entry", "profile", "check"},
    # writers format plain data
    "writers": {"run", "readers", "cli", "plugin", "entry", "isolate", "workload"},
    "machine": {"run", "cli", "readers", "plugin", "entry"},
    "entry": {"run", "cli", "readers", "isolate"},
    "run": {"readers", "cli"},
    # below everything
    "files": FOLDERS,
}
# An entry hands the case host a job through its interface, never the host itself.
INTERFACE_HEADERS = {
    "entry": {"isolate/case_job.hpp"},
}

# The SDK and the backends include nothing of harness/.
OUTSIDE = {"plugins": FOLDERS, "backends": FOLDERS}

# (file, included folder/header): today's crossings, each with its split.
KNOWN = set()  # none left: the run stamps bottlenecks from records (measure/bottleneck_rules.hpp)

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([a-z_]+\.hpp)"')


def crossings(root):
    found = []
    for top in ("harness", "backends", "plugins"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            rel_dir = os.path.relpath(dirpath, root).split(os.sep)
            if top == "harness":
                if len(rel_dir) < 2:
                    continue  # main.cpp: the program's entry may include every folder
                never = NEVER.get(rel_dir[1], set())
                wall_of = rel_dir[1]
            else:
                never = OUTSIDE[top]
                wall_of = top
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp", ".h", ".c", ".cu", ".cuh")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        header = f"{m.group(1)}/{m.group(2)}" if m else ""
                        if m and header in INTERFACE_HEADERS.get(wall_of, set()):
                            continue
                        if m and m.group(1) in never and m.group(1) != wall_of:
                            found.append((rel, lineno, f"{m.group(1)}/{m.group(2)}", wall_of))
    return found


# harness/'s top holds the program's entry and its build only.
TOP_LEVEL = {"main.cpp", "meson.build", "git_version.hpp.in", "README.md"}


def stray_top_level(root):
    """Source files at harness/'s top that belong in a folder."""
    top = os.path.join(root, "harness")
    return sorted(f for f in os.listdir(top) if os.path.isfile(os.path.join(top, f)) and f not in TOP_LEVEL)


def lint(root):
    for name in stray_top_level(root):
        print(f"harness/{name}: at harness/'s top, which holds only {', '.join(sorted(TOP_LEVEL))}: "
              "move it into the folder of what it does (harness/README.md)")
    stray = len(stray_top_level(root))
    found = crossings(root)
    bad = [c for c in found if (c[0], c[2]) not in KNOWN]
    stale = set(KNOWN) - {(c[0], c[2]) for c in found}
    for rel, lineno, header, wall_of in bad:
        print(f"{rel}:{lineno}: includes {header}: {wall_of}/ must never include {header.split('/')[0]}/ "
              "(tests/harness/include_lint.py, the walls of harness/README.md)")
    for rel, header in sorted(stale):
        print(f"{rel}: no longer includes {header}: remove it from KNOWN in tests/harness/include_lint.py")
    known = len(found) - len(bad)
    print(f"include_lint: {len(bad)} forbidden include(s), {known} known crossing(s) left to split, "
          f"{len(stale)} stale")
    return 1 if bad or stale or stray else 0


def self_test(root):
    """A copy of the tree with forbidden includes planted must fail, naming each
    (readers/ -> run/, and suite/ -> workload/, the wall issue 44 closed)."""
    with tempfile.TemporaryDirectory() as tmp:
        for top in ("harness", "backends", "plugins"):
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        planted = {"readers/compare.cpp": "run/runner.hpp", "suite/suite.cpp": "workload/decoder.hpp"}
        for target, header in planted.items():
            with open(os.path.join(tmp, "harness", target), "a") as f:
                f.write(f'\n#include "{header}"\n')
        out = subprocess.run([sys.executable, __file__, tmp], capture_output=True, text=True)
        print(out.stdout, end="")
        missed = [t for t in planted if f"harness/{t}" not in out.stdout]
        if out.returncode == 0 or missed:
            print(f"include_lint --self-test: the planted include in {', '.join(missed) or 'the copy'} was not caught")
            return 1
    print("include_lint --self-test: the planted includes readers/ -> run/ and suite/ -> workload/ were caught")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        sys.exit(self_test(sys.argv[2]))
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(lint(sys.argv[1]))
