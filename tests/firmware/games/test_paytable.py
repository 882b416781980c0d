"""Pay tables as data: the presets of rules.md 4, fractional odds, exact money."""

import pytest

from shoe.games import paytable, ptcheck
from shoe.games.settle import wager


@pytest.mark.clause("rules:4-examples")
def test_presets_are_examples_with_rules_values():
    assert paytable.PRESETS == ("fcf-public-1", "hcf-public-1", "hcf-public-2")
    f = paytable.load("fcf-public-1", "four-card-frenzy")
    assert f.example is True and f.illustrative == ("all_six",)
    assert "illustrative" in paytable.preset("fcf-public-1")["notes"]
    one = paytable.ONE
    assert f.sections["odds.win"] == {
        "four_of_a_kind": 30 * one,
        "straight_flush": 15 * one,
        "three_of_a_kind": 2 * one,
        "flush": 15000,
        "straight": one,
    }
    assert f.sections["odds.bad_beat"] == {
        "four_of_a_kind": 100 * one,
        "straight_flush": 50 * one,
        "three_of_a_kind": 4 * one,
        "flush": 3 * one,
        "straight": 2 * one,
    }
    assert f.sections["four_card_bonus"]["royal_flush"] == 50 * one
    assert f.sections["prime"] == {"five_one_colour": 5 * one, "four_one_colour": one}
    assert f.sections["all_six"]["six_card_royal_flush"] == 1000 * one
    h1 = paytable.load("hcf-public-1")
    assert {k: x // one for k, x in h1.sections["flush_bonus"].items()} == {
        "7": 300,
        "6": 100,
        "5": 10,
        "4": 1,
    }
    assert {k: x // one for k, x in h1.sections["straight_flush_bonus"].items()} == {
        "7": 8000,
        "6": 1000,
        "5": 100,
        "4": 60,
        "3": 7,
    }
    assert h1.sections["progressive"] == {
        "7": "jackpot",
        "6": "tier-2",
        "5": "tier-3",
        "4": "tier-4",
    }
    h2 = paytable.load("hcf-public-2")
    assert {k: x // one for k, x in h2.sections["flush_bonus"].items()} == {
        "7": 100,
        "6": 20,
        "5": 10,
        "4": 2,
    }
    assert {k: x // one for k, x in h2.sections["straight_flush_bonus"].items()} == {
        "7": 500,
        "6": 200,
        "5": 100,
        "4": 50,
        "3": 9,
    }
    assert all(paytable.preset(n)["example"] is True for n in paytable.PRESETS)


@pytest.mark.clause("rules:4-round-down")
@pytest.mark.parametrize(
    "x,fixed",
    [
        (1.5, 15000),
        (0.1, 1000),
        (2.675, 26750),
        (1.2345, 12345),
        (7, 70000),
        (0, 0),
        (1e6, 10**10),
    ],
)
def test_odds_are_exact_fixed_point(x, fixed):
    assert ptcheck.odds_value(x, "f") == fixed


@pytest.mark.clause("rules:4-round-down")
@pytest.mark.parametrize(
    "amount,odds,payout,rounded",
    [
        (5, 15000, 7, True),
        (10, 15000, 15, False),
        (3, 1000, 0, True),
        (10, 1000, 1, False),
        (1000000000, 26750, 2675000000, False),
        (7, 12345, 8, True),
        (3, -10000, -3, False),
    ],
)
def test_payout_is_floor_of_exact_product(amount, odds, payout, rounded):
    w = wager(amount, odds)
    assert w["payout"] == payout
    assert w.get("rounded", False) is rounded
