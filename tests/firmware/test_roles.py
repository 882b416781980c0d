"""Roles by allowlist (issue 18), on the Table and in the docs; generated from the roles table
(shoe.roles) and the configuration schema (tests/firmware/roles_cases.py), so a command kind or
a field added later is checked at once: the supervisor's until a line of shoe.roles grants it.
The same cases through the real link on the virtual board: tests/security/test_roles.py.

For every field: the table key's change (explicit, or implicit: the field left out, the game
switched) is refused with needs_supervisor and changes nothing, the supervisor's is taken.
For every command kind, in every phase: the table key is refused exactly where its rule says
the supervisor is needed. The docs' table (docs/roles.md) is the module's."""

import json
import os
import re

import pytest

from shoe import roles
from shoe.dealing import setup
from shoe.table import CommandError, Table
from tests.firmware import roles_cases as C
from tests.firmware.table import fake_engine
from tests.firmware.table.helpers import SER, run_pass, seats_body, shuffled
from tests.firmware.table.test_micropython import cpython
from tests.mpy import json_lines, run_mpy

T, S = roles.TABLE, roles.SUPERVISOR
DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "roles.md")
HERE = os.path.join(os.path.dirname(__file__), "table")


def snap(t):
    return json.dumps([t.state(), t.out], sort_keys=True, default=lambda b: bytes(b).hex())


def refused(t, kind, body, role=T, now=5):
    """Refused needs_supervisor, nothing changed; -> the message."""
    before = snap(t)
    with pytest.raises(CommandError) as e:
        t.command(kind, body, now, role)
    assert e.value.reason == "needs_supervisor", (kind, str(e.value))
    assert snap(t) == before, kind
    return str(e.value)


def configured(body=None, engine=None):
    t = Table(engine=engine)
    t.command("configure", dict(body or C.BASE), 0, S)
    t.pop_events()
    return t


def other_value(field, body):
    """A value of `field` the supervisor may set on a table configured with `body` that changes
    the normalised configuration (tried on a fresh table); the test fails if there is none."""
    current = configured(body).cfg.get(field)
    for v in C.other_values(field, current):
        t = configured(body)
        try:
            t.command("configure", dict(body, **{field: v}), 0, S)
        except CommandError:
            continue
        if field in roles.changed(configured(body).cfg, t.cfg):
            return v
    raise AssertionError(
        "no other valid value for configuration field %r: add one to "
        "tests/firmware/roles_cases.py OTHER" % field
    )


# ---- the configuration -------------------------------------------------------------------


@pytest.mark.parametrize("field", C.settable_fields())
def test_every_field_change_needs_its_role_explicit_and_implicit(field):
    base = dict(C.BASE)
    v = other_value(field, base)
    changed = dict(base, **{field: v})
    t = configured(base)
    if roles.field_role(field) == T:  # granted: the table changes it (none is today)
        t.command("configure", changed, 1, T)
        return
    msg = refused(t, "configure", changed)
    assert field in msg  # the refusal names the field
    assert t.command("configure", changed, 2, S)["ok"]  # the supervisor's is taken
    if field not in ("game", "procedure"):  # required fields cannot be left out
        # implicit: the body leaves the field out, so it would go back to its default
        assert field in refused(t, "configure", dict(base))
    # the other game resets every field to that game's defaults
    other = dict(base, game=C.HCF if t.cfg["game"] == C.FCF else C.FCF)
    refused(t, "configure", other)
    # the same settings again change nothing: the table key does
    assert t.command("configure", changed, 3, T)["ok"]


def test_every_schema_field_has_the_supervisor_unless_granted():
    """Derived fields included (paytable_sha256): anything shoe.roles does not grant, and any
    field it does not know (one added later), is the supervisor's."""
    for f in C.schema_fields() + ["a_field_added_later"]:
        want = T if f in C.expected_table_fields() else S
        assert roles.field_role(f) == want, f
        if want == S:
            with pytest.raises(CommandError) as e:
                roles.check_fields(T, {f: 1}, {f: 2})
            assert e.value.reason == "needs_supervisor"
            roles.check_fields(S, {f: 1}, {f: 2})
            roles.check_fields(T, {f: 1}, {f: 1})  # unchanged: nothing to check


