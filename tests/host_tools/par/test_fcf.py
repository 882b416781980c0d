"""Four Card Frenzy par mathematics: small exact cases by brute force, the counts of
../shared/reference/reference-figures.md (published or computed there by other programs), and
the evaluator against the oracle and the firmware's own (host_tools/par, docs/par.md)."""

import itertools
import random
from math import comb

import numpy as np
import pytest

from host_tools.par import combin, disjoint, fcf, fcfhands, fcfside
from shoe.games import fcf as firmware_fcf
from shoe.games import paytable
from tests.oracle import naive


def test_subsets_are_every_k_subset_in_colex_order():
    for n, k in ((9, 4), (12, 5), (7, 1)):
        rows = combin.subsets(n, k)
        assert sorted(map(tuple, rows.tolist())) == list(itertools.combinations(range(n), k))
        assert np.array_equal(combin.colex(rows), np.arange(comb(n, k)))


def _hand(text):
    return [("23456789TJQKA".index(c[0]) << 2) | "cdhs".index(c[1]) for c in text.split()]


@pytest.mark.parametrize(
    "better, worse",
    [
        ("As Ad Ah Ac 2c", "Ks Qs Js Ts 2d"),  # quads beat a straight flush (rules.md 1.2)
        ("4s 3s 2s As Kd", "Kh Kd Kc 2s 3d"),  # A-2-3-4 suited is a straight flush
        ("Kh Kd Kc 2s 3d", "As Ks 9s 4s 2d"),  # trips beat a flush
        ("As Ks 9s 4s 2d", "5d 4c 3h 2s 9c"),  # a flush beats a straight
        ("5d 4c 3h 2s 9c", "Ad 4c 3h 2s 9c"),  # 5-high straight beats the A-2-3-4 wheel
        ("Ad 4c 3h 2s 9c", "As Ad Kc Kh 2d"),  # the wheel beats two pair
        ("Qc Qd 5s 5h 2d", "Ac Ad Ks Qh 2c"),  # two pair beat a pair
        ("Ac Ad 9s 7h 2c", "Ac Kd Qs 9h 7c"),  # a pair beats high card
        ("Ac Kd Qs Jh 2c", "Ac Ad Ks Qh 2d"),  # A-K-Q-J is a straight
        ("Ac Kd Qs 9h 2c", "Ad Kc Qh 8s 7c"),  # the four best cards, card by card
    ],
)
def test_order_of_hands(better, worse):
    v = fcfhands.value5(np.array([_hand(better), _hand(worse)]))
    assert v[0] > v[1]


def test_wrap_is_nothing_and_fifth_card_never_counts():
    v = fcfhands.value5(
        np.array(
            [
                _hand("Qs Kd Ah 2c 7d"),
                _hand("Ac Kd Qh 7s 2d"),
                _hand("Ac Kd Qh 7s 3d"),
                _hand("Ad Kc Qs 7h 2c"),
            ]
        )
    )
    assert fcfhands.category(v[0]) == 0  # Q-K-A-2 does not wrap
    assert v[1] == v[2] == v[3]  # the fifth card and suits never break a tie


def test_evaluator_orders_hands_like_the_oracle_and_the_firmware():
    rng = random.Random(7)
    hands = np.array([sorted(rng.sample(range(52), 5)) for _ in range(3000)])
    mine = fcfhands.value5(hands)
    oracle = np.array([naive.value(h) for h in hands.tolist()])
    fw = np.array([firmware_fcf.value(h) for h in hands.tolist()])
    assert np.array_equal(oracle, fw)
    o = np.lexsort((fw, mine))  # same order and the same ties
    assert np.all(np.diff(fw[o]) >= 0)
    assert np.array_equal(np.diff(mine[o]) == 0, np.diff(fw[o]) == 0)
    assert np.array_equal(fcfhands.opens(mine), [firmware_fcf.dealer_opens(int(x)) for x in fw])


def _brute(deck, value):
    """Per hand of the deck: (value, #D disjoint below, <=, below OPEN), by looking at all D."""
    hands = deck[combin.subsets(len(deck), 5)]
    v = value(hands)
    bits = (np.int64(1) << hands).sum(axis=1)
    out = []
    for i in range(len(hands)):
        other = v[(bits & bits[i]) == 0]
        out.append(
            (v[i], (other < v[i]).sum(), (other <= v[i]).sum(), (other < fcfhands.OPEN).sum())
        )
    return hands, out  # 15,504 hands of a 20-card deck: about a second


@pytest.mark.parametrize("ranks", [(0, 1, 2, 3, 12), (9, 10, 11, 12, 0)])
def test_disjoint_counts_equal_brute_force_on_a_small_deck(ranks):
    deck = np.array([r * 4 + s for r in ranks for s in range(4)], dtype=np.int64)
    classes = disjoint.Classes(deck)
    values, lt, le, below = disjoint.counts(classes, fcfhands.value5)
    under = below(fcfhands.OPEN)
    hands, expect = _brute(deck, fcfhands.value5)
    idx = classes.index(hands)
    got = list(zip(values[idx], lt[idx], le[idx], under[idx]))
    assert got == expect


@pytest.fixture(scope="module")
def model():
    return fcf.model()


