"""No import cycle among the firmware's modules (issue 11): each import, at module level or inside
a function (a lazy import closes a cycle just as well), is read from the source with ast."""

import ast
from pathlib import Path

from host_tools.runtime import FIRMWARE


def _module_name(root, path):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root):
    """{module: {firmware modules it imports}} for every .py under root (a sys.path entry)."""
    root = Path(root)
    files = {_module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                # `from pkg import mod` imports the module pkg.mod when there is one
                targets = [
                    base + "." + a.name if base + "." + a.name in files else base
                    for a in node.names
                ]
            else:
                continue
            deps.update(t for t in targets if t in files and t != name)
        graph[name] = deps
    return graph


def cycles(graph):
    """Every strongly connected set of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_firmware_has_no_import_cycle():
    graph = import_graph(FIRMWARE)
    assert "shoe.games.engine" in graph and graph["shoe.games.engine"]  # the graph is read
    assert cycles(graph) == []


def test_the_check_finds_a_cycle(tmp_path):
    pkg = tmp_path / "shoe" / "games"
    pkg.mkdir(parents=True)
    (tmp_path / "shoe" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "packing.py").write_text("from shoe.games.cards import X\n")
    (pkg / "cards.py").write_text("X = 1\n\ndef unpack():\n    from shoe.games import packing\n")
    (pkg / "paytable.py").write_text("from . import ptcheck\n")
    (pkg / "ptcheck.py").write_text("from .paytable import Table\n")
    (pkg / "alone.py").write_text("import shoe.games.packing\n")
    assert cycles(import_graph(tmp_path)) == [
        ["shoe.games.cards", "shoe.games.packing"],
        ["shoe.games.paytable", "shoe.games.ptcheck"],
    ]


# The host package's own check (which also counts the package an import runs) is
# tests/host_tools/test_imports.py.
