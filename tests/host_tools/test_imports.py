"""The host package's imports (issue 22): no import cycle among host_tools modules, counting that
importing `a.b.c` runs the package `a.b` first (a lazy import closes a cycle just as well), and no
host module using another module's private name (`from m import _x`, `m._x`); a private module
(`_linkopts`) serves the modules of its own package only. Read from the source with ast, the
graph and cycle search of tests/firmware/test_import_cycles.py."""

import ast
import shutil
from pathlib import Path

from host_tools.runtime import FIRMWARE, ROOT
from tests.firmware.test_import_cycles import _module_name, cycles, import_graph


def _copy(tmp_path, root=ROOT / "host_tools"):
    shutil.copytree(
        root,
        tmp_path / "host_tools",
        ignore=shutil.ignore_patterns("node_modules", "__pycache__", "*.js*"),
    )
    return tmp_path


def package_graph(root):
    """import_graph plus an edge to every package a module's import runs first (the parents of
    what it imports that do not already contain the importer)."""
    graph = import_graph(root)
    for name, deps in graph.items():
        for dep in list(deps):
            parts = dep.split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent in graph and not (name + ".").startswith(parent + "."):
                    deps.add(parent)
    return graph


def test_host_tools_have_no_import_cycle(tmp_path):
    graph = package_graph(_copy(tmp_path))
    assert "host_tools.link" in graph["host_tools.audit"]  # the parent edge is drawn
    assert cycles(graph) == []


def test_the_check_counts_the_package_an_import_runs(tmp_path):
    """audit imports link.host (running link/__init__), link/__init__ imports audit lazily: a
    cycle through the package, as in issue 22, that the plain module graph does not see."""
    (tmp_path / "host_tools" / "link").mkdir(parents=True)
    (tmp_path / "host_tools" / "__init__.py").write_text("")
    (tmp_path / "host_tools" / "audit.py").write_text("from host_tools.link.host import f\n")
    (tmp_path / "host_tools" / "link" / "__init__.py").write_text(
        "from host_tools.link.host import f\n\ndef connect():\n    from host_tools import audit\n"
    )
    (tmp_path / "host_tools" / "link" / "host.py").write_text("def f():\n    pass\n")
    assert cycles(import_graph(tmp_path)) == []
    assert cycles(package_graph(tmp_path)) == [["host_tools.audit", "host_tools.link"]]


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _package(module, path):
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def private_uses(root, modules):
    """[(importer, used name)] for each private name of another module a module under `root`
    uses. `modules`: {dotted name: is a package} of the modules whose names are checked."""
    root = Path(root)
    found = []
    for path in sorted(root.rglob("*.py")):
        me = _module_name(root, path)
        mine = _package(me, path)

        def shared(module, mine=mine):  # a private module: its own package's modules may use it
            return module.rpartition(".")[0] == mine

        tree = ast.parse(path.read_text(), str(path))
        bound = {}  # local name -> module it names
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in modules:
                        bound[a.asname or a.name] = a.name
                    top = a.name.split(".")[0]
                    if a.asname is None and top in modules:
                        bound[top] = top
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = mine.split(".")[: len(mine.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                if base not in modules:
                    continue
                for a in node.names:
                    full = base + "." + a.name
                    if full in modules:  # a module
                        bound[a.asname or a.name] = full
                        if _private(a.name) and not shared(full):
                            found.append((me, full))
                    elif _private(a.name) and base != me:
                        found.append((me, full))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                target = _dotted(node.value, bound)
                if target in modules and target != me:
                    found.append((me, target + "." + node.attr))
    return sorted(set(found))


def _dotted(node, bound):
    """The module an expression names (`mod`, `pkg.mod`), or None."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, bound)
        return base and base + "." + node.attr
    return None


def _modules(*roots):
    out = {}
    for root in roots:
        for path in Path(root).rglob("*.py"):
            out[_module_name(Path(root), path)] = path.name == "__init__.py"
    return out


def test_no_host_module_uses_another_modules_private_name(tmp_path):
    root = _copy(tmp_path)
    uses = private_uses(root, _modules(root, FIRMWARE))
    assert uses == []


def test_the_check_finds_private_names(tmp_path):
    pkg = tmp_path / "host_tools"
    (pkg / "floor").mkdir(parents=True)
    for f in ("__init__.py", "floor/__init__.py"):
        (pkg / f).write_text("")
    (pkg / "audit.py").write_text(
        "from host_tools.events import jsonable as _jsonable\ndef _helper():\n    pass\n"
    )
    (pkg / "events.py").write_text("def jsonable(x):\n    return x\n")
    (pkg / "floor" / "collector.py").write_text(
        "from host_tools.audit import _jsonable\nfrom host_tools import audit as a\n"
        "import host_tools.events\n\ndef f():\n    a._helper()\n"
        "    host_tools.events._cache.clear()\n    from host_tools.floor import _keyring\n"
        "    from . import _mqtt\n    from host_tools.floor._mqtt import _loop\n"
        "    _mqtt._loop()\n"
    )
    (pkg / "floor" / "_keyring.py").write_text("")
    (pkg / "floor" / "_mqtt.py").write_text("def _loop():\n    pass\n")
    (pkg / "floor" / "view.py").write_text(
        "from host_tools.floor import _keyring\nfrom host_tools import _keyring as k\n"
    )
    (pkg / "_keyring.py").write_text("")
    assert private_uses(tmp_path, _modules(tmp_path)) == [
        ("host_tools.floor.collector", "host_tools.audit._helper"),
        ("host_tools.floor.collector", "host_tools.audit._jsonable"),
        ("host_tools.floor.collector", "host_tools.events._cache"),
        ("host_tools.floor.collector", "host_tools.floor._mqtt._loop"),
        ("host_tools.floor.view", "host_tools._keyring"),
    ]


def test_building_the_command_line_imports_no_heavy_module():
    """Every `shoectl` process builds the parser of every command first, so a command module's
    top-level imports cost every start (the suite starts hundreds): rich, the simulator, the
    link and the audit store are imported where they are used (0.25 -> 0.17 s of CPU a start,
    2026-12-04)."""
    import subprocess
    import sys

    code = (
        "import sys, host_tools.cli as c; c.build_parser(); "
        "print(' '.join(sorted(m for m in sys.modules)))"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert p.returncode == 0, p.stderr
    loaded = set(p.stdout.split())
    heavy = {"rich", "sqlite3", "serial", "host_tools.sim", "host_tools.audit", "host_tools.link"}
    assert not heavy & loaded, sorted(heavy & loaded)