def test_the_issues_changes_are_refused_with_the_table_key():
    """Issue 18: raise_when_dealer_not_open, represent_max, the deck age, the jam timeout and
    the procedure with the table key alone; HCF and back turned two-deck alternation off."""
    base = dict(C.BASE, two_deck=True)
    t = configured(base)
    for change in (
        {"rules": {"raise_when_dealer_not_open": "win"}},
        {"represent_max": 5},
        {"deck_age_shoe_s": 99999},
        {"deck_age_hand_s": 99999},
        {"jam_timeout_s": 600},
        {"procedure": "hand"},
    ):
        refused(t, "configure", dict(base, **change))
    msg = refused(t, "configure", {"game": C.HCF, "procedure": "manual-shoe"})
    assert "game" in msg and "two_deck" in msg
    t.command("configure", {"game": C.HCF, "procedure": "manual-shoe", "two_deck": True}, 1, S)
    assert "game" in refused(t, "configure", base)
    assert t.cfg["game"] == C.HCF and t.ledger.two_deck


def test_the_first_configure_sets_every_field_so_it_needs_the_supervisor():
    t = Table()
    msg = refused(t, "configure", dict(C.BASE))
    for f in C.schema_fields():
        if roles.field_role(f) == S and f != "paytable_sha256":
            assert f in msg, f
    assert t.cfg is None
    assert t.command("configure", dict(C.BASE), 0, S)["ok"]


def test_an_inline_pay_table_is_the_same_by_its_digest():
    body = dict(C.BASE, paytable=C.INLINE_FCF)
    t = configured(body)
    assert t.command("configure", json.loads(json.dumps(body)), 1, T)["ok"]  # a fresh copy
    other = json.loads(json.dumps(C.INLINE_FCF))
    other["payout_limit"] = 90000  # its payout limit is part of it
    msg = refused(t, "configure", dict(body, paytable=other))
    assert "paytable" in msg


def test_an_unknown_role_may_do_nothing():
    t = configured()
    for kind in C.known_kinds():
        if kind in ("_ack", "hello", "attest", "recall", "ack_error"):
            continue  # the app's and the link's (tests/security/test_roles.py)
        with pytest.raises(CommandError) as e:
            t.command(kind, {}, 1, "admin")
        assert e.value.reason == "needs_supervisor", kind


# ---- the command kinds, phase by phase ---------------------------------------------------


def _table(engine=fake_engine):
    t = configured(engine=engine)
    t.command("load_deck", {"serial": SER, "back": "R"}, 0, T)
    run_pass(t, SER, "R", shuffled(SER))
    t.pop_events()
    return t


def phase(name):
    """A table in one of the phases a command may meet: idle, before the first card, mid-deal,
    an unreadable first card, decisions, stub."""
    t = _table()
    if name == "idle":
        return t
    t.command("open_round", seats_body(C.FCF, (1, 2)), 1, T)
    order = shuffled(7)
    n = {"before_first_card": 0, "unreadable_first": 0, "mid_deal": 4}.get(name, t.tracker.total)
    for c in order[:n]:
        t.card(SER, "R", c, 1)
    if name == "unreadable_first":
        t.reject("no_read", 1)
    if name == "stub":
        t.command("decisions", {"1": 0, "2": 0}, 1, T)
    t.pop_events()
    assert t.current_phase() == {
        "idle": "open_round",
        "decisions": "decisions",
        "stub": "stub",
    }.get(name, "dealing"), name
    return t


PHASES = ("idle", "before_first_card", "unreadable_first", "mid_deal", "decisions", "stub")
BODIES = {
    "configure": C.BASE,
    "configure_supervised": C.BASE,
    "load_deck": {"serial": 0x1234, "back": "R"},
    "open_round": seats_body(C.FCF, (3,)),
    "decisions": {"1": 0},
    "ack": {"all": True},
    "void_round": {"detail": "x"},
}


@pytest.mark.parametrize("where", PHASES)
def test_every_table_command_kind_in_every_phase(where):
    from shoe.table import _COMMANDS

    for kind in sorted(_COMMANDS):
        body = BODIES.get(kind, {})
        t = phase(where)
        need = roles.need(t, kind, body)
        assert need == (
            T
            if roles.rule(kind) in (T, "fields")
            or (roles.rule(kind) == "dealt" and where in ("idle", "before_first_card"))
            or (roles.rule(kind) == "deck")
            else S
        ), (kind, where)
        if need == S:
            refused(t, kind, body)
        else:
            try:
                t.command(kind, body, 5, T)
            except CommandError as e:  # the phase may refuse it, never the role
                assert e.reason != "needs_supervisor", (kind, where, str(e))
        t = phase(where)
        try:
            t.command(kind, body, 5, S)
        except CommandError as e:
            assert e.reason != "needs_supervisor", (kind, where, str(e))


