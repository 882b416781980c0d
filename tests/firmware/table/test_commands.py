"""Bad host commands: a clear error with a reason code, and nothing changes (state, events)."""

import json

import pytest

from shoe import reasons
from shoe.table import CommandError, Table
from tests.firmware.table import fake_engine
from tests.firmware.table.helpers import FCF, HCF, SER, make, seats_body, shuffled, snap

W = {"ante": 10, "odds": 10}


def real():
    from shoe.games import engine

    return engine


def refused(t, kind, body, reason, now=5, role="supervisor"):
    """Refused for `reason` (by default sent by the supervisor: the check under test is not the
    role's, tests/firmware/test_roles.py has those), nothing changed."""
    before = snap(t)
    pending = list(t.out)
    with pytest.raises(CommandError) as e:
        t.command(kind, body, now, role)
    assert e.value.reason == reason, (str(e.value), e.value.reason)
    assert str(e.value)  # a message for people
    assert snap(t) == before
    assert t.out == pending
    return str(e.value)


def dealing():
    t = make()
    t.command("open_round", seats_body(FCF, (1, 2)), 1)
    t.pop_events()
    return t


def at_decisions():
    t = dealing()
    for c in shuffled(3)[:15]:
        t.card(SER, "R", c, 1)
    t.pop_events()
    return t


def test_unconfigured():
    t = Table(engine=fake_engine)
    refused(t, "open_round", seats_body(FCF, (1,)), "not_configured")
    refused(t, "load_deck", {"serial": 1, "back": "R"}, "not_configured")
    refused(t, "decisions", {"1": 0}, "no_round")
    refused(t, "launch", {}, "bad_command")
    refused(t, "status", [1], "bad_command")


@pytest.mark.clause("rules:1.4-stub-count", "rules:4-paytable-data")
@pytest.mark.parametrize(
    "body,reason",
    [
        ({"game": "poker", "procedure": "hand"}, "unknown_game"),
        ({"game": FCF, "procedure": "by-drone"}, "unknown_procedure"),
        ({"game": FCF}, "unknown_procedure"),
        ({"game": FCF, "procedure": "hand", "stub_every": 6}, "bad_field"),
        ({"game": FCF, "procedure": "hand", "stub_every": 0}, "bad_field"),
        ({"game": FCF, "procedure": "hand", "two_deck": "yes"}, "bad_field"),
        ({"game": FCF, "procedure": "hand", "offered": ["flush_bonus"]}, "bad_field"),
        ({"game": FCF, "procedure": "hand", "rules": {"ties": "dealer"}}, "bad_field"),
        ({"game": HCF, "procedure": "hand", "rules": {"ties": "push"}}, "bad_field"),
        ({"game": FCF, "procedure": "hand", "jam_timeout_s": 0}, "bad_field"),
        ({"game": FCF, "procedure": "hand", "colour": "red"}, "bad_field"),
        ({"game": FCF, "procedure": "hand", "paytable": "boom"}, "paytable"),
        ({"game": FCF, "procedure": "hand", "paytable": {"game": HCF}}, "bad_field"),
    ],
)
def test_bad_configure(body, reason):
    t = make()
    refused(t, "configure", body, reason)


@pytest.mark.clause("rules:1.1-seats", "rules:2.2-dealing")
@pytest.mark.parametrize(
    "body,reason",
    [
        (
            {
                "seats": {
                    "1": {"wagers": W},
                    "2": {"wagers": W},
                    "3": {"wagers": W},
                    "4": {"wagers": W},
                    "5": {"wagers": W},
                    "6": {"wagers": W},
                    "7": {"wagers": W},
                }
            },
            "too_many_seats",
        ),
        ({"seats": [{"seat": 2, "wagers": W}, {"seat": 2, "wagers": W}]}, "seat_twice"),
        ({"seats": {"2": {"wagers": W}, 2: {"wagers": W}}}, "seat_twice"),
        ({"seats": {"0": {"wagers": W}}}, "bad_seat"),
        ({"seats": {"7": {"wagers": W}}}, "bad_seat"),
        ({"seats": {"01": {"wagers": W}}}, "bad_seat"),
        ({"seats": {}}, "no_seats"),
        ({"seats": {"1": {}}}, "bad_wager"),
        ({"seats": {"1": {"wagers": [10, 10]}}}, "bad_wager"),
        ({"seats": "1,2"}, "bad_command"),
        ({}, "bad_command"),
        ({"seats": {"1": {"wagers": W}}, "extra": 1}, "bad_field"),
    ],
)
def test_bad_open_round(body, reason):
    t = make()
    refused(t, "open_round", body, reason)


