"""The deck ledger's rules for authenticated RFID tags (shoe/deck/tags.py): counters per card for
the deck's life, replays and plain copies, mixed decks, what a snapshot keeps; and through the
Table, the dealt card's delta op of a counter (the journal's copy equals state())."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe.deck import tags
from shoe.deck.ledger import OUT, READY, Ledger
from shoe.journal import delta
from shoe.table import Table

S = 0x3A7F


def checked(ctrs=None, plain=()):
    """A ledger whose deck went through its check: card c read with counter ctrs[c] (1 if not
    given), the cards in `plain` read plain."""
    lg = Ledger()
    lg.load(S, "R", 0)
    for c in range(53):
        ctr = -1 if c in plain else (ctrs or {}).get(c, 1)
        why, _ = tags.tag_read(lg, S, "R", c, ctr)
        if why is None:
            lg.pass_read(S, "R", c)
        else:
            lg.pass_reject(why)
    return lg, lg.close_pass()


def test_a_deck_checked_with_its_tags_is_authenticated_and_remembers_every_count():
    lg, rep = checked({5: 7})
    assert rep["ok"] and lg.status(0) == READY and lg.tc[0] is not None
    assert tags.cloneable(lg) is False
    assert tags.tag_read(lg, S, "R", 5, 7) == ("tag_replay", -1)  # seen: a recorded answer
    assert tags.tag_read(lg, S, "R", 5, 6) == ("tag_replay", -1)  # older still
    assert tags.tag_read(lg, S, "R", 5, 8) == (None, 0)  # a fresh count: floor 8
    assert tags.tag_read(lg, S, "R", 5, 8) == ("tag_replay", -1)
    assert tags.tag_read(lg, S, "R", 5, -1) == ("tag_plain", -1)  # a plain copy
    assert tags.tag_read(lg, S, "R", 6, 2, repeat=True) == ("repeat", 0)  # the tag again
    assert tags.tag_read(lg, S, "R", 6, 2, repeat=True) == ("tag_replay", -1)
    assert tags.tag_read(lg, 0x1111, "R", 6, 2) == (None, -1)  # another deck: foreign
    assert tags.tag_read(lg, S, "R", 52, 2) == (None, 0)  # the cover card too


def test_a_deck_of_plain_tags_or_codes_is_cloneable():
    lg, rep = checked(plain=range(53))
    assert rep["ok"] and lg.tc[0] is None and tags.cloneable(lg) is True
    assert tags.tag_read(lg, S, "R", 3, -1) == (None, -1)
    assert tags.tag_read(lg, S, "R", 3, 9) == (None, -1)  # an authenticated tag: nothing kept
    assert tags.tag_read(lg, S, "R", 3, 9, True) == ("repeat", -1)
    assert tags.cloneable(Ledger()) is None  # no deck in play


def test_a_mixed_deck_fails_its_check_whichever_comes_first():
    lg, rep = checked(plain=(0, 1))  # plain reads before the first tag
    assert not rep["ok"] and rep["plain_tags"] == 2 and lg.status(0) == OUT
    lg, rep = checked(plain=(40,))  # after: the plain read is a forged card
    assert not rep["ok"] and rep["extra"] == ["forged"]


def test_counters_live_as_long_as_the_deck():
    lg, _ = checked()
    tags.tag_read(lg, S, "R", 9, 4)
    lg.load(S, "R", 100)  # the same deck again (a recheck)
    assert tags.tag_read(lg, S, "R", 9, 4) == ("tag_replay", -1)
    lg.load(0x2222, "R", 200)  # another deck in the slot: afresh
    assert lg.tc[0] is None
    lg = Ledger(two_deck=True)
    lg.load(S, "R", 0)
    tags.tag_read(lg, S, "R", 1, 1)
    lg.close_pass()
    lg.set_two_deck(False)
    assert lg.tc[1] is None


def test_the_snapshot_keeps_them_and_old_snapshots_load():
    lg, _ = checked({7: 300})
    d = lg.to_state()
    tags.add_state(lg, d)
    st = json.loads(json.dumps(d))
    assert st["t0"][42:48] == "00012c" and "t1" not in st and "pp" not in st
    back = Ledger.from_state(st)
    tags.load_state(back, st)
    assert back.tc == lg.tc and tags.tag_read(back, S, "R", 7, 300) == ("tag_replay", -1)
    old = Ledger().to_state()  # written before authenticated tags
    lg2 = Ledger.from_state(old)
    tags.load_state(lg2, old)
    assert lg2.tc == [None, None] and lg2.p_plain == 0


@pytest.mark.clause("rules:3-card-forged")
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 52), st.integers(-1, 40), st.booleans()), max_size=60))
def test_a_counter_never_goes_back_and_a_count_is_accepted_once(reads):
    lg, _ = checked()
    best = {c: 1 for c in range(53)}
    for c, ctr, rep in reads:
        why, s = tags.tag_read(lg, S, "R", c, ctr, rep)
        if ctr < 0:
            assert why == "tag_plain"
        elif ctr <= best[c]:
            assert why == "tag_replay" and s == -1
        else:
            assert why == ("repeat" if rep else None) and s == 0
            best[c] = ctr
        assert int.from_bytes(lg.tc[0][3 * c : 3 * c + 3], "big") == best[c]


def test_a_dealt_cards_counter_reaches_the_journal_as_its_delta():
    """The table records a counter that rose in a deal as a 3-byte splice of ledger t0 (no
    whole-state diff on the hot path); applied to the journal's copy it gives state()."""
    from tests.firmware.table.helpers import FCF, seats_body

    t = Table({"game": FCF, "procedure": "manual-shoe", "paytable": "fcf-public-1"})
    t.command("load_deck", {"serial": "3A7F", "back": "R"}, 0)
    for c in range(53):
        assert t.tag_read(S, "R", c, 1) is None
        t.card(S, "R", c, 1)
    t.command("open_round", seats_body(FCF, (1, 2)), 2)
    t.pop_events()  # (the app journals the events with the state they lead to)
    copy = json.loads(json.dumps({"table": t.state()}))
    t.take_delta()
    for i, c in enumerate((10, 20, 30)):
        assert t.tag_read(S, "R", c, 5 + i) is None
        t.card(S, "R", c, 3)
        t.pop_events()
        ops = t.take_delta()
        assert ops is not None and any(
            op[1][1] == "%06x" % (5 + i)
            for op in ops
            if len(op) == 3 and op[2] == 2 and len(op[1][1]) == 6
        )
        copy = delta.apply(copy, json.loads(json.dumps(ops)))
        assert copy == json.loads(json.dumps({"table": t.state()}))
    assert t.tag_read(S, "R", 10, 5) == "tag_replay"
    assert t.command("status", {}, 4)["cloneable"] is False
