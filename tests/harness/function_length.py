#!/usr/bin/env python3
"""No function in harness/ longer than 80 lines (issue 16). Each harness
source and header is lexed once by libclang (Debian's python3-clang-14,
its tokenizer only: no include is opened, so a file takes milliseconds where
parsing it with its headers took about 2 s) and its function definitions
are found in the tokens (functions_in()). A function's length is the lines
from the first line of its declaration (template header, attributes and
return type included) to its closing brace, both included; a
function-try-block's handlers count in it. Lambdas, local classes and
anything else inside a body count in the function that holds them; a lambda
held by a variable outside any function is no function, as for a compiler.

Fails naming file:line:function:length for each function over the limit,
except those in ALLOWED (none today; the place for a function kept long
while it is being rewritten). The test also fails when an ALLOWED
function is no longer long (or gone), so the list only shrinks.

usage: function_length.py SOURCE_ROOT [BUILD_DIR]
       function_length.py --self-test SOURCE_ROOT [BUILD_DIR]
           measures planted functions (81 lines, 80 lines, a constructor with
           braced member initialisers, a function-try-block, in-class
           methods) and things that are not functions (a long brace
           initialiser, a lambda held by a variable, a multi-line macro) in a
           copy of a harness source, and checks only the long functions are
           reported
BUILD_DIR is accepted and unused (the lexer needs no compile commands)."""
import os
import re
import shutil
import sys
import tempfile

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

# libclang's CXTranslationUnit_SingleFileParse: the file's own tokens, its
# includes left unopened (the tokens are all this needs).
SINGLE_FILE_PARSE = 0x400
CLASS_KEYS = {"class", "struct", "union"}
MACRO_NAME = re.compile(r"^[A-Z][A-Z0-9_]+$")


class Token:
    __slots__ = ("text", "line", "identifier")

    def __init__(self, text, line, identifier):
        self.text, self.line, self.identifier = text, line, identifier


