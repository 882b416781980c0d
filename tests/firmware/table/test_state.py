"""state() / from_state(): a JSON snapshot taken after any step resumes exactly (same events,
same final state) — what the journal relies on after a power cut."""

import json

import pytest

from shoe.table import CommandError, Table
from tests.firmware.table import fake_engine
from tests.firmware.table.helpers import (
    FCF,
    HCF,
    SER,
    SER2,
    jsonable,
    seats_body,
    secrets,
    shuffled,
)
from tests.firmware.table.steps import apply as apply_step


def script(game, proc, two_deck=False, faults=True):
    """A list of steps: ("cmd", kind, body) | ("card", serial, back, id) | ("reject", r) |
    ("tick",)."""
    s = [
        (
            "cmd",
            "configure",
            {
                "game": game,
                "procedure": proc,
                "two_deck": two_deck,
                "jam_timeout_s": 5,
                "represent_max": 1,
            },
        )
    ]
    decks = [(SER, "R")] + ([(SER2, "B")] if two_deck else [])
    for serial, back in decks:
        s.append(("cmd", "load_deck", {"serial": serial, "back": back}))
        s += [("card", serial, back, c) for c in shuffled(serial)] + [("card", serial, back, 52)]
    seats = (1, 4, 6)
    n = (7 if game == HCF else 5) * 4 + (
        0 if game == HCF else (5 if proc == "automated-shoe" else 1)
    )
    for r in range(3):
        serial, back = decks[r % len(decks)]
        order = shuffled(50 + r)
        s.append(("cmd", "open_round", seats_body(game, seats, a6_seats=(4,))))
        for i in range(n):
            if faults and r == 1 and i == 3:
                s.append(("reject", "no_read"))
                s.append(("tick",))
            s.append(("card", serial, back, order[i]))
        s.append(("cmd", "decisions", {"1": 0, "4": 10}))
        s.append(("cmd", "decisions", {"6": 10}))
        s += [("card", serial, back, c) for c in order[n:]] + [("card", serial, back, 52)]
    if faults:
        serial, back = decks[0]
        s.append(("cmd", "open_round", seats_body(game, seats)))
        s.append(("card", 0x4321, back, 5))  # foreign: void, quarantine
        s.append(("cmd", "ack", {"all": True}))
    return s


def step(t, st, now):
    try:
        apply_step(t, json.loads(json.dumps(st)), now)
    except CommandError as e:
        t.out.append(("error", e.reason))
    return t.pop_events()


def run(t, steps, start=0):
    ev = []
    for i, st in enumerate(steps):
        ev += step(t, st, start + i)
    return ev


CASES = [
    (FCF, "automated-shoe", False),
    (FCF, "manual-shoe", True),
    (HCF, "hand", False),
    (HCF, "automated-shoe", True),
]


@pytest.mark.parametrize("game,proc,two", CASES)
def test_snapshot_at_every_step_resumes_exactly(game, proc, two):
    steps = script(game, proc, two)
    ref = Table(engine=fake_engine, secrets=secrets)
    ref_events = run(ref, steps)
    assert any(k == "round_result" for k, _ in ref_events)
    assert any(k == "round_void" for k, _ in ref_events)
    final = json.dumps(ref.state(), sort_keys=True)
    t = Table(engine=fake_engine, secrets=secrets)
    prefix = []
    for k in range(len(steps)):
        snapshot = json.loads(json.dumps(t.state()))  # through JSON (the journal: the codec)
        r = Table.from_state(snapshot, engine=fake_engine, secrets=secrets)
        assert json.dumps(r.state(), sort_keys=True) == json.dumps(snapshot, sort_keys=True)
        if k % 7 == 0 or k > len(steps) - 40:
            rest = run(r, steps[k:], k)
            assert prefix + rest == ref_events
            assert json.dumps(r.state(), sort_keys=True) == final
        prefix += step(t, steps[k], k)
    assert prefix == ref_events


def test_pending_events_survive_a_snapshot():
    t = Table(engine=fake_engine)
    t.command("configure", {"game": FCF, "procedure": "hand"}, 0, "supervisor")
    snap = json.loads(json.dumps(t.state()))
    r = Table.from_state(snap, engine=fake_engine)
    assert r.pop_events() == t.pop_events() != []


def test_from_state_refuses_garbage():
    good = Table(engine=fake_engine).state()
    broken = dict(good)
    del broken["ledger"]
    wrong = dict(good, ledger={"two": False})
    for bad in (None, {}, {"v": 2}, [1], {"v": 1}, broken, wrong):
        with pytest.raises(ValueError):
            Table.from_state(bad)


def test_state_is_small():
    steps = script(FCF, "automated-shoe", True, faults=False)
    t = Table(engine=fake_engine)
    sizes = []
    for i, st in enumerate(steps):
        step(t, st, i)
        sizes.append(len(json.dumps(t.state())))
    assert max(sizes) < 2000, max(sizes)


