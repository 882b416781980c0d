"""One live-table model (host_tools/livetable.py) and one event vocabulary (host_tools/events.py):
the model fed a real table's events (shoe.table.Table: six seats, All-Six, then a supervisor's
void) shows no card before the reveal and each one after; the gateway's retained state, the
monitor's and display's screens and the collector's tile row are all built from it; no host
product module spells an event kind as a literal where it tests one."""

import ast
import json
from pathlib import Path

from host_tools import events as E
from host_tools.livetable import LiveTable
from shoe.cards import name
from shoe.games import engine
from shoe.wire import for_wire
from tests.firmware.table.helpers import FCF, make, play, shuffled
from tests.security import leaks

ROOT = Path(__file__).resolve().parents[2]


def _events():
    t = make(FCF, "manual-shoe", engine=engine)
    order = shuffled(17)
    ev = play(t, range(1, 7), order, a6_seats=(1,), raises={str(s): 10 for s in range(1, 7)})
    t.command("open_round", {"seats": {"1": {"wagers": {"ante": 10, "odds": 10}}}}, 20)
    for c in shuffled(99)[:3]:
        t.card(0x3A7F, "R", c, 20)
    t.command("void_round", {}, 20, "supervisor")
    ev += t.pop_events()
    return [for_wire(k, b) for k, b in ev], [name(c) for c in order[:36]]


def test_face_down_until_the_reveal_then_every_card():
    events, cards = _events()
    t = LiveTable("T001")
    shown = []
    for i, (kind, body) in enumerate(events):
        t.apply(kind, body, i + 1)
        if kind == E.REVEAL:
            break
        shown.append(json.dumps([t.state(), t.hands, t.result], default=str))
    assert leaks.search("\n".join(shown), cards) == {}
    assert t.dealt == 36 and all(c is not None for h in t.hands.values() for c in h)
    assert sorted(c for h in t.hands.values() for c in h) == sorted(cards)


def test_state_and_outcomes():
    events, _ = _events()
    t = LiveTable("T001")
    changed = [t.apply(k, b, i + 1) for i, (k, b) in enumerate(events)]
    kinds = [k for k, _ in events]
    # what a retained state shows changes with the phase, round, outcome, irregularities only
    assert [k for k, c in zip(kinds, changed) if c] == [
        k
        for k in kinds
        if k
        in (
            E.PHASE,
            E.ROUND_OPEN,
            E.ROUND_RESULT,
            E.ROUND_VOID,
            E.IRREGULARITY,
            E.IRREGULARITY_CLEARED,
        )
    ]
    st = t.state()
    assert list(st) == ["shoe", "phase", "round", "last_result", "irregularities", "head"]
    assert st["head"] == len(events) and st["last_result"] == {
        "round": 2,
        "outcome": "void",
        "reason": "void_supervisor",
    }
    assert t.last_round == 2 and t.cards_read == 39
    # the latched irregularity of the void, counted once
    assert st["irregularities"] == 1 and [b["reason"] for b in t.latched.values()] == [
        "void_supervisor"
    ]
    t.apply(E.IRREGULARITY_CLEARED, {"id": list(t.latched)[0]})
    t.apply(E.IRREGULARITY_CLEARED, {"id": 999})  # never raised: never below 0
    assert t.state()["irregularities"] == 0 and not t.latched
    t.config = {"game": FCF}
    assert t.state()["config"] == {"game": FCF}


def test_a_settled_round_as_the_gateway_publishes_it():
    events, _ = _events()
    t = LiveTable("T001")
    for k, b in events:
        t.apply(k, b)
        if k == E.ROUND_RESULT:
            break
    lr = t.state()["last_result"]
    assert (
        lr["round"] == 1
        and lr["outcome"] == "result"
        and set(lr["seats"]) == {"1", "2", "3", "4", "5", "6"}
    )
    assert t.outcome_of_round() is t.result and t.result["dealer"]["category"]
    t.apply(E.ROUND_OPEN, {"round": 2, "seats": {"1": {}}, "deck": "3A7F"})
    assert t.outcome_of_round() is None and t.hands == {"1": [], "dealer": []}
    # round 1's reveal again (a late copy): the open round's hands are not its
    t.apply(E.REVEAL, next(b for k, b in events if k == E.REVEAL))
    assert t.hands == {"1": [], "dealer": []}


def test_bad_bodies_are_taken_without_a_crash():
    t = LiveTable()
    for kind, body in [
        (E.PHASE, None),
        (E.ROUND_RESULT, "x"),
        (E.CARD, {"round": "x"}),
        (E.ROUND_OPEN, {"seats": [1, 2]}),
        (E.REVEAL, {"round": 1}),
        (E.ROUND_RESULT, {"round": 1, "seats": "x"}),
        ("made_up", {}),
    ]:
        t.apply(kind, body, 3)
    assert t.head == 3 and t.last_result == {"round": 1, "outcome": "result", "seats": {}}


# Host modules that test a kind literal that is not an event kind, and why
LITERALS_LEFT = {
    # not events: the tag reader's own kind ("card", firmware/shoe/drivers)
    "host_tools/commands/tags.py": "a reader's kind",
    "host_tools/tagwriter.py": "a reader's kind",
    "host_tools/sim/world.py": "a session script's fault kind (interfaces.md section 5)",
}


def test_no_event_kind_literal_where_a_kind_is_tested():
    kinds = {v for k, v in vars(E).items() if k.isupper() and isinstance(v, str)}
    bad = []
    for p in sorted((ROOT / "host_tools").rglob("*.py")):
        rel = str(p.relative_to(ROOT))
        if rel == "host_tools/events.py" or rel in LITERALS_LEFT:
            continue
        for node in ast.walk(ast.parse(p.read_text(), rel)):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left] + node.comparators
            names_kind = any(
                isinstance(s, ast.Name)
                and s.id == "kind"
                or isinstance(s, ast.Subscript)
                and isinstance(s.slice, ast.Constant)
                and s.slice.value == "kind"
                for s in sides
            )
            consts = [
                c.value
                for s in sides
                for c in ast.walk(s)
                if isinstance(c, ast.Constant) and c.value in kinds
            ]
            if names_kind and consts:
                bad.append("%s:%d %s" % (rel, node.lineno, consts))
    assert not bad, bad