@pytest.mark.clause("684a.7(d)(1)", "rules:1.3-optional-needs-ante")
@pytest.mark.parametrize(
    "body,reason",
    [
        ({"seats": {"1": {"wagers": {"ante": 10, "odds": 5}}}}, "ante_odds"),
        ({"seats": {"1": {"wagers": {"ante": 10}}}}, "ante_odds"),
        ({"seats": {"1": {"wagers": {"prime": 5}}}}, "optional_without_ante"),
        ({"seats": {"1": {"wagers": {"ante": 10, "odds": 10, "flush_bonus": 5}}}}, "bad_wager"),
        ({"seats": {"1": {"wagers": {"ante": 10, "odds": 10, "prime": -5}}}}, "bad_wager"),
        ({"seats": {"1": {"wagers": {"ante": 10.5, "odds": 10.5}}}}, "bad_wager"),
        ({"seats": {"1": {"wagers": {"ante": True, "odds": True}}}}, "bad_wager"),
        ({"seats": {"2": {"wagers": W}, "1": {"wagers": {"ante": 1}}}}, "ante_odds"),
    ],
)
def test_wager_rules_come_from_the_engine(body, reason):
    t = make(engine=real())
    msg = refused(t, "open_round", body, reason)
    assert "seat" in msg


@pytest.mark.clause("rules:1.3-offered")
def test_optional_wager_not_offered():
    t = make(offered=["prime"])
    refused(
        t,
        "open_round",
        {"seats": {"1": {"wagers": {"ante": 1, "odds": 1, "all_six": 1}}}},
        "wager_not_offered",
    )


@pytest.mark.clause("678a.7(d)(1)", "rules:1.3-optional-needs-ante")
def test_hcf_needs_ante():
    t = make(HCF, "hand", engine=real())
    refused(
        t, "open_round", {"seats": {"1": {"wagers": {"flush_bonus": 5}}}}, "optional_without_ante"
    )
    refused(t, "open_round", {"seats": {"1": {"wagers": {"progressive": 0}}}}, "ante_missing")
    refused(t, "open_round", {"seats": {"1": {"wagers": {"ante": 5, "odds": 5}}}}, "bad_wager")


def test_out_of_sequence_while_dealing():
    t = dealing()
    refused(t, "open_round", seats_body(FCF, (3,)), "round_open")
    refused(t, "decisions", {"1": 10, "2": 10}, "out_of_sequence")
    refused(t, "configure", {"game": FCF, "procedure": "hand"}, "round_open")
    refused(t, "load_deck", {"serial": 9, "back": "R"}, "round_open")


@pytest.mark.clause("684a.11(b)", "rules:1.5-refused")
def test_bad_decisions():
    t = at_decisions()
    refused(t, "decisions", {}, "bad_field")
    refused(t, "decisions", {"3": 10}, "bad_seat")
    refused(t, "decisions", {"1": -1}, "bad_raise")
    refused(t, "decisions", {"1": "10"}, "bad_raise")
    refused(t, "decisions", {"1": 10, 1: 10}, "seat_twice")
    msg = refused(t, "decisions", {"1": 10, "2": 25}, "bad_raise")
    assert "seat 2" in msg and "allowed" in msg
    t.command("decisions", {"1": 10}, 5)
    refused(t, "decisions", {"1": 0}, "decision_repeat")
    refused(t, "close_round", {}, "out_of_sequence")


@pytest.mark.clause("rules:1.1-deck")
def test_deck_commands():
    t = make(check=False)
    refused(t, "load_deck", {"serial": "3a7f", "back": "R"}, "bad_deck")
    refused(t, "load_deck", {"serial": 70000, "back": "R"}, "bad_deck")
    refused(t, "load_deck", {"serial": 1, "back": "G"}, "bad_deck")
    refused(t, "open_round", seats_body(FCF, (1,)), "deck_not_ready")
    t.command("load_deck", {"serial": "3A7F", "back": "R"}, 0)
    refused(t, "open_round", seats_body(FCF, (1,)), "pass_open")
    refused(t, "configure", {"game": FCF, "procedure": "hand"}, "pass_open")


@pytest.mark.clause("rules:1.1-two-decks")
def test_two_deck_backs_must_differ():
    t = make(two_deck=True, check=False)
    t.command("load_deck", {"serial": 1, "back": "R"}, 0)
    for c in list(range(52)) + [52]:
        t.card(1, "R", c, 0)
    # a blue deck fills the other slot; then the same serial again with the other back is refused
    assert t.command("load_deck", {"serial": 2, "back": "B"}, 0)["slot"] == 1
    for c in list(range(52)) + [52]:
        t.card(2, "B", c, 0)
    refused(t, "load_deck", {"serial": 1, "back": "B"}, "bad_deck")


