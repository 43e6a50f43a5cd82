#!/usr/bin/env python3
"""The documents agree with the program (issue 45).

README.md and docs/*.md are read, and each of these is a failure:

  runnable   a shell block marked runnable (a fence whose info string is
             `sh runnable`, or any ```sh block right after a line
             `<!-- runnable -->`) exits non-zero. It runs under bash -e in a
             scratch directory holding copies of suites/ and docs/examples/,
             with `build/harness/opbench` replaced by the program given.
  flag       an option written in code (`opbench compare --threshold 3%`, a
             table row of docs/cli.md's run options) that `opbench ... --help`
             does not list: after `opbench SUB` it must be SUB's; elsewhere
             any opbench command's, or a flag the scripts/ and .ci/ files or
             a few named tools (meson, pkg-config, compare.py) take.
  word       a documented status, quality, verdict or quality reason that
             the program's sources no longer write: a list of backticked
             words such as "`passed`, `failed`, `skipped` or `starved`" that
             holds one of them must hold only such words, and "status `X`" /
             "quality `X`" / "verdict `X`" must name one. The words are read
             from the writers' tables in harness/ (CaseStatus's JSON names,
             quality_name, the QualityReason codes, compare's verdicts, the
             readers' statuses).
  column     a column of the tidy CSV documented in results/README.md ("CSV
             and pandas") that `opbench compare --format csv` does not write.
  link       a relative link in README.md or docs/ to a file that does not
             exist, or to a heading (#anchor) that the file does not have.
  example    an `<!-- example: NAME -->` block that is not closed, or whose
             NAME scripts/doc_examples.py does not know how to regenerate.

usage: docs_test.py SOURCE_ROOT OPBENCH
       docs_test.py --self-test SOURCE_ROOT OPBENCH   three defects planted in
                    a copy of the documents (a stale runnable block, a flag
                    that does not exist, a status word that does not exist)
                    must each be caught"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

RUN_TIMEOUT = 120  # seconds for one runnable block

# Flags of programs other than opbench that the documents show, beyond those
# read from scripts/, tests/ and .ci/ (meson, ninja, pkg-config, Google
# Benchmark's compare.py, GoogleTest, git, Slurm's sbatch).
OTHER_TOOLS_FLAGS = {
    "--print-errorlogs", "--benchmark", "--suite", "--no-suite", "--prefix", "--destdir", "--tags", "--no-rebuild",
    "--cflags", "--libs", "--variable", "--timeout-multiplier", "--buildtype", "--wipe", "--reconfigure",
    "--display", "--headless", "--short", "--array", "--version", "--help", "--defined-only", "--dump-only",
    "--num-callers", "--output", "--repeat", "--num-processes", "--gtest_shuffle", "--dirty",
    "--flag",  # a placeholder in prose ("the `--flag`")
}


def documents(root, kinds=("README.md", "docs")):
    """(relative path, text) of README.md and docs/*.md."""
    out = []
    for kind in kinds:
        if kind.endswith(".md"):
            paths = [os.path.join(root, kind)]
        else:
            paths = sorted(glob.glob(os.path.join(root, kind, "*.md")))
        for p in paths:
            if os.path.exists(p):
                with open(p, encoding="utf-8") as f:
                    out.append((os.path.relpath(p, root), f.read()))
    return out


FENCE = re.compile(r"^(```+)([^\n`]*)\n(.*?)^\1[ \t]*$", re.S | re.M)


def fenced_blocks(text):
    """(info string, body, line number of the fence, preceding line) of each fenced block."""
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        yield m.group(2).strip(), m.group(3), text.count("\n", 0, m.start()) + 1, before


def is_runnable(info, before):
    words = info.split()
    return (words[:1] == ["sh"] and "runnable" in words) or (words[:1] == ["sh"] and before == "<!-- runnable -->")


def unfenced(text):
    """The text with fenced blocks blanked (line numbers kept)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def code_spans(text):
    """(code, line) of each inline `code` span outside fenced blocks."""
    plain = unfenced(text)
    for m in re.finditer(r"(?<!`)`([^`\n]+)`(?!`)", plain):
        yield m.group(1), plain.count("\n", 0, m.start()) + 1


# --- what the program has -------------------------------------------------

HELP_OPTION = re.compile(r"^\s+(?:-\w,\s*)?(--[A-Za-z][\w-]*)", re.M)


def help_text(opbench, args):
    r = subprocess.run([opbench, *args, "--help"], capture_output=True, text=True, timeout=60)
    return r.stdout + r.stderr


def program_flags(opbench):
    """{subcommand path ('' for the top level, 'archive prune'): set of --flags} from --help."""
    top = help_text(opbench, [])
    subs = re.findall(r"^  ([a-z]+)\s", top.split("SUBCOMMANDS:", 1)[-1] if "SUBCOMMANDS:" in top
                      else top.split("Subcommands:", 1)[-1], re.M)
    flags = {"": set(HELP_OPTION.findall(top))}
    for sub in subs:
        text = help_text(opbench, [sub])
        flags[sub] = set(HELP_OPTION.findall(text)) | flags[""]
        if "--benchmark_* go to Google Benchmark" in top.split(f"\n  {sub} ", 1)[-1].split("\n  ", 1)[0] + text:
            flags[sub].add("--benchmark_*")
        inner = text.split("SUBCOMMANDS:", 1)[-1] if "SUBCOMMANDS:" in text else text.split("Subcommands:", 1)
        if isinstance(inner, list):
            inner = inner[-1] if len(inner) == 2 else ""
        for s2 in re.findall(r"^  ([a-z]+)\s", inner, re.M):
            flags[f"{sub} {s2}"] = set(HELP_OPTION.findall(help_text(opbench, [sub, s2]))) | flags[sub]
    if len(flags) < 5:
        raise SystemExit(f"{opbench} --help lists {len(flags) - 1} subcommands: is it the opbench program?")
    return flags


def read_sources(root, pattern):
    text = ""
    for p in sorted(glob.glob(os.path.join(root, "harness", "**", pattern), recursive=True)):
        with open(p, encoding="utf-8", errors="replace") as f:
            text += f.read() + "\n"
    return text


def program_words(root):
    """{'status', 'quality', 'verdict', 'reason'}: the words the writers' tables in harness/ hold."""
    src = read_sources(root, "*.cpp") + read_sources(root, "*.hpp")
    enum = re.search(r"NLOHMANN_JSON_SERIALIZE_ENUM\(CaseStatus,(.*?)\)\s*\n", src, re.S)
    status = set(re.findall(r'"(\w+)"', enum.group(1))) if enum else set()
    status |= set(re.findall(r'\bstatus = "(\w+)"', src))  # the readers' "ok", "absent"
    quality = set(re.findall(r'case Quality::\w+: return "(\w+)"', src))
    reason = set(re.findall(r'QualityReason\{"(\w+)"', src)) | set(re.findall(r'\{"(\w+)",\s*Quality::\w+', src))
    verdict = set()
    for name in ("readers/compare.cpp", "measure/paired_stats.cpp"):
        with open(os.path.join(root, "harness", name), encoding="utf-8") as f:
            s = f.read()
        verdict |= set(re.findall(r'verdict = "(\w+)"', s))
        verdict |= set(re.findall(r'return "([a-z]+)";', s))
        verdict |= {w for pair in re.findall(r'\? "([a-z]+)" : "([a-z]+)"', s) for w in pair}
    words = {"status": status, "quality": quality, "verdict": verdict, "reason": reason}
    for kind, found in words.items():
        if not found:
            raise SystemExit(f"found no {kind} words in harness/: has the table moved? (tests/harness/docs_test.py)")
    return words


def tool_flags(root):
    """Flags that the project's scripts and test tools (scripts/, tests/, .ci/) take or pass:
    the documents show their commands too."""
    out = set(OTHER_TOOLS_FLAGS)
    paths = glob.glob(os.path.join(root, "scripts", "*")) + glob.glob(os.path.join(root, ".ci", "*"))
    for ext in ("py", "sh", "cpp", "build"):
        paths += glob.glob(os.path.join(root, "tests", "**", f"*.{ext}"), recursive=True)
    for p in paths:
        if os.path.isfile(p):
            with open(p, encoding="utf-8", errors="replace") as f:
                out |= set(re.findall(r"(--[A-Za-z][\w-]*)", f.read()))
    return out


def csv_header(opbench, root, scratch):
    """The tidy CSV's columns, from `opbench compare --format csv` on docs/examples' sets."""
    sets = sorted(glob.glob(os.path.join(root, "docs", "examples", "*.json")))[:2]
    if len(sets) < 2:
        raise SystemExit("docs/examples/ holds fewer than 2 result sets for the CSV check")
    r = subprocess.run([opbench, "compare", *sets, "--format", "csv"], capture_output=True, text=True,
                       timeout=120, cwd=scratch)
    if r.returncode not in (0, 1):
        raise SystemExit(f"opbench compare --format csv failed ({r.returncode}): {r.stderr}")
    return set(r.stdout.splitlines()[0].split(","))


# --- the checks ---------------------------------------------------------

def scratch_dir(root):
    d = tempfile.mkdtemp(prefix="docs-test-")
    shutil.copytree(os.path.join(root, "suites"), os.path.join(d, "suites"))
    if os.path.isdir(os.path.join(root, "docs", "examples")):
        shutil.copytree(os.path.join(root, "docs", "examples"), os.path.join(d, "docs", "examples"))
    os.makedirs(os.path.join(d, "results"))
    return d


def check_runnable(docs, root, opbench):
    problems = []
    count = 0
    for path, text in docs:
        for info, body, line, before in fenced_blocks(text):
            if not is_runnable(info, before):
                continue
            count += 1
            script = body.replace("build/harness/opbench", shlex.quote(os.path.abspath(opbench)))
            d = scratch_dir(root)
            try:
                r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=d, capture_output=True,
                                   text=True, timeout=RUN_TIMEOUT)
                if r.returncode != 0:
                    tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
                    problems.append(f"runnable: {path}:{line}: the block exits {r.returncode}: {' | '.join(tail)}")
            except subprocess.TimeoutExpired:
                problems.append(f"runnable: {path}:{line}: the block ran past {RUN_TIMEOUT} s")
            finally:
                shutil.rmtree(d, ignore_errors=True)
    return problems, count


def command_lines(text):
    """(code, line) of each piece of code that may hold options: every line of
    a shell-ish fenced block (continuation lines joined) and every inline span."""
    for info, body, line, _ in fenced_blocks(text):
        if info.split()[:1] and info.split()[0] not in ("sh", "bash", "console", "shell", "yaml"):
            continue
        joined, start = "", line + 1
        for i, raw in enumerate(body.splitlines()):
            if not joined:
                start = line + 1 + i
            if raw.rstrip().endswith("\\"):
                joined += raw.rstrip()[:-1] + " "
                continue
            yield (joined + raw).split(" #", 1)[0], start
            joined = ""
    yield from code_spans(text)


OPBENCH_CALL = re.compile(r"\bopbench\s+([a-z]+)(?:\s+([a-z]+))?")
FLAG = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*)")


def flag_ok(flag, allowed):
    if flag in allowed:
        return True
    # --benchmark_* options go to Google Benchmark (run and ab pass them on).
    return flag.startswith("--benchmark_") and "--benchmark_*" in allowed


def check_flags(docs, flags, others):
    problems = []
    every = set().union(*flags.values())
    for path, text in docs:
        for code, line in command_lines(text):
            if code.lstrip().startswith("$ ") is False and "opbench" not in code and not FLAG.search(code):
                continue
            calls = [c for c in OPBENCH_CALL.finditer(code) if c.group(1) in flags]
            for i, call in enumerate(calls):
                sub = call.group(1)
                if call.group(2) and f"{sub} {call.group(2)}" in flags:
                    sub = f"{sub} {call.group(2)}"
                rest = code[call.end():calls[i + 1].start() if i + 1 < len(calls) else len(code)]
                # A pipe, ;, && or a redirection ends the opbench command.
                rest = re.split(r"\s(?:\||;|&&|>>?)\s", rest, 1)[0]
                for flag in FLAG.findall(rest):
                    if not flag_ok(flag, flags[sub]):
                        problems.append(f"flag: {path}:{line}: `opbench {sub}` has no {flag} (opbench {sub} --help)")
            if calls:
                code = code[:calls[0].start()]
            for flag in FLAG.findall(code):
                if not flag_ok(flag, every) and flag not in others:
                    problems.append(f"flag: {path}:{line}: no opbench command (nor scripts/) takes {flag}")
    # The run options table: each row's flags are `opbench run`'s.
    for path, text in docs:
        for section in re.split(r"\n(?=## )", text):
            title = section.split("\n", 1)[0]
            m = re.match(r"## `opbench ([a-z]+)` options", title)
            if not m or m.group(1) not in flags:
                continue
            for row in re.findall(r"^\| (`--[^|]*?) \|", section, re.M):
                for flag in FLAG.findall(row):
                    if not flag_ok(flag, flags[m.group(1)]):
                        problems.append(f"flag: {path}: the `opbench {m.group(1)}` options table lists {flag}, "
                                        f"which opbench {m.group(1)} --help does not")
    return problems


WORD_LIST = re.compile(r"`(\w+)`(?:(?:,| or| and|,? or|,? and|/) ?`(\w+)`)+")


def check_words(docs, words):
    problems = []
    core = words["status"] | words["quality"]
    known = set().union(*words.values())
    for path, text in docs:
        plain = unfenced(text)
        for m in WORD_LIST.finditer(plain):
            listed = re.findall(r"`(\w+)`", m.group(0))
            if sum(w in core for w in listed) < 2:  # a list of statuses or qualities holds two or more
                continue
            for w in listed:
                if w not in known:
                    line = plain.count("\n", 0, m.start()) + 1
                    problems.append(f"word: {path}:{line}: `{w}` is listed with {', '.join(x for x in listed if x != w)}"
                                    f" but the program writes no status, quality, verdict or reason `{w}`")
        for kind in ("status", "quality", "verdict"):
            for m in re.finditer(rf"\b{kind}(?:es)? `(\w+)`|`(\w+)` {kind}\b", plain):
                w = m.group(1) or m.group(2)
                allowed = words[kind] | (words["status"] if kind == "verdict" else set())
                if w not in allowed:
                    line = plain.count("\n", 0, m.start()) + 1
                    problems.append(f"word: {path}:{line}: {kind} `{w}`: the program writes no such {kind} "
                                    f"({', '.join(sorted(words[kind]))})")
    return problems


def check_columns(root, columns):
    path = os.path.join(root, "results", "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    section = text.split("\n## CSV and pandas\n", 1)
    if len(section) != 2:
        return ["column: results/README.md has no '## CSV and pandas' section"]
    problems = []
    table = section[1].split("\n\n| column |", 1)[-1].split("\n\n", 1)[0]
    for row in re.findall(r"^\| ([^|]*) \|", table, re.M):
        for col in re.findall(r"`([a-z_0-9]+)`", row):
            if col not in columns:
                problems.append(f"column: results/README.md: CSV column `{col}` is not in "
                                f"`opbench compare --format csv`'s header")
    return problems


def slug(heading):
    """GitHub's anchor of a heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def check_links(docs, root):
    problems = []
    for path, text in docs:
        here = os.path.dirname(os.path.join(root, path))
        for m in re.finditer(r"\]\(([^)\s]+)\)", unfenced(text)):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(here, file)) if file else os.path.join(root, path)
            if not os.path.exists(full):
                problems.append(f"link: {path}: {target}: no such file")
                continue
            if anchor and full.endswith(".md"):
                with open(full, encoding="utf-8") as f:
                    heads = {slug(h) for h in re.findall(r"^#+ (.*)$", unfenced(f.read()), re.M)}
                if anchor not in heads:
                    problems.append(f"link: {path}: {target}: {os.path.relpath(full, root)} has no such heading")
    return problems


def check_examples(docs, root):
    script = os.path.join(root, "scripts", "doc_examples.py")
    with open(script, encoding="utf-8") as f:
        known = set(re.findall(r'^    "([\w-]+)": Example\(', f.read(), re.M))
    problems = []
    for path, text in docs:
        opened = re.findall(r"^<!-- example: ([\w-]+) -->$", text, re.M)
        closed = len(re.findall(r"^<!-- /example -->$", text, re.M))
        if len(opened) != closed:
            problems.append(f"example: {path}: {len(opened)} example blocks opened, {closed} closed")
        for name in opened:
            if name not in known:
                problems.append(f"example: {path}: scripts/doc_examples.py cannot regenerate example '{name}'")
    return problems


def check(root, opbench, kinds=("runnable", "flag", "word", "column", "link", "example"), program=None):
    docs = documents(root)
    if not docs:
        return ["README.md and docs/ hold no document"], {}
    flags, words = program or (program_flags(opbench), program_words(root))
    problems, counts = [], {}
    if "runnable" in kinds:
        p, counts["runnable blocks"] = check_runnable(docs, root, opbench)
        problems += p
    if "flag" in kinds:
        problems += check_flags(docs + documents(root, ("results/README.md",)), flags, tool_flags(root))
    if "word" in kinds:
        problems += check_words(docs + documents(root, ("results/README.md",)), words)
    if "column" in kinds:
        d = scratch_dir(root)
        try:
            problems += check_columns(root, csv_header(opbench, root, d))
        finally:
            shutil.rmtree(d, ignore_errors=True)
    if "link" in kinds:
        problems += check_links(docs, root)
    if "example" in kinds:
        problems += check_examples(docs, root)
    counts["documents"] = len(docs)
    counts["commands with flags"] = len(flags)
    return problems, counts


def copy_tree(root):
    d = tempfile.mkdtemp(prefix="docs-selftest-")
    for sub in ("docs", "suites", "scripts", "harness", "results"):
        if os.path.isdir(os.path.join(root, sub)):
            shutil.copytree(os.path.join(root, sub), os.path.join(d, sub), symlinks=True)
    if os.path.isdir(os.path.join(root, ".ci")):
        shutil.copytree(os.path.join(root, ".ci"), os.path.join(d, ".ci"))
    shutil.copy(os.path.join(root, "README.md"), d)
    return d


def self_test(root, opbench):
    """Each defect, planted in a copy of the documents, must be caught."""
    program = (program_flags(opbench), program_words(root))
    plants = [
        ("a stale runnable block", "runnable", "docs/cli.md",
         "\n```sh runnable\nbuild/harness/opbench compare docs/examples/gone.json docs/examples/gone-too.json\n```\n",
         "exits"),
        ("a flag opbench does not have", "flag", "docs/compare.md",
         "\nOld sets: `opbench compare a.json b.json --accept-unmet-noise2`.\n", "--accept-unmet-noise2"),
        ("a status word the program does not write", "word", "docs/compare.md",
         "\nEach entry ends `passed`, `failed`, `skipped`, `starved` or `unmeasured`.\n", "unmeasured"),
    ]
    failed = 0
    for what, kind, path, text, token in plants:
        d = copy_tree(root)
        try:
            with open(os.path.join(d, path), "a", encoding="utf-8") as f:
                f.write(text)
            problems, _ = check(d, opbench, kinds=(kind,), program=program)
            hit = [p for p in problems if p.startswith(kind + ":") and path in p and token in p]
            if hit:
                print(f"caught: {what}: {hit[0]}")
            else:
                print(f"FAIL: {what} was not caught (problems: {problems})")
                failed += 1
        finally:
            shutil.rmtree(d, ignore_errors=True)
    return failed


def main(argv):
    selftest = "--self-test" in argv
    args = [a for a in argv if a != "--self-test"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, opbench = os.path.abspath(args[0]), os.path.abspath(args[1])
    if not os.access(opbench, os.X_OK):
        print(f"docs_test: {opbench} is not an executable (build it first)", file=sys.stderr)
        return 2
    if selftest:
        failed = self_test(root, opbench)
        print("PASS: each planted defect was caught" if not failed else f"FAIL: {failed} planted defect(s) missed")
        return 1 if failed else 0
    problems, counts = check(root, opbench)
    for p in problems:
        print(p)
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    if problems:
        print(f"FAIL: {len(problems)} place(s) where the documents and the program disagree ({summary})")
        return 1
    print(f"PASS: the documents agree with the program ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