def test_category_counts_are_the_reference_figures(model):
    # reference-figures.md 2.1-2.2 (two independent programs there)
    assert len(model.weight) == 134459 and model.weight.sum() == 2598960
    counts = np.bincount(model.cat, weights=model.weight).astype(int).tolist()
    assert counts == [1150080, 1047552, 123552, 101808, 114616, 58656, 2072, 624]
    assert model.weight[model.royal].sum() == 192
    assert model.weight[fcfhands.opens(model.value)].sum() == 2202480
    assert model.weight[model.three].sum() == 482424
    bonus = fcf.bonus_counts(model)
    assert sum(v for k, v in bonus.items() if k) == 401328


def test_prime_and_all_six_are_the_reference_figures():
    prime = fcfside.prime_counts()
    assert prime["four_one_colour"] == 777400 and prime["five_one_colour"] == 131560
    assert sum(prime.values()) == 2598960
    six = fcfside.all_six_counts()  # reference-figures.md 3 ("wheel allowed", Alspach 1.2)
    assert six == {
        "six_card_royal_flush": 4,
        "royal_flush": 184,
        "straight_flush": 1656,
        "four_of_a_kind": 14664,
        "full_house": 165984,
        "flush": 205792,
        "straight": 361620,
        "three_of_a_kind": 732160,
        None: 18876456,
    }


def test_prime_closed_form_equals_counting_colours():
    hands = combin.subsets(52, 5)
    red = ((hands & 3) % 3 != 0).sum(axis=1)  # d (1) and h (2) are red
    n = np.bincount(red, minlength=6)
    prime = fcfside.prime_counts()
    assert n[0] + n[5] == prime["five_one_colour"] and n[1] + n[4] == prime["four_one_colour"]


def test_per_class_counts_equal_brute_force_for_sample_hands(model):
    # a sample of player hands against all 1,533,939 dealer hands each, counted directly
    hands = combin.subsets(52, 5)
    v = fcfhands.value5(hands)
    bits = (np.int64(1) << hands.astype(np.int64)).sum(axis=1)
    rng = np.random.default_rng(11)
    for i in rng.choice(len(hands), 12, replace=False):
        other = v[(bits & bits[i]) == 0]
        assert len(other) == fcf.N_DEALER
        c = model.classes.index(hands[i : i + 1])[0]
        closed = other < fcfhands.OPEN
        assert model.value[c] == v[i]
        assert (model.win[c], model.tie[c], model.lose[c]) == (
            (other < v[i]).sum(),
            (other == v[i]).sum(),
            (other > v[i]).sum(),
        )
        assert (model.nwin[c], model.ntie[c], model.nlose[c]) == (
            (closed & (other < v[i])).sum(),
            (closed & (other == v[i])).sum(),
            (closed & (other > v[i])).sum(),
        )


def test_wins_balance_losses_and_closed_dealers_add_up(model):
    w = model.weight
    assert (w * model.win).sum() == (w * model.lose).sum()  # (P, D) and (D, P) alike
    assert (w * (model.nwin + model.ntie + model.nlose)).sum() == 396480 * fcf.N_DEALER
    assert ((model.win + model.tie + model.lose) == fcf.N_DEALER).all()


def _rules(ties="player", rw="compare"):
    return {"ties": ties, "raise_when_dealer_not_open": rw}


def test_strategy_is_each_hands_best_decision(model):
    g = fcf.Main(model, paytable.load("fcf-public-1"), _rules())
    folds = g.mult == 0
    assert (g.ante + g.odds + g.rz <= g.fold)[folds].all()
    raised = ~folds
    assert (g.ante + g.odds + g.mult * g.rz > g.fold)[raised].all()
    assert (g.mult[raised & model.three & (g.rz > 0)] == 3).all()
    assert not (model.three == False)[g.mult == 3].any()  # noqa: E712 (3x only where allowed)
    counts = {r: int(model.weight[g.mult == r].sum()) for r in (0, 1, 3)}
    assert counts == {0: 609996, 1: 1506540, 3: 482424}


def test_variants_move_the_figures_the_expected_way(model):
    t = paytable.load("fcf-public-1")
    base = fcf.Main(model, t, _rules())
    push = fcf.Main(model, t, _rules(ties="push"))
    win = fcf.Main(model, t, _rules(rw="win"))

    def ret(g):
        return sum(sum(c * p for _, c, p in rows) for rows in g.outcomes().values())

    assert ret(push) < ret(base)  # a pushed tie costs the player
    # every hand worth raising beats every dealer hand that does not open, so the Raise
    # that always wins then changes nothing under the best strategy
    assert ret(win) == ret(base)
    assert all(
        n.endswith("dealer does not open") == (p > 0)
        for n, _, p in win.outcomes()["raise"]
        if "does not open" in n
    )
    for g in (base, push, win):
        for rows in g.outcomes().values():
            assert sum(c for _, c, _ in rows) == fcf.N_PAIRS


def test_missing_odds_category_loses_like_the_engine(model):
    doc = paytable.preset("fcf-public-1")
    del doc["odds"]["straight"]
    g = fcf.Main(model, paytable.validate(doc), _rules())
    rows = dict((n, p) for n, _, p in g.outcomes()["odds"])
    assert rows["straight, beats or ties the dealer"] == -1  # docs/engine.md: does not pay


def test_a_deck_without_suit_symmetry_is_refused_not_miscounted():
    # the class trick needs every rank in all four suits: without it the weighted counts do
    # not divide by the class sizes, and counts() says so instead of returning wrong numbers
    deck = np.array([r * 4 + s for r in (0, 1, 2, 3, 12) for s in range(4)][:-1])
    with pytest.raises(ArithmeticError):
        values, lt, le, below = disjoint.counts(disjoint.Classes(deck), fcfhands.value5)
        below(fcfhands.OPEN)
