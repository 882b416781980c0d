"""The table under MicroPython (unix port, device-sized heap): whole scripted sessions give the
same events and the same final state as CPython, and the heap stays flat."""
import json
import os

import pytest

from shoe.table import CommandError, Table
from tests.firmware.table import fake_engine
from tests.firmware.table.steps import apply as apply_step
from tests.firmware.table.test_state import script
from tests.firmware.table.helpers import FCF, HCF
from tests.mpy import json_lines, run_mpy

HERE = os.path.dirname(os.path.abspath(__file__))


def cpython(steps, engine):
    t = Table(engine=engine)
    out = []
    for i, st in enumerate(steps, 1):
        try:
            apply_step(t, json.loads(json.dumps(st)), i)
        except CommandError as e:
            out.append({"err": e.reason})
        out += [{"ev": [k, b]} for k, b in t.pop_events()]
    return out, t.state()


def on_device(steps, which, heap):
    out = run_mpy(os.path.join(HERE, "mpy_table.py"), heap=heap, extra_path=(HERE,),
                  stdin=json.dumps({"steps": steps}), args=(which,))
    lines = json_lines(out)
    mem = [x["mem"] for x in lines if "mem" in x][0]
    state = [x["state"] for x in lines if "state" in x][0]
    return [x for x in lines if "ev" in x or "err" in x], state, mem


@pytest.mark.parametrize("game,proc,two", [(FCF, "automated-shoe", True), (HCF, "hand", False)])
def test_scripted_session_matches_cpython_fake_engine(game, proc, two):
    steps = [list(s) for s in script(game, proc, two)]
    # 152k: the harness holds the whole ~8 KB script as text and JSON besides the table, whose
    # code compiled from source is ~62 KB (with shoe.roles and the tag counters, shoe.deck.tags)
    dev, dstate, mem = on_device(steps, "fake", "152k")
    ref, rstate = cpython(json.loads(json.dumps(steps)), fake_engine)
    assert dev == json.loads(json.dumps(ref))
    assert dstate == json.loads(json.dumps(rstate))
    kinds = [e["ev"][0] for e in dev if "ev" in e]
    assert "round_result" in kinds and "round_void" in kinds
    # the table's own data (what a board with frozen code needs) stays small
    assert mem["data_after"] < 6000, mem
    assert mem["live_max"] < 8000, mem


def test_scripted_session_matches_cpython_real_engine():
    from shoe.games import engine
    steps = [list(s) for s in script(FCF, "manual-shoe", False)]
    dev, dstate, mem = on_device(steps, "real", "200k")   # ~83 KB of code from source
    ref, rstate = cpython(json.loads(json.dumps(steps)), engine)
    assert dev == json.loads(json.dumps(ref))
    assert dstate == json.loads(json.dumps(rstate))
    assert sum(1 for e in dev if "ev" in e and e["ev"][0] == "round_result") == 3


@pytest.mark.parametrize("which,heap", [("fake", "128k"), ("real", "192k")])
def test_many_rounds_heap_flat_and_small(which, heap):
    out = run_mpy(os.path.join(HERE, "mpy_leak.py"), heap=heap, extra_path=(HERE,),
                  args=("150", which))
    d = json_lines(out)[0]
    used = d["used"]
    assert d["outcomes"] == 150
    if which == "fake":  # the table's live data (+ the 1.2 KB list of figures): a few KB
        assert max(used) < 8000, used
    tail = used[30:]
    assert max(tail) - min(tail) <= 256, tail  # flat: no per-round garbage kept
    assert d["state_bytes"] < 2000


def test_ledger_and_tracker_hot_paths_do_not_allocate():
    out = run_mpy(os.path.join(HERE, "mpy_hot.py"), heap="64k")
    assert json_lines(out) == [{"dealt": 35, "stub": 17, "ok": True}]
