"""The table under MicroPython (unix port, device-sized heap): whole scripted sessions give the
same events and the same final state as CPython, and the heap stays flat."""

import json
import os

import pytest

from shoe.table import CommandError, Table
from tests.firmware.table import fake_engine
from tests.firmware.table.helpers import FCF, HCF, jsonable, secrets
from tests.firmware.table.steps import apply as apply_step
from tests.firmware.table.test_state import script
from tests.mpy import json_lines, run_mpy

HERE = os.path.dirname(os.path.abspath(__file__))


def cpython(steps, engine):
    t = Table(engine=engine, secrets=secrets)
    out = []
    for i, st in enumerate(steps, 1):
        try:
            apply_step(t, json.loads(json.dumps(st)), i)
        except CommandError as e:
            out.append({"err": e.reason})
        out += [{"ev": [k, jsonable(b)]} for k, b in t.pop_events()]
    return out, t.state()


def on_device(steps, which, heap):
    out = run_mpy(
        os.path.join(HERE, "mpy_table.py"),
        heap=heap,
        extra_path=(HERE,),
        stdin=json.dumps({"steps": steps}),
        args=(which,),
    )
    lines = json_lines(out)
    mem = [x["mem"] for x in lines if "mem" in x][0]
    state = [x["state"] for x in lines if "state" in x][0]
    return [x for x in lines if "ev" in x or "err" in x], state, mem


@pytest.mark.parametrize("game,proc,two", [(FCF, "automated-shoe", True), (HCF, "hand", False)])
def test_scripted_session_matches_cpython_fake_engine(game, proc, two):
    steps = [list(s) for s in script(game, proc, two)]
    # 168k: the harness holds the whole ~9 KB script as text and JSON besides the table, the
    # roles allowlist, the round secret and the tag counters (shoe.deck.tags), compiled from source
    dev, dstate, mem = on_device(steps, "fake", "168k")
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
    # 216k: the engine, the table, the roles and the tag counters compiled from source on this
    # heap (a board runs them frozen, outside the heap)
    dev, dstate, mem = on_device(steps, "real", "216k")
    ref, rstate = cpython(json.loads(json.dumps(steps)), engine)
    assert dev == json.loads(json.dumps(ref))
    assert dstate == json.loads(json.dumps(rstate))
    assert sum(1 for e in dev if "ev" in e and e["ev"][0] == "round_result") == 3


@pytest.mark.parametrize("which,heap", [("fake", "128k"), ("real", "192k")])
def test_many_rounds_heap_flat_and_small(which, heap):
    from host_tools.build import compile_shipped

    # the shipped .mpy, as a board imports them: compiling the engine from source at 192 KB
    # ran out or not depending on the checkout's path length (heap fragmentation)
    out = run_mpy(
        os.path.join(HERE, "mpy_leak.py"),
        heap=heap,
        extra_path=(HERE, compile_shipped()),
        args=("150", which),
    )
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


def test_a_power_cut_between_a_card_and_the_reveal_keeps_the_secret():
    """The round's secret is drawn with os.urandom at open_round and kept in state(): a shoe
    that loses power mid-deal resumes from its journal's state, and its reveal after the boot
    opens the commitments it made before the cut (checked by the host's own check,
    host_tools/reveal.py). Two MicroPython processes, secrets from os.urandom: the one that
    dies and the one that boots."""
    from host_tools.reveal import check_reveal
    from tests.firmware.table.helpers import shuffled

    s = script(FCF, "manual-shoe", False, faults=False)
    k = next(i for i, st in enumerate(s) if st[1] == "open_round")
    rnd = s[k : k + 1 + 21 + 2]  # open, 21 cards, the two decisions
    cut = k + 1 + 12  # the power goes after the 12th card

    def run(state, steps):
        out = json_lines(
            run_mpy(
                os.path.join(HERE, "mpy_table.py"),
                heap="144k",
                extra_path=(HERE,),
                args=("fake",),
                stdin=json.dumps({"state": state, "steps": steps, "urandom": True}),
            )
        )
        return [x["ev"] for x in out if "ev" in x], [x["state"] for x in out if "state" in x][0]

    ev1, state = run(None, [list(x) for x in s[:cut]])
    ev2, _ = run(json.loads(json.dumps(state)), [list(x) for x in s[cut : k + len(rnd)]])
    cards1 = [b for kd, b in ev1 if kd == "card"]
    cards2 = [b for kd, b in ev2 if kd == "card"]
    assert len(cards1) == 12 and len(cards2) == 9 and "reveal" not in [kd for kd, _ in ev1]
    [rev] = [b for kd, b in ev2 if kd == "reveal"]
    assert rev["secret"] == state["round"]["secret"]  # journalled, never sent before
    assert check_reveal(rev, cards1 + cards2) == []
    assert rev["cards"] == [name_of(c) for c in shuffled(50)[:21]]
    # a shoe that drew a new secret at the boot would be caught: the early commitments differ
    other = dict(state, round=dict(state["round"], secret="00" * 16))
    ev3, _ = run(other, [list(x) for x in s[cut : k + len(rnd)]])
    [rev3] = [b for kd, b in ev3 if kd == "reveal"]
    bad = check_reveal(rev3, cards1 + [b for kd, b in ev3 if kd == "card"])
    assert len(bad) == 12, bad


def name_of(c):
    from shoe.cards import name

    return name(c)
