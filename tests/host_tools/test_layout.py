"""The layout is a rule: what ships never imports the tests, and the product (link, audit, deploy,
diagnostics, floor) imports the stand-ins of host_tools/sim only where it starts one on purpose."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = ROOT / "host_tools"

# Product modules allowed to import host_tools.sim, and why: each starts a stand-in on request.
STARTS_A_STAND_IN = {
    "host_tools/commands/demo.py": "shoectl demo plays on the virtual board",
    "host_tools/commands/sim.py": "shoectl sim starts the virtual board",
    "host_tools/commands/emu.py": "shoectl emu starts the emulated Pico",
    "host_tools/commands/session.py": "shoectl session starts a virtual table without --port",
    "host_tools/commands/world.py": "shoectl world is the world simulator's front",
    "host_tools/commands/floor.py": "shoectl floor --demo starts a simulated floor",
    "host_tools/commands/floor_broker.py": "shoectl floor-broker can start the embedded broker",
    "host_tools/tagwriter.py": "tags --simulated writes to a simulated NTAG 424 DNA",
    "host_tools/transcript.py": "a transcript is replayed through a shoe end in memory",
}


def _imports(path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from ("%s.%s" % (node.module, a.name) for a in node.names)


def _modules():
    return sorted(p for p in HOST.rglob("*.py") if "node_modules" not in p.parts)


def test_nothing_that_ships_imports_the_tests():
    bad = [
        "%s imports %s" % (p.relative_to(ROOT), m)
        for p in _modules()
        for m in _imports(p)
        if m == "tests" or m.startswith("tests.")
    ]
    assert not bad, bad
    # nor finds its way to them by path (the old runtime.FAKES pointed at tests/fakes)
    by_path = [
        str(p.relative_to(ROOT))
        for p in _modules()
        if '"tests" / ' in p.read_text() or "'tests' / " in p.read_text()
    ]
    assert not by_path, by_path


def test_the_product_imports_the_stand_ins_only_where_it_starts_one():
    bad = []
    for p in _modules():
        rel = str(p.relative_to(ROOT))
        if rel.startswith("host_tools/sim/") or rel in STARTS_A_STAND_IN:
            continue
        bad += [
            "%s imports %s" % (rel, m)
            for m in _imports(p)
            if m == "host_tools.sim" or m.startswith("host_tools.sim.")
        ]
    assert not bad, bad


def test_the_floor_package_holds_no_stand_in():
    names = {p.stem for p in (HOST / "floor").glob("*.py")}
    assert not names & {
        "simshoe",
        "harness",
        "procfloor",
        "brokers",
        "mosquitto",
        "aedes",
        "amqttbroker",
        "embedded_pg",
    }
    for m in ("pg", "mqtt"):
        text = (HOST / "floor" / (m + ".py")).read_text()
        assert "class Embedded" not in text, "%s.py holds an embedded engine" % m
