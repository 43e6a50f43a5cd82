#!/usr/bin/env python3
"""No function in harness/ longer than 80 lines (issue 16). Parses every
harness source with libclang (Debian's python3-clang-14), using the build's
compile_commands.json, and measures each function definition whose body is
in harness/: its length is the lines from the first line of its declaration
to its closing brace, both included. Lambdas count in the function that
holds them. Bodies are skipped in the parse and their ends found in the
tokens (measure()): 49 s where a full parse took 105 s on 2 vCPUs, with
the same lengths for every function of more than one line.

Fails naming file:line:function:length for each function over the limit,
except those in ALLOWED (none today; the place for a function kept long
while it is being rewritten). The test also fails when an ALLOWED
function is no longer long (or gone), so the list only shrinks.

usage: function_length.py SOURCE_ROOT BUILD_DIR
       function_length.py --self-test SOURCE_ROOT BUILD_DIR
           measures planted 81-line functions and an 80-line one in a copy
           of a harness source, and checks only the first are reported"""
import bisect
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

try:
    import clang.cindex as ci
except ImportError:
    # scripts/install-deps.sh installs them on the README's path (issue 29):
    # without them the rule would go unchecked, so this fails, never skips.
    print("function_length: needs libclang's Python bindings (scripts/install-deps.sh, or "
          "apt-get install python3-clang-14)", file=sys.stderr)
    sys.exit(1)

LIMIT = 80

# (file under harness/, function): a function allowed over the limit for
# now, e.g. while a rewrite is under way; the test fails once it is short, so
# the list only shrinks. Empty: every function in harness/ is within it.
ALLOWED = set()

KINDS = {ci.CursorKind.FUNCTION_DECL, ci.CursorKind.CXX_METHOD, ci.CursorKind.CONSTRUCTOR,
         ci.CursorKind.DESTRUCTOR, ci.CursorKind.CONVERSION_FUNCTION, ci.CursorKind.FUNCTION_TEMPLATE}


def function_name(cursor):
    """Class-qualified name (namespaces left out): Runner::run, main."""
    parts = [cursor.spelling]
    parent = cursor.semantic_parent
    while parent is not None and parent.kind in (ci.CursorKind.CLASS_DECL, ci.CursorKind.STRUCT_DECL,
                                                  ci.CursorKind.CLASS_TEMPLATE):
        parts.insert(0, parent.spelling)
        parent = parent.semantic_parent
    return "::".join(parts)


def body_end_line(tokens, after):
    """The line of the closing brace of the body that follows offset `after`
    (where a declaration parsed with its body skipped ends), or None for a
    declaration without one (`;`, `= 0`, `= delete`); `= default` ends on its
    own line. A constructor's member initialisers (`: a_(x), b_{y}`) are
    passed over: a brace right after a name or `>` belongs to one."""
    i = bisect.bisect_left(tokens, after, key=lambda token: token[1])
    for k in (i - 1, i + 1):  # `= default`: the extent may end before or after it
        if 0 < k < len(tokens) and tokens[k][0] == "default" and tokens[k - 1][0] == "=":
            return tokens[k][3]
    depth, initialisers = 0, False
    while i < len(tokens):
        text = tokens[i][0]
        if depth == 0 and text in (";", "="):
            return None
        if depth == 0 and text == ":":
            initialisers = True
        if depth == 0 and text == "{":
            close = matching_brace(tokens, i)
            if close is None:
                return None
            member = initialisers and (tokens[i - 1][0] == ">" or tokens[i - 1][2])
            if not member:
                return handlers_end(tokens, close)
            i = close + 1
            continue
        if text in ("(", "["):
            depth += 1
        elif text in (")", "]"):
            depth -= 1
        i += 1
    return None


def handlers_end(tokens, close):
    """The last line of a body closing at tokens[close], a function-try-block's
    catch handlers included."""
    while close + 1 < len(tokens) and tokens[close + 1][0] == "catch":
        k = close + 1
        while k < len(tokens) and tokens[k][0] != "{":
            k += 1
        handler = matching_brace(tokens, k)
        if handler is None:
            break
        close = handler
    return tokens[close][3]


def matching_brace(tokens, i):
    depth = 0
    for k in range(i, len(tokens)):
        if tokens[k][0] == "{":
            depth += 1
        elif tokens[k][0] == "}":
            depth -= 1
            if depth == 0:
                return k
    return None


def made_by_macro(cursor, tokens):
    """Whether the function is written by a macro (NLOHMANN_DEFINE_TYPE_*'s
    to_json/from_json): its name is then not among the file's tokens within
    its extent, which is the macro's invocation."""
    name = cursor.spelling.lstrip("~")
    name = "operator" if name.startswith("operator") else name
    first = bisect.bisect_left(tokens, cursor.extent.start.offset, key=lambda token: token[1])
    last = bisect.bisect_right(tokens, cursor.extent.end.offset, key=lambda token: token[1])
    return not any(text == name for text, _, _, _ in tokens[first:last])