@pytest.mark.clause("rules:3-latched")
def test_blocked_until_acknowledged():
    t = dealing()
    t.card(0x4444, "R", 3, 1)  # foreign: void, quarantine
    t.pop_events()
    refused(t, "open_round", seats_body(FCF, (1,)), "blocked")
    refused(t, "ack", {"id": 99}, "unknown_irregularity")
    refused(t, "ack", {"ids": "1"}, "bad_field")
    refused(t, "void_round", {}, "no_round")
    refused(t, "close_round", {}, "no_round")
    t.command("ack", {"id": t.latched[0]["id"]}, 2, "supervisor")
    refused(t, "open_round", seats_body(FCF, (1,)), "deck_not_ready")


def test_status_changes_nothing():
    t = at_decisions()
    before = snap(t)
    st = t.command("status", {}, 9)
    assert st["phase"] == "decisions" and st["round"]["dealt"] == 15
    assert snap(t) == before


@pytest.mark.clause("rules:3-latched")
def test_every_reason_used_is_in_the_catalogue():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "firmware" / "shoe"
    known = set(reasons.command_errors()) | {r for r, a in reasons.irregularities()}
    table = [f for f in root.glob("table/*.py") if f.name != "snapshot.py"]  # no reasons there
    files = [*table, *root.glob("deck/*.py"), *root.glob("dealing/*.py")]
    used = set()
    for f in files:
        src = f.read_text()
        used |= set(
            re.findall(r'(?:Error|_void|_latch)\([^"\n]*"[^"]*"[^"]*?,\s*"([a-z_]+)"', src)
        )
        used |= set(re.findall(r'\)\s*,\s*"([a-z_]+)"\)', src))
        used |= set(re.findall(r'_reason\(e, "([a-z_]+)"\)', src))
    used -= {"check", "stub", "reason"}  # pass kinds, and the word "reason" itself
    assert used, "found no reason codes"
    missing = sorted(u for u in used if u not in known)
    assert not missing, missing


class _BrokenEngine:
    """An engine with a bug: TypeError instead of EngineError."""

    def __init__(self, where):
        self.where = where

    def _maybe(self, name):
        if name == self.where:
            raise TypeError("engine bug")

    def check_wagers(self, game, wagers):
        self._maybe("check_wagers")

    def check_raise(self, game, seat, cards, ante, amount):
        self._maybe("check_raise")

    def evaluate_round(self, obj):
        if self.where == "evaluate_round" and obj["dealer"][0] != "2c":  # not the probe
            raise TypeError("engine bug")
        if self.where == "probe":
            raise TypeError("engine bug")
        return fake_engine.evaluate_round(obj)


@pytest.mark.clause("irr:settle-error")
@pytest.mark.parametrize("where", ["check_wagers", "check_raise", "evaluate_round", "probe"])
def test_an_engine_bug_never_crashes_the_table(where):
    eng = _BrokenEngine(where)
    if where == "probe":
        t = Table(engine=eng)
        with pytest.raises(CommandError):
            t.command("configure", {"game": FCF, "procedure": "hand"}, 0, "supervisor")
        return
    t = make(engine=eng)
    if where == "check_wagers":
        refused(t, "open_round", seats_body(FCF, (1,)), "bad_wager")
        return
    order = shuffled(4)
    t.command("open_round", seats_body(FCF, (1,)), 1)
    for c in order[:10]:
        t.card(SER, "R", c, 1)
    if where == "check_raise":
        refused(t, "decisions", {"1": 0}, "bad_raise")
        return
    t.command("decisions", {"1": 0}, 1)
    for c in order[10:] + [52]:
        t.card(SER, "R", c, 1)
    ev = t.pop_events()
    assert [b["reason"] for k, b in ev if k == "round_void"] == ["settle_error"]


@pytest.mark.clause("rules:1.3-offered")
def test_pay_table_must_pay_every_offered_wager():
    doc = {
        "name": "no-all-six",
        "game": FCF,
        "example": True,
        "odds": {
            "four_of_a_kind": {"win": 30, "bad_beat": 100},
            "straight": {"win": 1, "bad_beat": 2},
        },
        "prime": {"five_one_colour": 5, "four_one_colour": 1},
        "four_card_bonus": {"four_of_a_kind": 100, "two_pair": 2},
        "payout_limit": None,
    }
    doc = json.loads(json.dumps(doc))
    t = Table(engine=real())
    with pytest.raises(CommandError) as e:  # offering a wager the table does not pay
        t.command(
            "configure",
            {"game": FCF, "procedure": "hand", "paytable": doc, "offered": ["prime", "all_six"]},
            0,
            "supervisor",
        )
    assert e.value.reason == "wager_not_offered"
    # without `offered`, the table offers what its pay table pays
    rep = t.command(
        "configure", {"game": FCF, "procedure": "hand", "paytable": doc}, 0, "supervisor"
    )
    assert rep["config"]["offered"] == ["prime", "four_card_bonus"]


