"""Read the clause identifiers out of the sources, without importing or running anything.

Code: a comment `# clause: ID[, ID ...]` (mpy-cross drops comments: it costs the device
nothing) on the line of, inside, or directly above the function that implements the clause.
The location is the file, the comment's line and the function it belongs to (the innermost
function or class around it, else the one that starts right after it, else the module).

Tests: `@pytest.mark.clause("ID", ...)` on a test function or class, or a module's
`pytestmark = pytest.mark.clause(...)` (or a list holding one). Identifiers must be string
literals: the matrix is read from the source, and a computed identifier could not be checked.

    tags, problems = code_tags(root)        # {id: [Location]}, ["file:line: ..."]
    marks, problems = proofs(root)      # {id: [Proof]}, [...]
"""

import ast
import io
import os
import re
import tokenize
from pathlib import Path

CODE_DIRS = ("firmware", "board", "host_tools")
SKIP_CODE = ("host_tools/cert/",)  # this package describes tags, it implements no clause
TEST_DIRS = ("tests",)
_TAG = re.compile(r"#\s*clause:\s*(.*)$")


class Location:
    __slots__ = ("path", "line", "function")

    def __init__(self, path, line, function):
        self.path, self.line, self.function = path, line, function

    def __repr__(self):
        return "%s:%d (%s)" % (self.path, self.line, self.function)

    def as_dict(self):
        return {"path": self.path, "line": self.line, "function": self.function}


class Proof:
    __slots__ = ("path", "name", "line")

    def __init__(self, path, name, line):
        self.path, self.name, self.line = path, name, line

    @property
    def nodeid(self):
        return "%s::%s" % (self.path, self.name) if self.name else self.path

    def __repr__(self):
        return self.nodeid

    def as_dict(self):
        return {"path": self.path, "name": self.name, "line": self.line, "nodeid": self.nodeid}


def _files(root, dirs, skip=()):
    root = Path(root)
    for d in dirs:
        base = root / d
        found = []
        for top, subdirs, names in os.walk(base):
            subdirs[:] = [
                x
                for x in subdirs
                if x not in ("node_modules", "__pycache__") and not x.startswith(".")
            ]
            found += [Path(top) / n for n in names if n.endswith(".py")]
        for p in sorted(found):
            rel = p.relative_to(root).as_posix()
            if not any(rel.startswith(s) for s in skip):
                yield rel, p


def split_ids(text):
    """'684a.7(c), rules:1.3-offered' -> ['684a.7(c)', 'rules:1.3-offered']"""
    return [x.strip() for x in text.split(",") if x.strip()]


def _scopes(tree):
    """[(first line, last line, qualified name, is_def)] of every function and class."""
    out = []

    def walk(node, prefix):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + ch.name
                first = min([ch.lineno] + [d.lineno for d in ch.decorator_list])
                out.append((first, ch.end_lineno, name, ch.lineno))
                walk(ch, name + ".")
            else:
                walk(ch, prefix)

    walk(tree, "")
    return out


def _owner(scopes, line, code_lines):
    inner = None
    for first, last, name, _ in scopes:
        if first <= line <= last and (inner is None or first >= inner[0]):
            inner = (first, name)
    if inner is not None:
        return inner[1]
    if line in code_lines:  # a comment at the end of a line of module code: that statement
        return "<module>"
    nxt = next((n for n in sorted(code_lines) if n > line), None)
    for first, _last, name, _ in scopes:
        if first == nxt:
            return name
    return "<module>"


def code_tags(root):
    """({clause id: [Location]}, [problem]) of every `# clause:` comment under CODE_DIRS."""
    tags, problems = {}, []
    for rel, path in _files(root, CODE_DIRS, SKIP_CODE):
        src = path.read_text(encoding="utf-8")
        if "clause:" not in src:
            continue
        found = []
        code_lines = set()
        try:
            for tok in tokenize.generate_tokens(io.StringIO(src).readline):
                if tok.type == tokenize.COMMENT:
                    m = _TAG.match(tok.string)
                    if m:
                        found.append((tok.start[0], m.group(1)))
                elif tok.type not in (
                    tokenize.NL,
                    tokenize.NEWLINE,
                    tokenize.INDENT,
                    tokenize.DEDENT,
                    tokenize.ENDMARKER,
                ):
                    code_lines.add(tok.start[0])
            tree = ast.parse(src)
        except (SyntaxError, tokenize.TokenError) as e:
            problems.append("%s: cannot parse (%s)" % (rel, e))
            continue
        scopes = _scopes(tree)
        for line, text in found:
            ids = split_ids(text)
            if not ids:
                problems.append("%s:%d: a clause tag without an identifier" % (rel, line))
            for cid in ids:
                tags.setdefault(cid, []).append(
                    Location(rel, line, _owner(scopes, line, code_lines))
                )
    return tags, problems


def _clause_call(node):
    """The ast.Call of `pytest.mark.clause(...)` / `mark.clause(...)`, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "clause"
    ):
        v = node.func.value
        if (isinstance(v, ast.Attribute) and v.attr == "mark") or (
            isinstance(v, ast.Name) and v.id == "mark"
        ):
            return node
    return None


def _ids_of_call(call, where, problems):
    ids = []
    if call.keywords:
        problems.append("%s: clause marker takes identifiers only, no keywords" % where)
    if not call.args:
        problems.append("%s: clause marker without an identifier" % where)
    for a in call.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.strip():
            ids.append(a.value.strip())
        else:
            problems.append("%s: clause identifiers must be string literals" % where)
    return ids


def proofs(root):
    """({clause id: [Proof]}, [problem]) of every clause marker under TEST_DIRS."""
    marks, problems = {}, []
    for rel, path in _files(root, TEST_DIRS):
        src = path.read_text(encoding="utf-8")
        if ".clause(" not in src:
            continue
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            problems.append("%s: cannot parse (%s)" % (rel, e))
            continue

        seen = set()

        def add(call, name, line):  # called in this iteration only
            seen.add(id(call))  # noqa: B023
            for cid in _ids_of_call(call, "%s:%d" % (rel, call.lineno), problems):  # noqa: B023
                marks.setdefault(cid, []).append(Proof(rel, name, line))  # noqa: B023

        def visit(body, prefix):
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = prefix + node.name
                    for d in node.decorator_list:
                        call = _clause_call(d)
                        if call is not None:
                            add(call, name, node.lineno)
                    if isinstance(node, ast.ClassDef):
                        visit(node.body, name + "::")
                elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
                ):
                    vals = (
                        node.value.elts
                        if isinstance(node.value, (ast.List, ast.Tuple))
                        else [node.value]
                    )
                    for v in vals:
                        call = _clause_call(v)
                        if call is not None:
                            add(call, prefix.rstrip(":"), node.lineno)

        visit(tree.body, "")
        # a clause marker anywhere else (a nested function, a parameter set) is not read: say
        # so rather than let it look like proof
        for node in ast.walk(tree):
            if _clause_call(node) is not None and id(node) not in seen:
                problems.append(
                    "%s:%d: a clause marker must decorate a test function or class "
                    "(or be the module's pytestmark)" % (rel, node.lineno)
                )
    return marks, problems
