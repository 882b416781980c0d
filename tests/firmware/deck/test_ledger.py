"""Deck ledger: deck checks, per-round accounting, stub counts, two decks; hypothesis properties:
any sequence of reads either accounts for the deck exactly or gives the right irregularity."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe.deck.ledger import OUT, READY, Ledger, count, members, put
from tests.firmware.table.helpers import shuffled

S = 0x3A7F


def checked(two=False):
    lg = Ledger(two)
    lg.load(S, "R", 0)
    for c in range(53):
        lg.pass_read(S, "R", c)
    assert lg.close_pass()["ok"]
    return lg


def test_bitmaps():
    m = bytearray(7)
    for c in (0, 7, 8, 51):
        put(m, c)
    assert count(m) == 4 and members(m) == [0, 7, 8, 51]
    assert len(members(m, True)) == 48


@pytest.mark.clause("rules:1.1-deck", "rules:1.1-cover-last")
def test_deck_check_ok_and_faults():
    lg = checked()
    assert lg.status(0) == READY
    for fault in ("missing", "dup", "foreign", "forged", "cover"):
        lg = Ledger()
        lg.load(S, "R", 0)
        cards = list(range(52))
        if fault == "missing":
            cards.pop(5)
        elif fault == "dup":
            cards.append(5)
        for c in cards:
            lg.pass_read(S, "R", c)
        if fault == "foreign":
            lg.pass_read(0x1111, "R", 3)
        if fault == "forged":
            lg.pass_reject("code_mac")
        rep = lg.close_pass(cover=fault != "cover")
        assert not rep["ok"], fault
        assert lg.status(0) == OUT
        assert rep["missing"] == (["3d"] if fault == "missing" else [])
        assert rep["duplicate"] == (["3d"] if fault == "dup" else [])
        assert rep["extra_count"] == (1 if fault in ("foreign", "forged") else 0)


@pytest.mark.clause("rules:3-card-foreign", "rules:3-duplicate", "rules:3-cover-card")
def test_deal_classification():
    lg = checked()
    lg.begin_round(0)
    assert lg.classify(S, "R", 10, 0) is None
    lg.accept(10)
    assert lg.classify(S, "R", 10, 0) == "card_duplicate"
    assert lg.classify(S, "R", 52, 0) == "cover_card"
    assert lg.classify(S, "B", 11, 0) == "card_foreign"
    assert lg.classify(0x9999, "R", 11, 0) == "card_foreign"
    assert lg.classify(S, "R", 11, 0) is None
    assert count(lg.seen) == 1


@pytest.mark.clause("rules:1.1-two-decks", "rules:3-card-other-back")
def test_two_deck_other_back():
    lg = checked(True)
    lg.load(0x0B0B, "B", 0)
    for c in range(53):
        lg.pass_read(0x0B0B, "B", c)
    assert lg.close_pass()["ok"]
    lg.begin_round(lg.next)
    assert lg.round_slot == 0
    assert lg.classify(0x0B0B, "B", 5, 0) == "card_other_back"
    lg.end_round(True)
    assert lg.next == 1
    lg.begin_round(lg.next)
    assert lg.classify(S, "R", 5, 1) == "card_other_back"


def stub_outcome(dealt, stub, foreign=0, cover=True):
    lg = checked()
    lg.begin_round(0)
    for c in dealt:
        assert lg.classify(S, "R", c, 0) is None
        lg.accept(c)
    lg.open_pass("stub", 0)
    for c in stub:
        lg.pass_read(S, "R", c)
    for _ in range(foreign):
        lg.pass_read(0x2222, "R", 1)
    if cover:
        assert lg.pass_read(S, "R", 52)
    return lg.close_pass(cover)


@pytest.mark.clause("rules:3-stub-misdealt", "rules:3-stub-deck-wrong")
def test_stub_outcomes():
    d = shuffled(1)
    assert stub_outcome(d[:20], d[20:])["ok"]
    r = stub_outcome(d[:20], d[20:] + [d[3]])
    assert r["reason"] == "stub_misdealt" and r["counts"]["total"] == 53
    r = stub_outcome(d[:20], d[21:])
    assert r["reason"] == "stub_deck_wrong" and r["missing"]
    r = stub_outcome(d[:20], d[20:], foreign=1)
    assert r["reason"] == "stub_deck_wrong"
    r = stub_outcome(d[:20], d[20:], cover=False)
    assert r["reason"] == "stub_deck_wrong"


@pytest.mark.clause("rules:1.4-stub-count")
def test_stub_due():
    lg = checked()
    assert lg.stub_due(0, 1)
    for _i in range(4):
        assert not lg.stub_due(0, 5)
        lg.begin_round(0)
        lg.end_round(False)
    assert lg.stub_due(0, 5)


# -- properties ----------------------------------------------------------------------------------
# a read: (kind, card): kind 0 = this deck, 1 = foreign deck, 2 = forged (reject code_mac)
reads = st.lists(st.tuples(st.sampled_from([0] * 8 + [1, 2]), st.integers(0, 51)), max_size=70)


@pytest.mark.clause("rules:1.1-deck")
@settings(max_examples=300, deadline=None)
@given(st.permutations(list(range(52))), st.integers(0, 52), st.integers(0, 52), reads)
def test_deck_check_accounts_exactly_or_fails(perm, drop, dup, extra):
    cards = perm[:drop] + perm[drop + 1 :] if drop < 52 else list(perm)
    if dup < 52:
        cards.append(dup)
    lg = Ledger()
    lg.load(S, "R", 0)
    foreign = 0
    for c in cards:
        lg.pass_read(S, "R", c)
    for kind, c in extra:
        if kind == 0:
            lg.pass_read(S, "R", c)
            cards.append(c)
        elif kind == 1:
            lg.pass_read(0x5555, "B", c)
            foreign += 1
        else:
            lg.pass_reject("code_mac")
            foreign += 1
    rep = lg.close_pass()
    exact = sorted(cards) == list(range(52)) and foreign == 0
    assert rep["ok"] == exact
    assert set(rep["missing"]) == {
        __import__("shoe.cards").cards.name(c) for c in range(52) if c not in cards
    }
    assert rep["extra_count"] == foreign


@settings(max_examples=300, deadline=None)
@given(st.permutations(list(range(52))), st.integers(1, 49), reads, st.booleans())
def test_deal_then_stub_accounts_exactly_or_gives_the_right_reason(perm, n, noise, cover):
    """Deal n cards with noise mixed in: the first irregular read is classified right; a clean
    deal is followed by a stub that is ok iff dealt + stub is exactly the deck."""
    lg = checked()
    lg.begin_round(0)
    seen = set()
    dealt = list(perm[:n])
    noise_at = {i: noise[i] for i in range(min(len(noise), n)) if noise[i][0] != 0 or i % 3 == 0}
    for i, c in enumerate(dealt):
        if i in noise_at:
            kind, x = noise_at[i]
            if kind == 0:  # a card of this deck: a duplicate if already seen
                want = "card_duplicate" if x in seen else None
                got = lg.classify(S, "R", x, 0)
                assert got == want
                if want is None:
                    lg.accept(x)
                    seen.add(x)
                    continue
                return
            got = lg.classify(0x5555 if kind == 1 else S, "B", x, 0)
            assert got == "card_foreign"
            return
        if c in seen:
            assert lg.classify(S, "R", c, 0) == "card_duplicate"
            return
        assert lg.classify(S, "R", c, 0) is None
        lg.accept(c)
        seen.add(c)
    lg.open_pass("stub", 0)
    stub = [c for c in perm if c not in seen]
    if noise and noise[0][0] == 0:
        stub.append(noise[0][1])  # maybe a re-read of a dealt card
    for c in stub:
        lg.pass_read(S, "R", c)
    rep = lg.close_pass(cover)
    total = len(seen) + len(stub)
    if total == 52 and cover:
        assert rep["ok"] and rep["counts"]["total"] == 52
    elif cover:
        assert rep["reason"] == "stub_misdealt"
    else:
        assert rep["reason"] == "stub_deck_wrong"


def test_state_round_trip_in_a_pass():
    lg = checked(True)
    lg.begin_round(0)
    for c in (3, 9, 27):
        lg.accept(c)
    lg.open_pass("stub", 0)
    for c in (1, 2, 3):
        lg.pass_read(S, "R", c)
    lg.pass_read(0x7777, "B", 4)
    st1 = json.loads(json.dumps(lg.to_state()))
    lg2 = Ledger.from_state(st1)
    assert lg2.to_state() == lg.to_state()
    assert lg2.close_pass() == lg.close_pass()