def test_malformed_reads_are_refused_and_change_nothing():
    t = dealing()
    before = snap(t)
    for args in (
        (SER, "R", 53),
        (SER, "G", 3),
        (-1, "R", 3),
        (1 << 20, "R", 3),
        ("3A7F", "R", 3),
        (SER, "R", "As"),
        (SER, "R", None),
    ):
        with pytest.raises(CommandError) as e:
            t.card(*args, 5)
        assert e.value.reason == "bad_field"
    assert snap(t) == before
    t.reject("x" * 500, 5)
    ev = t.pop_events()
    assert len(ev[0][1]["reason"]) <= 24


def test_status_fits_one_frame_with_every_latched_irregularity_and_shows_them_all_in_turn():
    """16 latched irregularities with the longest details would make a 2 KB status reply, which
    the link refuses (reply_too_big): the shoe could no longer say its status, nor have its
    errors acknowledged. Status carries the oldest that fit and how many there are."""
    from shoe.link import codec, frame

    t = make()
    t.command("open_round", seats_body(FCF, (1, 2, 3, 4, 5, 6)), 1)
    for i in range(16):
        t._latch("settle_error", ("detail %02d " % i).ljust(80, "x"), 1)
    t.pop_events()
    st = t.command("status", {}, 2)
    reply = dict(st, re=65535)
    assert len(codec.encode(reply)) <= frame.MAX_PAYLOAD
    assert st["latched_count"] == 16 and 0 < len(st["latched"]) < 16
    seen = []
    while True:
        st = t.command("status", {}, 3)
        if not st["latched"]:
            break
        assert st["latched"][0]["id"] == t.latched[0]["id"]  # the oldest first
        seen += [i["id"] for i in st["latched"]]
        for irq in st["latched"]:
            t.command("ack", {"id": irq["id"]}, 3, "supervisor")
    assert len(seen) == 16 and st["latched_count"] == 0


def test_the_shoes_whole_status_reply_fits_one_frame_with_latched_irregularities(monkeypatch):
    """The table's share alone is not the reply: the app adds its figures (firmware hash,
    chain, counters) and the link its envelope. With a six-seat round open and long latched
    details the whole reply once took more than a frame (seen through power cuts: four
    card_out_of_round entries made 1020 bytes), so every status failed with reply_too_big and
    nothing could be acknowledged. The reply lists fewer entries then (the last without its
    detail if need be), never none, and acknowledging them shows the next."""
    import gc
    from types import SimpleNamespace

    from shoe import commands
    from shoe.link import frame
    from shoe.link.message import seal_message

    monkeypatch.setattr(gc, "mem_free", lambda: 200000, raising=False)  # CPython has none
    t = make(two_deck=True)  # two decks listed
    t.command("open_round", seats_body(FCF, (1, 2, 3, 4, 5, 6)), 1)
    t.cfg["paytable"], t.cfg["paytable_sha256"] = {"name": None}, "ab" * 32  # an inline one
    for i in range(16):
        t._latch("card_out_of_round", ("detail %02d " % i).ljust(80, "x"), 1)
    t.pop_events()
    journal = SimpleNamespace(boot=9999, eseq=999999, chain=bytes(16), outbox_first=lambda: 999990)
    app = SimpleNamespace(
        table=t,
        clock=lambda: 1.7e9 + 0.123456,
        hw=SimpleNamespace(board_name="pico-rfid-w"),
        cfg={"shoe_id": "SIM-C77D9D66", "demo": True},
        provisioned=True,
        firmware_sha="ab" * 32,
        reads=999999,
        backlog=[],
        faults=999,
        dropped=999,
        gcpacer=SimpleNamespace(idle_collections=99999),
        journal=journal,
    )
    seen = []
    while True:
        st = commands.status(app)
        # as the link sends it: {"re": ctr, ...} in a durable envelope (the largest)
        payload, _ = seal_message(bytes(32), "reply", dict(st, re=65535), 999999, bytes(16))
        assert len(payload) <= frame.MAX_PAYLOAD, (len(payload), len(st["latched"]))
        if not st["latched"]:
            break
        assert st["latched"][0]["id"] == t.latched[0]["id"]  # the oldest first
        seen += [i["id"] for i in st["latched"]]
        for irq in st["latched"]:
            t.command("ack", {"id": irq["id"]}, 3, "supervisor")
    assert len(seen) == 16 and st["latched_count"] == 0
    assert all(len(i["detail"]) == 80 for i in t.latched) or not t.latched  # table keeps them