def file_tokens(path):
    """The file's tokens, comments and preprocessor directives (a multi-line
    #define's continuation lines included) left out."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    tu = ci.Index.create().parse(path, args=["-x", "c++", "-std=c++20"], options=SINGLE_FILE_PARSE)
    extent = tu.get_extent(path, (0, os.path.getsize(path)))
    tokens, directive_until = [], 0
    for t in tu.get_tokens(extent=extent):
        if t.kind == ci.TokenKind.COMMENT:
            continue
        line = t.extent.start.line
        if line <= directive_until:
            continue
        if t.spelling == "#" and (not tokens or tokens[-1].line < line):
            directive_until = line
            while directive_until <= len(lines) and lines[directive_until - 1].rstrip().endswith("\\"):
                directive_until += 1
            continue
        tokens.append(Token(t.spelling, line, t.kind == ci.TokenKind.IDENTIFIER))
    return tokens


def matching(tokens, i, opening, closing):
    """Index of the token closing the bracket opened at tokens[i]."""
    depth = 0
    for k in range(i, len(tokens)):
        if tokens[k].text == opening:
            depth += 1
        elif tokens[k].text == closing:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"line {tokens[i].line}: no closing {closing!r} for this {opening!r}")


def declaration_core(decl):
    """The declaration's tokens without its template headers, attributes
    ([[...]], __attribute__((...)), alignas(...)): what says what it is."""
    out, i = [], 0
    while i < len(decl):
        text = decl[i].text
        if text == "template" and i + 1 < len(decl) and decl[i + 1].text == "<":
            depth, i = 0, i + 1
            while i < len(decl):
                depth += {"<": 1, ">": -1, ">>": -2}.get(decl[i].text, 0)
                i += 1
                if depth <= 0:
                    break
            continue
        if text in ("__attribute__", "alignas", "__declspec") and i + 1 < len(decl) and decl[i + 1].text == "(":
            i = matching(decl, i + 1, "(", ")") + 1
            continue
        if text == "[" and i + 1 < len(decl) and decl[i + 1].text == "[":
            i = matching(decl, i, "[", "]") + 1
            continue
        out.append(decl[i])
        i += 1
    return out


def signature(core):
    """(name, index of the parameter list's `(`) of the function a
    declaration declares: `Runner::run`, `operator()`, `~Guard`; None when it
    declares none (no parameter list after a name, or an `=` outside
    brackets: a variable, its initialiser a lambda or a braced list). The
    parameter list is the first `(` after a name: `std::function<void(int)>
    make()` and `decltype(auto) f()` are `make` and `f`."""
    depth, params = 0, None
    for k, t in enumerate(core):
        if t.text == "=" and depth == 0 and not (k > 0 and core[k - 1].text == "operator"):
            return None
        if t.text == "(" and depth == 0 and params is None and k > 0 and \
                (core[k - 1].identifier or core[k - 1].text == "operator"):
            params = k
        if t.text == "operator" and params is None:
            params = k
        if t.text in ("(", "["):
            depth += 1
        elif t.text in (")", "]"):
            depth -= 1
    if params is None:
        return None
    if core[params].text == "operator":  # operator(), operator==, operator new, ...
        end = params + 1
        if end < len(core) and core[end].text == "(":
            end += 2  # operator() itself
        while end < len(core) and core[end].text != "(":
            end += 1
        symbol = [t.text for t in core[params + 1:end]]
        space = " " if symbol and symbol[0][:1].isalpha() else ""  # operator new, operator bool
        name_start, name = params, "operator" + space + "".join(symbol)
        params = end
    else:
        name_start = params - 1
        name = core[name_start].text
        if name_start > 0 and core[name_start - 1].text == "~":
            name_start -= 1
            name = "~" + name
    while name_start >= 2 and core[name_start - 1].text == "::" and core[name_start - 2].identifier:
        name_start -= 2
        name = core[name_start].text + "::" + name
    return (name, params) if params < len(core) else None


def is_member_initialiser(core, params, brace_before):
    """Whether the `{` about to open belongs to a constructor's member
    initialiser (`: a_{x}`), not to the body: there is a `:` after the
    parameter list (opened at core[params]) and the brace follows a name or
    a template's `>`."""
    tail = core[matching(core, params, "(", ")") + 1:]
    return any(t.text == ":" for t in tail) and (brace_before.identifier or brace_before.text in (">", ">>"))


def body_end(tokens, opening):
    """Index of the body's closing brace, a function-try-block's last
    handler's included."""
    close = matching(tokens, opening, "{", "}")
    while close + 1 < len(tokens) and tokens[close + 1].text == "catch":
        k = close + 1
        while tokens[k].text != "{":
            k += 1
        close = matching(tokens, k, "{", "}")
    return close


def classify(core):
    """What a `{` opens after declaration tokens `core`: 'namespace' (also
    extern "C"), 'class' (with its name), 'function' (with signature()'s
    name and parameter index) or 'other' (an enum's list, a variable's
    initialiser)."""
    texts = [t.text for t in core]
    if "namespace" in texts[:2]:
        return "namespace", None
    if texts[:1] == ["extern"] and len(texts) == 2:
        return "namespace", None
    if "enum" in texts:
        return "other", None
    found = signature(core)
    if found is not None:
        return "function", found
    for k, text in enumerate(texts):
        if text in CLASS_KEYS:  # its name, qualified as written: class DecoderRun::StepBuilder
            name = []
            for t in core[k + 1:]:
                if not (t.identifier and t.text != "final" or t.text == "::"):
                    break
                name.append(t.text)
            return "class", "".join(name)
    return "other", None


def functions_in(tokens):
    """[(first line, name, length)] of the function definitions in a file's
    tokens (file_tokens()). Walks the declaration scopes (file, namespaces,
    classes): each `{` there opens a namespace, a class, a function's body
    or something else (skipped whole); a body is skipped whole, so what it
    holds counts in it."""
    found, classes = [], []  # classes: the enclosing classes' names, None for a namespace
    start, depth, i = 0, 0, 0  # start: the declaration's first token; depth: ( and [ within it
    while i < len(tokens):
        t = tokens[i]
        if i == start and t.identifier and MACRO_NAME.match(t.text) and i + 1 < len(tokens) \
                and tokens[i + 1].text == "(":
            close = matching(tokens, i + 1, "(", ")")  # a macro's invocation (NLOHMANN_...), no `;`
            if close + 1 < len(tokens) and tokens[close + 1].line > tokens[close].line \
                    or close + 1 < len(tokens) and tokens[close + 1].text == ";":
                i = start = close + 1 + (tokens[close + 1].text == ";")
                continue
        if t.text in ("(", "["):
            depth += 1
        elif t.text in (")", "]"):
            depth -= 1
        elif t.text == "{" and depth > 0:  # a braced default argument
            i = matching(tokens, i, "{", "}") + 1
            continue
        elif t.text == ";" and depth == 0:
            start = i + 1
        elif t.text in ("public", "private", "protected") and i + 1 < len(tokens) and tokens[i + 1].text == ":":
            start = i + 2
            i += 2
            continue
        elif t.text == "}":
            if classes:
                classes.pop()
            start = i + 1
        elif t.text == "{":
            core = declaration_core(tokens[start:i])
            kind, what = classify(core)
            if kind == "function" and is_member_initialiser(core, what[1], tokens[i - 1]):
                i = matching(tokens, i, "{", "}") + 1
                continue
            if kind == "function":
                name, close = what[0], body_end(tokens, i)
                qualified = "::".join([c for c in classes if c] + [name])
                found.append((tokens[start].line, qualified, tokens[close].line - tokens[start].line + 1))
                i = start = close + 1
                continue
            if kind == "other":
                i = matching(tokens, i, "{", "}") + 1
                continue
            classes.append(what)  # a namespace (None) or a class's name: its declarations are read as the file's
            start = i + 1
        i += 1
    return found


def harness_files(harness):
    for root, _, files in os.walk(harness):
        for name in sorted(files):
            if name.endswith((".cpp", ".hpp")):
                yield os.path.join(root, name)


def long_functions(source_root, only=None):
    """Functions over LIMIT: [(path under harness/, line, name, length)];
    `only`: measure just this file (a path under harness/)."""
    harness = os.path.join(source_root, "harness")
    paths = [os.path.join(harness, only)] if only else list(harness_files(harness))
    if not paths:
        sys.exit(f"function_length: no C++ file under {harness}")
    out = []
    for path in sorted(paths):
        try:
            functions = functions_in(file_tokens(path))
        except ValueError as e:
            sys.exit(f"function_length: {path}: cannot read its functions: {e}")
        out += [(os.path.relpath(path, harness), line, name, length)
                for line, name, length in functions if length > LIMIT]
    return out


def check(source_root):
    found = long_functions(source_root)
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
    braced initialisers must not be taken for its body, the catch handler
    counts in the function-try-block (79 lines without it), an in-class
    method is named after its class, and none of the long things that are
    no function (a braced table, a lambda held by a variable, a macro with
    braces) is reported."""
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
        ("PlantedClass::method", "class PlantedClass {\n  public:\n    [[nodiscard]] int method(int x) const {\n" +
         lines(78, "x += {};") + "        return x;\n    }\n};\n"),
        (None, "const int planted_table[] = {\n" + lines(90, "{},") + "};\n"),
        (None, "const auto planted_lambda = [](int x) {\n" + lines(90, "x += {};") + "    return x;\n};\n"),
        (None, "#define PLANTED_MACRO(x) \\\n" + "".join(f"    {{ (void)(x); }} \\\n" for _ in range(90)) + "\n"),
    ]
    text, want, line = "", [], first_line
    for name, code in plants:
        if name:
            at = line + (2 if name == "PlantedClass::method" else 0)
            length = code.count("\n") - (3 if name == "PlantedClass::method" else 0)
            want.append(("files/atomic_file.cpp", at, name, length))
        text += code
        line += code.count("\n")
    return text, want


def self_test(source_root):
    """Plants functions in a copy of files/atomic_file.cpp (planted()) and
    checks the measurement names the long ones only, with their lines."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "src")
        target = os.path.join(copy, "harness", "files", "atomic_file.cpp")
        os.makedirs(os.path.dirname(target))
        shutil.copy(os.path.join(source_root, "harness", "files", "atomic_file.cpp"), target)
        with open(target) as f:
            text = f.read()
        plants, want = planted(text.count("\n") + 2)
        with open(target, "a") as f:
            f.write("\n" + plants)
        found = long_functions(copy, only="files/atomic_file.cpp")
        if found != want:
            print(f"function_length --self-test: measured {found}, expected {want}", file=sys.stderr)
            return 1
        print(f"function_length --self-test: the planted long functions are caught ({len(want)}), "
              "the 80-line one and what is no function are not")
        return 0


def main(argv):
    if len(argv) in (3, 4) and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    return check(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