def test_config_in_the_constructor():
    t = Table({"game": FCF, "procedure": "hand"}, engine=fake_engine)
    assert t.current_phase() == "load_deck"
    with pytest.raises(CommandError):
        Table({"game": "bingo"}, engine=fake_engine)


@pytest.mark.clause("rules:3-latched")
def test_every_latched_irregularity_survives_the_snapshot_not_only_those_status_shows():
    """status shows only the oldest latched irregularities that fit in one frame; the journal's
    snapshot keeps all of them (16 with the longest details)."""
    from tests.firmware.table.helpers import make

    t = make()
    for i in range(16):
        t._latch("settle_error", ("detail %02d " % i).ljust(80, "x"), None)
    t.pop_events()
    back = Table.from_state(json.loads(json.dumps(t.state())))
    assert back.latched == t.latched and len(back.latched) == 16
    assert len(t.command("status", {}, 1)["latched"]) < 16


def _replayed(ops):
    """Delta ops as a boot reads them back: through the journal's codec."""
    from shoe.link import codec

    return codec.decode(codec.encode(ops))


def follow_deltas(t, steps, start=0):
    """Keep a copy of {"table": t.state()} up to date as the app's journal does: the table's own
    delta where take_delta() gives one, else a diff of the whole state. After every step the
    copy must equal the state. Returns how many steps the table's delta covered."""
    from shoe.journal import delta

    copy = delta.copy({"table": t.state()})
    t.take_delta()
    fast = 0
    for i, st in enumerate(steps):
        step(t, st, start + i)
        ops = t.take_delta()
        want = {"table": t.state()}
        if ops is None:
            copy = delta.apply(copy, _replayed(delta.diff(copy, want)))
        else:
            fast += 1
            copy = delta.apply(copy, _replayed(ops))
        assert json.dumps(copy, sort_keys=True) == json.dumps(want, sort_keys=True), (i, st, ops)
    return fast


@pytest.mark.parametrize("game,proc,two", CASES)
def test_the_tables_own_delta_equals_the_change_of_its_state(game, proc, two):
    """A dealt card's state change is written from the table's own delta ops, not from a diff
    of the whole snapshot (issue 10: the snapshot + diff was ~10 ms of the RP2040's time a
    card): after every step, the journal's copy kept by those ops equals state()."""
    steps = script(game, proc, two)
    t = Table(engine=fake_engine)
    fast = follow_deltas(t, steps)
    dealt = sum(1 for k in range(len(steps)) if steps[k][0] == "card")
    assert fast >= 3 * (7 * 4 if game == HCF else 20), (fast, dealt)  # every round card


def test_a_delta_that_failed_to_be_journalled_is_not_lost():
    """If the journal write of a delta fails (outbox full), the next take_delta() is None: the
    caller diffs the whole state, so the change is not dropped."""
    t = Table(engine=fake_engine)
    steps = script(FCF, "manual-shoe", False, faults=False)
    k = next(i for i, s in enumerate(steps) if s[1] == "open_round") + 1
    run(t, steps[:k])
    t.take_delta()
    step(t, steps[k], k)
    assert t.take_delta()  # a dealt card: its ops
    step(t, steps[k + 1], k + 1)
    t.take_delta()
    t.delta_failed()  # ... which the journal could not write
    assert t.take_delta() is None


def test_a_snapshot_journalled_before_the_table_became_a_package_restores_exactly():
    """v1_state_mid_deal.json is what shoe/table.py (before issue 11 made it a package) wrote
    mid-deal, after three cards and an unreadable read: an old journal's state. It restores to
    the same state(), and the next card's own delta keeps the journal's copy exact."""
    from pathlib import Path

    from shoe.journal import delta

    old = json.loads((Path(__file__).parent / "v1_state_mid_deal.json").read_text())
    t = Table.from_state(old, fake_engine)
    # what a round had then, and the secret it gets for its cards still to come (secret.py)
    now = jsonable(t.state())
    assert len(now["round"].pop("secret")) == 32 and now["round"].pop("revealed") is False
    assert now == old and t.rnd.tries == 1 and t.tracker.n == 3
    assert [k for k, b in t.pop_events()] == [
        "round_open",
        "phase",
        "card",
        "card",
        "card",
        "unreadable",
    ]  # pending: sent after the boot
    copy = delta.copy({"table": t.state()})
    t.take_delta()
    t.card(SER, "R", shuffled(SER)[51 - 3], 7)
    ev = t.pop_events()
    assert [k for k, b in ev] == ["card"]  # the app journals it with the delta
    assert "card" not in ev[0][1] and len(ev[0][1]["commit"]) == 16
    ops = t.take_delta()
    assert ops, "a dealt card gives its own delta"
    copy = delta.apply(copy, _replayed(ops))
    assert json.dumps(copy, sort_keys=True) == json.dumps({"table": t.state()}, sort_keys=True)
    assert t.rnd.tries == 0 and t.tracker.n == 4
