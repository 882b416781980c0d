"""No private names across modules in the product: an object's `_name` is read only by its own
class (`self._x`, `cls._x`), and no module imports another's `_name`. What is shared gets a
public name (a method that says what it does)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What is left, and why: another change owns the file, or the name is the module's own
LEFT = {
    "host_tools/cli.py:args._run": "its own parser's set_defaults(_run=...)",
    "host_tools/__init__.py:host_tools._micropython": "the package's own stand-in modules",
    "host_tools/__init__.py:host_tools._cryptolib": "the package's own stand-in modules",
}


def private_uses(path, rel):
    """["rel:expr"] for every `obj._name` whose obj is not self/cls/super() and every
    `from m import _name` in the file at `path`."""
    out = []
    for n in ast.walk(ast.parse(path.read_text(), rel)):
        if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__"):
            v = n.value
            if isinstance(v, ast.Name) and v.id in ("self", "cls"):
                continue
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
                continue
            out.append("%s:%s" % (rel, ast.unparse(n)))
        elif isinstance(n, ast.ImportFrom):
            out += [
                "%s:%s.%s" % (rel, n.module, a.name)
                for a in n.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
    return out


def test_no_private_name_is_used_across_modules():
    bad = []
    for p in sorted((ROOT / "host_tools").rglob("*.py")):
        rel = str(p.relative_to(ROOT))
        if "/sim/" in rel:  # the stand-ins (tests' doubles) are not the product
            continue
        bad += [u for u in private_uses(p, rel) if u not in LEFT]
    assert not bad, bad


def test_the_check_sees_a_private_name_through_an_object(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "from x import _y\n\ndef f(view, self):\n    view._check()\n"
        "    self.client._sock_close()\n    self._ok()\n"
    )
    assert private_uses(src, "m.py") == [
        "m.py:x._y",
        "m.py:view._check",
        "m.py:self.client._sock_close",
    ]