def file_tokens(tu, path, cache):
    """[(spelling, offset, is_identifier, line)] of a whole file, lexed once
    per translation unit."""
    if path not in cache:
        size = os.path.getsize(path)
        extent = tu.get_extent(path, (0, size))
        cache[path] = [(t.spelling, t.extent.start.offset, t.kind == ci.TokenKind.IDENTIFIER, t.extent.start.line)
                       for t in tu.get_tokens(extent=extent)]
    return cache[path]


def measure(job):
    """[(path, line, name, length)] of the function definitions whose file is
    under `harness`, in one translation unit; errors: [str].

    Parsed with function bodies skipped: libclang then neither instantiates
    nor checks what they use (about twice as fast; the compiler checks the
    bodies, and .ci/run's ASan build, compiled without the precompiled
    header, that each source includes what they use). A definition's last
    line is its body's closing brace, found in the file's tokens after the
    declaration."""
    source, args, harness = job
    tu = ci.Index.create().parse(source, args=args, options=ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES)
    errors = [f"{d.location.file}:{d.location.line}: {d.spelling}" for d in tu.diagnostics
              if d.severity >= ci.Diagnostic.Error]
    found, tokens = [], {}

    def walk(cursor):
        for child in cursor.get_children():
            f = child.location.file
            if f is None or not os.path.realpath(f.name).startswith(harness + os.sep):
                continue
            if child.kind in KINDS:
                path = os.path.realpath(f.name)
                start = child.extent.start.line
                in_file = file_tokens(tu, f.name, tokens)
                if child.is_definition() or made_by_macro(child, in_file):
                    end = child.extent.end.line
                else:
                    end = body_end_line(in_file, child.extent.end.offset)
                if end is not None:
                    found.append((path, start, function_name(child), end - start + 1))
                continue  # what is inside (lambdas, local classes) counts in it
            walk(child)

    walk(tu.cursor)
    return found, errors


def compile_args(entry):
    """The compiler's arguments without the compiler, the source and -o/-c."""
    args = entry["command"].split() if "command" in entry else list(entry["arguments"])
    while args and not args[0].startswith("-"):
        args.pop(0)  # the compiler (ccache c++)
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        # -include of Meson's precompiled header: a GCC .gch libclang cannot
        # read (each source includes what it uses: .ci/run's ASan build
        # compiles them without it).
        if a in ("-o", "-MF", "-MQ", "-MT", "-include"):
            skip = True
            continue
        # -I/usr/include would put C headers before libstdc++'s (its
        # #include_next then fails under clang); it is a default path anyway.
        if a in ("-c", "-MD", "-I/usr/include", "-fpch-preprocess", "-Winvalid-pch") or a.startswith("-fdiagnostics-color") or a == entry["file"] or a.endswith(os.path.basename(entry["file"])):
            continue
        out.append(a)
    return out


def jobs_for(source_root, build_dir):
    """One job per .cpp under harness/: its own compile command, or (for a
    source the build leaves out, e.g. alloc_tracker.cpp under a sanitizer)
    the arguments of another harness source."""
    harness = os.path.realpath(os.path.join(source_root, "harness"))
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        commands = json.load(f)
    by_source = {}
    for e in commands:
        path = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if path.startswith(harness + os.sep) and path not in by_source:
            by_source[path] = (e["directory"], compile_args(e))
    if not by_source:
        sys.exit(f"function_length: {build_dir}/compile_commands.json compiles nothing under {harness}")
    any_args = next(iter(by_source.values()))
    jobs = []
    for root, _, files in os.walk(harness):
        for name in sorted(files):
            if not name.endswith(".cpp"):
                continue
            path = os.path.realpath(os.path.join(root, name))
            directory, args = by_source.get(path, any_args)
            # Relative -I paths are the build directory's.
            args = [a if not a.startswith("-I") or os.path.isabs(a[2:]) else "-I" + os.path.join(directory, a[2:])
                    for a in args]
            jobs.append((path, args, harness))
    return harness, sorted(jobs)


def long_functions(source_root, build_dir, only=None):
    """Functions over LIMIT: [(path under harness/, line, name, length)];
    `only`: measure just this source (a path under harness/)."""
    harness, jobs = jobs_for(source_root, build_dir)
    if only:
        jobs = [j for j in jobs if j[0] == os.path.join(harness, only)]
    seen, errors = {}, []
    with ProcessPoolExecutor(max_workers=2) as pool:
        for found, errs in pool.map(measure, jobs):
            errors += errs
            for path, line, name, length in found:
                seen[(os.path.relpath(path, harness), line)] = (name, length)
    if errors:
        print("function_length: libclang could not parse every source, so lengths may be wrong:", file=sys.stderr)
        for e in sorted(set(errors))[:20]:
            print("  " + e, file=sys.stderr)
        sys.exit(1)
    return [(rel, line, name, length) for (rel, line), (name, length) in sorted(seen.items()) if length > LIMIT]