@pytest.mark.parametrize("kind", ["void_round", "close_round"])
@pytest.mark.parametrize("where", PHASES[1:])
def test_voiding_after_the_first_card_needs_the_supervisor(kind, where):
    t = phase(where)
    if where == "before_first_card":
        t.command(kind, {}, 5, T)
        assert t.rnd is None
        return
    assert "first card" in refused(t, kind, {})
    if kind == "close_round" and where in ("decisions", "stub"):
        with pytest.raises(CommandError) as e:  # the deal is complete
            t.command(kind, {}, 5, S)
        assert e.value.reason == "out_of_sequence"
        return
    t.command(kind, {}, 5, S)
    voids = [b for k, b in t.pop_events() if k == "round_void"]
    assert len(voids) == 1 and t.rnd is None


def test_loading_a_deck_the_shoe_holds_needs_the_supervisor():
    t = _table()
    assert t.command("load_deck", {"serial": 0x1234, "back": "R"}, 9, T)["ok"]  # a new deck
    run_pass(t, 0x1234, "R", shuffled(3)[:50])  # fails: out
    assert t.ledger.status(0) == 3
    for serial in (0x1234, "1234"):  # again (restarts its age, brings it back): no
        assert "holds" in refused(t, "load_deck", {"serial": serial, "back": "R"})
    assert t.command("load_deck", {"serial": "1234", "back": "R"}, 10, S)["ok"]
    assert t.ledger.age(0, 10) == 0


def test_acknowledging_needs_the_supervisor():
    t = phase("mid_deal")
    t.command("void_round", {}, 5, S)
    n = len(t.latched)
    assert n
    refused(t, "ack", {"all": True})
    t.command("ack", {"all": True}, 6, S)
    assert not t.latched


# ---- the same under MicroPython ----------------------------------------------------------


def _role_script():
    """A session of steps (tests/firmware/table/steps.py) with the table key trying every
    field and voiding in each stage, the supervisor doing it: run under both Pythons."""
    s = [["cmd", "configure", C.BASE, T], ["cmd", "configure", C.BASE, S]]
    for f in C.settable_fields():
        v = other_value(f, C.BASE)
        s += [
            ["cmd", "configure", dict(C.BASE, **{f: v}), T],
            ["cmd", "configure", dict(C.BASE, **{f: v}), S],
            ["cmd", "configure", C.BASE, T],
            ["cmd", "configure", C.BASE, S],
        ]
    s.append(["cmd", "load_deck", {"serial": SER, "back": "R"}, T])
    s += [["card", SER, "R", c] for c in shuffled(SER)] + [["card", SER, "R", 52]]
    order = shuffled(5)
    for stage in ("before", "mid", "decisions"):
        s.append(["cmd", "open_round", seats_body(C.FCF, (1,)), T])
        n = {"before": 0, "mid": 3, "decisions": 10}[stage]  # 10: the whole deal
        s += [["card", SER, "R", c] for c in order[:n]]
        s += [
            ["cmd", "void_round", {"detail": stage}, T],
            ["cmd", "close_round", {}, T],
            ["cmd", "void_round", {"detail": stage}, S],
            ["cmd", "ack", {"all": True}, T],
            ["cmd", "ack", {"all": True}, S],
        ]
        s += [["card", SER, "R", c] for c in shuffled(11 + len(stage))] + [["card", SER, "R", 52]]
    return s


def test_the_roles_are_the_same_under_micropython():
    steps = _role_script()
    want = cpython(steps, fake_engine)[0]
    errs = [x["err"] for x in want if "err" in x]
    # refused: the table's first configure, each field's change and its undo, the table's ack
    # in each stage, its void_round and close_round once a card is out (mid-deal, decisions)
    assert errs.count("needs_supervisor") == 1 + 2 * len(C.settable_fields()) + 3 + 2 * 2
    out = run_mpy(
        os.path.join(HERE, "mpy_table.py"),
        heap="256k",
        extra_path=(HERE,),
        stdin=json.dumps({"steps": steps}),
        args=("fake",),
    )
    got = [x for x in json_lines(out) if "ev" in x or "err" in x]
    assert got == json.loads(json.dumps(want))


# ---- the docs show the table -------------------------------------------------------------


def _docs_rows(heading):
    text = open(DOCS).read()
    part = text.split("## " + heading, 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([^`]+)` \| (\w+) \|", part, re.M))


def test_the_docs_table_is_the_roles_table():
    cmds = _docs_rows("Commands")
    assert cmds == {k: roles.rule(k) for k in C.known_kinds()}
    assert set(cmds) == {k for k, _ in roles.pairs(roles.COMMANDS)}  # every kind listed
    fields = _docs_rows("Configuration fields")
    assert fields == {f: roles.field_role(f) for f in C.schema_fields()}
    assert set(fields) == {f for f, _ in roles.pairs(roles.FIELDS)}
    assert set(C.schema_fields()) >= set(setup.KEYS)
