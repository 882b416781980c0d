"""Dealing trackers: every procedure of both games, explicit positions, counts, overflow."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoe.dealing.tracker import DealError, Tracker, target_name
from tests.firmware.table.helpers import FCF, HCF, expected_targets

PROCS = ("manual-shoe", "hand", "automated-shoe")


def names(tr):
    return [target_name(tr.target(p)) for p in range(tr.total)]


@pytest.mark.clause("rules:1.4-manual")
def test_fcf_manual_with_all_six_explicit():
    tr = Tracker()
    tr.reset(FCF, "manual-shoe", [3, 1], True)
    assert names(tr)[:7] == ["all_six", "1", "3", "dealer", "1", "3", "dealer"]
    assert tr.total == 16


@pytest.mark.clause("rules:1.4-automated")
def test_fcf_automated_with_all_six_explicit():
    tr = Tracker()
    tr.reset(FCF, "automated-shoe", [2], True)
    assert names(tr) == ["2"] * 5 + ["dealer"] * 5 + ["all_six"] + ["discard"] * 4


@pytest.mark.clause("rules:2.2-dealing")
def test_hcf_stacks_of_seven():
    tr = Tracker()
    tr.reset(HCF, "automated-shoe", [1, 6], True)  # no All-Six in HCF
    assert names(tr) == ["1"] * 7 + ["6"] * 7 + ["dealer"] * 7


@pytest.mark.clause(
    "rules:1.4-manual",
    "rules:1.4-hand",
    "rules:1.4-automated",
    "rules:1.4-card-count",
    "rules:2.2-dealing",
    "rules:3-misdeal-too-many",
)
@given(
    st.sampled_from((FCF, HCF)),
    st.sampled_from(PROCS),
    st.sets(st.integers(1, 6), min_size=1, max_size=6),
    st.booleans(),
)
def test_matches_rules_and_counts(game, proc, seats, a6):
    tr = Tracker()
    tr.reset(game, proc, seats, a6)
    exp = expected_targets(game, proc, seats, a6 and game == FCF)
    assert names(tr) == exp
    k = 7 if game == HCF else 5
    for s in seats:
        assert exp.count(str(s)) == k
    assert exp.count("dealer") == k
    assert tr.total <= 52
    for p in range(tr.total):
        assert not tr.complete()
        tr.place(p)
    assert tr.complete()
    with pytest.raises(DealError) as e:
        tr.place(51)
    assert e.value.reason == "misdeal_too_many"
    h = tr.hands()
    assert all(len(h[str(s)]) == k for s in seats)
    assert (h["all_six"] is not None) == (a6 and game == FCF)
    again = Tracker.from_state(tr.to_state())
    assert again.to_state() == tr.to_state() and again.hands() == h


def test_bad_reset():
    tr = Tracker()
    with pytest.raises(DealError):
        tr.reset("bridge", "hand", [1], False)
    with pytest.raises(DealError):
        tr.reset(FCF, "shuffler", [1], False)


@given(
    st.sampled_from((FCF, HCF)),
    st.sampled_from(PROCS),
    st.sets(st.integers(1, 6), min_size=1, max_size=6),
    st.booleans(),
    st.permutations(list(range(52))),
    st.integers(0, 52),
)
def test_hands_are_each_targets_cards_in_dealing_order(game, proc, seats, a6, deck, upto):
    """hands() (one pass) gives every target's cards by the definition: hand(target), in
    dealing order, the first All-Six card, discards left out; also part way through a deal."""
    from shoe.cards import name
    from shoe.dealing.tracker import ALL_SIX, DEALER

    tr = Tracker()
    tr.reset(game, proc, seats, a6)
    for c in deck[: min(upto, tr.total)]:
        tr.place(c)
    want = {str(s): [name(c) for c in tr.hand(s)] for s in sorted(seats)}
    want["dealer"] = [name(c) for c in tr.hand(DEALER)]
    six = tr.hand(ALL_SIX)
    want["all_six"] = name(six[0]) if six else None
    got = tr.hands()
    assert got == want and list(got) == list(want)
