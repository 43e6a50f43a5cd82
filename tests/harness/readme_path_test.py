#!/usr/bin/env python3
"""The README path is CI's first stage (issue 27): the commands of README.md's
"Two commands" block are lines of .ci/run, byte for byte and in the README's
order, run on a fresh clone (build/ removed before them) and before anything
else builds, tests or runs opbench.

usage: readme_path_test.py SOURCE_ROOT
       readme_path_test.py --self-test SOURCE_ROOT   each planted defect in a
                                                     copy of .ci/run is caught"""
import os
import re
import sys

# A line that builds, tests or runs what the README's commands must come first to.
BUILDS = re.compile(r"\b(meson|ninja|opbench|fuzz\.sh|ci-bench\.sh|gpu-check\.sh)\b")


def readme_commands(readme):
    """The lines of the sh block under '## Two commands', as written."""
    text = readme.split("\n## Two commands\n", 1)
    if len(text) != 2:
        raise SystemExit("README.md has no '## Two commands' section")
    block = re.search(r"```sh\n(.*?)```", text[1], re.S)
    if not block:
        raise SystemExit("README.md's 'Two commands' section has no ```sh block")
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    if len(lines) != 2:
        raise SystemExit(f"README.md's 'Two commands' block holds {len(lines)} lines, not 2: {lines}")
    return lines


def problems(commands, ci_text):
    """What keeps .ci/run from running COMMANDS first on a fresh clone; [] when nothing."""
    lines = ci_text.splitlines()
    found = []
    for command in commands:
        at = [i for i, line in enumerate(lines) if line == command]
        if not at:
            return [f".ci/run lacks the README's command, byte for byte: {command!r}"]
        found.append(at[0])
    out = []
    if found != sorted(found):
        out.append(".ci/run runs the README's commands out of the README's order")
    first = min(found)
    code = lambda line: line.split("#", 1)[0]
    for i, line in enumerate(lines[:first]):
        if BUILDS.search(code(line)):
            out.append(f".ci/run line {i + 1} runs before the README's commands: {line.strip()!r}")
    fresh = [i for i, line in enumerate(lines[:first]) if re.search(r"\brm -rf\b.*\bbuild\b", code(line))]
    if not fresh:
        out.append(".ci/run does not remove build/ before the README's commands (not a fresh clone)")
    for i, line in enumerate(lines[first + 1:max(found)], first + 1):
        if code(line).strip() and BUILDS.search(code(line)):
            out.append(f".ci/run line {i + 1} comes between the README's commands: {line.strip()!r}")
    return out


def self_test(commands, ci_text):
    """Each defect planted in a copy of .ci/run must be caught."""
    c1, c2 = commands
    plants = {
        "a command changed": ci_text.replace(c2, c2.replace("--print-errorlogs", "--print-errorlogs -v"), 1),
        "the order swapped": ci_text.replace(c1, "@@1@@", 1).replace(c2, c1, 1).replace("@@1@@", c2, 1),
        "a build before them": ci_text.replace(c1, "meson compile -C build\n" + c1, 1),
        "a build between them": ci_text.replace(c2, "meson compile -C build\n" + c2, 1),
        "no fresh clone": "\n".join(l for l in ci_text.splitlines() if not re.match(r"\s*rm -rf .*build", l)),
    }
    failed = 0
    for what, text in plants.items():
        if text == ci_text:
            print(f"FAIL: could not plant '{what}' in .ci/run")
            failed += 1
        elif not problems(commands, text):
            print(f"FAIL: '{what}' was not caught")
            failed += 1
        else:
            print(f"caught: {what}: {problems(commands, text)[0]}")
    return failed


def main():
    args = sys.argv[1:]
    planted = args[:1] == ["--self-test"]
    if planted:
        args = args[1:]
    if len(args) != 1:
        raise SystemExit(__doc__)
    root = args[0]
    with open(os.path.join(root, "README.md")) as f:
        commands = readme_commands(f.read())
    with open(os.path.join(root, ".ci", "run")) as f:
        ci_text = f.read()
    if planted:
        sys.exit(1 if self_test(commands, ci_text) else 0)
    found = problems(commands, ci_text)
    for p in found:
        print("FAIL:", p)
    if not found:
        print("PASS: .ci/run runs the README's two commands first, byte for byte, on a fresh clone:")
        for c in commands:
            print("  " + c)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
