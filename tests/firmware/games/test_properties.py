"""Hypothesis properties of the engine (CPython): invariances and monotonic payouts."""

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe import cards
from shoe.games import engine, fcf, hcf
from tests.oracle import naive

SUIT_PERMS = st.permutations(range(4))


def deal(n):
    return st.lists(st.integers(0, 51), min_size=n, max_size=n, unique=True)


def permute_suits(ids, perm):
    return [(c & ~3) | perm[c & 3] for c in ids]


def fcf_round(ids, wagers, raise_mult, six=True):
    dealer, seat, rest = ids[:5], ids[5:10], ids[10:]
    ante = wagers["ante"]
    return {
        "game": "four-card-frenzy",
        "paytable": "fcf-public-1",
        "dealer": cards.names(dealer),
        "all_six_card": cards.name(rest[0]) if six else None,
        "seats": {"1": {"cards": cards.names(seat), "wagers": wagers, "raise": ante * raise_mult}},
    }


def strip(result):
    """What a suit permutation or card order may not change: every wager and total."""
    out = {}
    for k, s in result["seats"].items():
        out[k] = (
            s.get("category"),
            s.get("straight_flush"),
            s["wagers"],
            s["net"],
            s.get("flush", {}).get("length"),
        )
    d = result["dealer"]
    return out, d.get("category"), d.get("opens"), d.get("qualifies")


WAGERS = st.fixed_dictionaries({"ante": st.integers(1, 500)}).flatmap(
    lambda w: st.fixed_dictionaries(
        {
            "ante": st.just(w["ante"]),
            "odds": st.just(w["ante"]),
            "prime": st.integers(0, 50),
            "four_card_bonus": st.integers(0, 50),
            "all_six": st.integers(0, 50),
        }
    )
)


@settings(max_examples=300, deadline=None)
@given(deal(11), WAGERS, SUIT_PERMS, st.randoms(use_true_random=False))
def test_fcf_suit_permutation_and_card_order_do_not_change_results(ids, wagers, perm, rnd):
    mult = 1
    base = engine.evaluate_round(fcf_round(ids, wagers, mult))
    # suit permutation (colour changes too, so Prime is left out of this comparison)
    w2 = dict(wagers, prime=0)
    a = engine.evaluate_round(fcf_round(ids, w2, mult))
    b = engine.evaluate_round(fcf_round(permute_suits(ids, perm), w2, mult))
    assert strip(a) == strip(b)
    # card order inside each hand
    shuffled = ids[:5] + ids[5:10]
    d, s = shuffled[:5], shuffled[5:10]
    rnd.shuffle(d)
    rnd.shuffle(s)
    c = engine.evaluate_round(fcf_round(d + s + ids[10:], wagers, mult))
    assert strip(c) == strip(base)


@pytest.mark.clause("684a.11(c)")
@settings(max_examples=300, deadline=None)
@given(
    deal(15),
    st.integers(1, 100),
    st.sampled_from(["player", "push"]),
    st.sampled_from(["compare", "win"]),
)
def test_fcf_better_hand_never_pays_less(ids, ante, ties, rwdno):
    dealer = ids[:5]
    h1, h2 = ids[5:10], ids[10:15]
    if fcf.value(h1) < fcf.value(h2):
        h1, h2 = h2, h1
    obj = {
        "game": "four-card-frenzy",
        "paytable": "fcf-public-1",
        "rules": {"ties": ties, "raise_when_dealer_not_open": rwdno},
        "dealer": cards.names(dealer),
        "all_six_card": None,
        "seats": {
            "1": {
                "cards": cards.names(h1),
                "raise": ante,
                "wagers": {"ante": ante, "odds": ante, "four_card_bonus": ante},
            },
            "2": {
                "cards": cards.names(h2),
                "raise": ante,
                "wagers": {"ante": ante, "odds": ante, "four_card_bonus": ante},
            },
        },
    }
    r = engine.evaluate_round(obj)
    assert r["seats"]["1"]["net"] >= r["seats"]["2"]["net"]


@pytest.mark.clause("rules:2.1-compare")
@settings(max_examples=300, deadline=None)
@given(deal(21), st.integers(1, 100), SUIT_PERMS, st.randoms(use_true_random=False))
def test_hcf_invariances_and_monotonic(ids, ante, perm, rnd):
    dealer, h1, h2 = ids[:7], ids[7:14], ids[14:21]
    if hcf.flush_value(h1) < hcf.flush_value(h2):
        h1, h2 = h2, h1

    def obj(d, a, b):
        w = {"ante": ante, "flush_bonus": ante}
        return {
            "game": "high-card-flush",
            "paytable": "hcf-public-1",
            "dealer": cards.names(d),
            "seats": {
                "1": {"cards": cards.names(a), "wagers": dict(w), "raise": ante},
                "2": {"cards": cards.names(b), "wagers": dict(w), "raise": ante},
            },
        }

    r = engine.evaluate_round(obj(dealer, h1, h2))
    assert r["seats"]["1"]["net"] >= r["seats"]["2"]["net"]
    p = engine.evaluate_round(
        obj(permute_suits(dealer, perm), permute_suits(h1, perm), permute_suits(h2, perm))
    )
    assert strip(p) == strip(r)
    d2, a2, b2 = list(dealer), list(h1), list(h2)
    for x in (d2, a2, b2):
        rnd.shuffle(x)
    assert strip(engine.evaluate_round(obj(d2, a2, b2))) == strip(r)


@pytest.mark.clause("rules:1.2-tiebreak")
@settings(max_examples=200, deadline=None)
@given(deal(5), SUIT_PERMS)
def test_fcf_value_is_suit_blind_except_flushes(ids, perm):
    assert fcf.value(ids) == fcf.value(permute_suits(ids, perm))


@pytest.mark.clause("rules:1.2-categories")
@settings(max_examples=100, deadline=None)
@given(deal(11), WAGERS)
def test_categories_agree_with_the_naive_oracle_and_input_untouched(ids, wagers):
    """The categories the engine reports are those of the naive all-subsets evaluator
    (tests/oracle/naive.py, independent of fcf.value); the round given is not modified."""
    obj = fcf_round(ids, wagers, 1)
    before = copy.deepcopy(obj)
    r = engine.evaluate_round(obj)
    assert obj == before
    assert r["seats"]["1"]["category"] == fcf.CATEGORIES[naive.value(ids[5:10]) >> 26]
    assert r["dealer"]["category"] == fcf.CATEGORIES[naive.value(ids[:5]) >> 26]