def sanitized(build_dir):
    """Whether the build is a sanitizer build (build-asan/): its sources are
    the plain build's, measured there."""
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        return any("-fsanitize=" in e.get("command", " ".join(e.get("arguments", []))) for e in json.load(f))


def check(source_root, build_dir):
    if sanitized(build_dir):
        print("function_length: a sanitizer build; the plain build's test measures these sources")
        return 77
    found = long_functions(source_root, build_dir)
    failures = []
    still_long = set()
    for rel, line, name, length in found:
        if (rel, name) in ALLOWED:
            still_long.add((rel, name))
            continue
        failures.append(f"harness/{rel}:{line}:{name}:{length} lines (limit {LIMIT}): split it into parts "
                        "with one job each")
    for rel, name in sorted(ALLOWED - still_long):
        failures.append(f"harness/{rel}: {name} is allowed to be long but is not (or is gone): "
                        "remove it from ALLOWED in tests/harness/function_length.py")
    for rel, line, name, length in found:
        if (rel, name) in ALLOWED:
            print(f"allowed for now: harness/{rel}:{line}:{name}:{length} lines")
    for f in failures:
        print(f, file=sys.stderr)
    print(f"function_length: {len(found)} function(s) over {LIMIT} lines, {len(found) - len(failures)} allowed, "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


def planted(first_line):
    """C++ to append to a source whose next line is `first_line`, and the
    long functions it holds: [(path, line, name, length)]. The constructor's
    braced initialisers must not be taken for its body, and the catch
    handler counts in the function-try-block (79 lines without it)."""
    def lines(n, statement):
        return "".join(f"    {statement.format(i)}\n" for i in range(n))

    plants = [
        ("planted_81", "int planted_81(int x) {\n" + lines(78, "x += {};") + "    return x;\n}\n"),
        (None, "int planted_80(int x) {\n" + lines(77, "x += {};") + "    return x;\n}\n"),
        (None, "struct PlantedInit {\n    int a_, b_;\n    explicit PlantedInit(int x);\n};\n"),
        ("PlantedInit::PlantedInit",
         "PlantedInit::PlantedInit(int x) : a_{x}, b_(x) {\n" + lines(78, "a_ += {};") + "    b_ = a_;\n}\n"),
        ("planted_try", "int planted_try(int x) try {\n" + lines(77, "x += {};") +
         "} catch (...) {\n    return 0;\n}\n"),
    ]
    text, want, line = "", [], first_line
    for name, code in plants:
        if name:
            want.append(("files/atomic_file.cpp", line, name, code.count("\n")))
        text += code
        line += code.count("\n")
    return text, want


def self_test(source_root, build_dir):
    """Plants functions in a copy of files/atomic_file.cpp (planted(): 81
    and 80 lines, a constructor with braced member initialisers, a
    function-try-block) and checks the measurement names the long ones
    only, with their lines."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        os.makedirs(copy)
        shutil.copytree(os.path.join(source_root, "harness"), os.path.join(copy, "harness"))
        plugins = os.path.join(source_root, "plugins")
        os.symlink(plugins, os.path.join(copy, "plugins"))
        target = os.path.join(copy, "harness", "files", "atomic_file.cpp")
        with open(target) as f:
            text = f.read()
        plants, want = planted(text.count("\n") + 2)
        with open(target, "a") as f:
            f.write("\n" + plants)
        # The copy's sources compile with the build's arguments.
        with open(os.path.join(build_dir, "compile_commands.json")) as f:
            commands = json.load(f)
        real = os.path.realpath(source_root)
        for e in commands:
            e["file"] = os.path.realpath(os.path.join(e["directory"], e["file"])).replace(real, copy, 1)
        fake_build = os.path.join(tmp, "build")
        os.makedirs(fake_build)
        with open(os.path.join(fake_build, "compile_commands.json"), "w") as f:
            json.dump(commands, f)
        found = [x for x in long_functions(copy, fake_build, only="files/atomic_file.cpp")
                 if x[0] == "files/atomic_file.cpp"]
        if found != want:
            print(f"function_length --self-test: measured {found}, expected {want}", file=sys.stderr)
            return 1
        print(f"function_length --self-test: the planted 81-line functions are caught ({len(want)}), "
              "the 80-line one is not")
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
