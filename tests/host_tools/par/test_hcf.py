"""High Card Flush par mathematics: every counting method against brute force on a small deck
(5 ranks, 4-card hands), the reference and published figures on the real deck, and the proof
that the strategy is each hand's best (host_tools/par, docs/par.md)."""

import itertools
import random
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from host_tools.par import combin, hcf, hcfhand, hcfmain, hcfsheet

R, C = 5, 4  # the small deck: 5 ranks x 4 suits, hands of 4 cards
SMALL_Q = (2, 0b100)  # a small "qualifier": a 2-card flush with rank 2 on top


@pytest.fixture(scope="module")
def small():
    """Every 4-card hand of the 20-card deck: value, longest run, length, card bits."""
    pop, val, run = hcf.suit_tables(R)
    hands = combin.subsets(4 * R, C).astype(np.int64)  # card id = rank * 4 + suit
    t = (np.int64(1) << (R * (hands & 3) + (hands >> 2))).sum(axis=1)
    masks = np.stack([(t >> (R * s)) & ((1 << R) - 1) for s in range(4)])
    bits = (np.int64(1) << hands).sum(axis=1)
    return {
        "v": val[masks].max(axis=0),
        "run": run[masks].max(axis=0),
        "len": pop[masks].max(axis=0),
        "bits": bits,
        "masks": masks.T,
        "n": len(hands),
    }


def test_distributions_equal_brute_force_on_a_small_deck(small):
    assert hcf.flush_lengths(R, C) == {
        k: int(n) for k, n in enumerate(np.bincount(small["len"])) if n
    }
    assert hcf.sf_runs(R, C) == {k: int(n) for k, n in enumerate(np.bincount(small["run"])) if n}
    joint = {}
    for a, b in zip(small["len"].tolist(), small["run"].tolist()):
        joint[a, b] = joint.get((a, b), 0) + 1
    assert hcf.joint(R, C) == joint
    assert hcf.not_qualifying(SMALL_Q, R, C) == int((small["v"] < hcf.value(*SMALL_Q, R)).sum())


def test_pair_counts_equal_brute_force_on_a_small_deck(small):
    v, bits = small["v"], small["bits"]
    disjoint = ((bits[:, None] & bits[None, :]) == 0).astype(np.float64)  # exact < 2**53
    values = sorted(set(v.tolist())) + [hcf.value(3, 0b100, R), hcf.value(2, 0b1, R)]
    rng = random.Random(3)
    queries = []
    for _ in range(40):
        x, y = rng.choice(values), rng.choice(values)
        queries.append(
            (
                (x >> R, x & 31, rng.random() < 0.5),
                (y >> R, y & 31, rng.random() < 0.5) if rng.random() < 0.9 else hcfmain.INF,
            )
        )
    got = hcfmain.pair_counts(queries, R, C)
    for ((xl, xm, xs), y), n in zip(queries, got):
        x = hcf.value(xl, xm, R)
        pl = v < x if xs else v <= x
        if y is hcfmain.INF:
            dl = np.ones(len(v), dtype=bool)
        else:
            yv = hcf.value(y[0], y[1], R)
            dl = v < yv if y[2] else v <= yv
        assert n == int(pl.astype(np.float64) @ (disjoint @ dl.astype(np.float64)))


def test_game_counts_equal_brute_force_on_a_small_deck(small):
    g = hcfmain.Game(R, C, SMALL_Q)
    v, bits = small["v"], small["bits"]
    q = hcf.value(*SMALL_Q, R)
    for i, x in enumerate(g.x.tolist()):
        players = np.flatnonzero(v == x)
        nq = win = tie = lose = 0
        for p in players:
            d = v[(bits & bits[p]) == 0]
            qual = d >= q
            nq += (~qual).sum()
            win += (qual & (d < x)).sum()
            tie += (qual & (d == x)).sum()
            lose += (qual & (d > x)).sum()
        assert (g.hands[i], g.nq[i], g.win[i], g.tie[i], g.lose[i]) == (
            len(players),
            nq,
            win,
            tie,
            lose,
        ), x


def test_hand_counts_equal_brute_force_on_a_small_deck(small):
    v, bits = small["v"], small["bits"]
    q = hcf.value(*SMALL_Q, R)
    for p in range(0, small["n"], 401):
        d = v[(bits & bits[p]) == 0]
        x, nq, lt, le, n = hcf.hand_counts(small["masks"][p].tolist(), SMALL_Q, R, C)
        assert (x, nq, lt, le, n) == (v[p], (d < q).sum(), (d < x).sum(), (d <= x).sum(), len(d))


def test_distributions_are_the_reference_figures():
    # reference-figures.md 4.1-4.3 (a C enumeration and a second method there)
    assert hcf.flush_lengths() == {
        2: 24676704,
        3: 78881088,
        4: 26137540,
        5: 3814668,
        6: 267696,
        7: 6864,
    }
    assert hcf.sf_runs() == {
        1: 52438672,
        2: 71985176,
        3: 8642932,
        4: 676196,
        5: 39960,
        6: 1592,
        7: 32,
    }
    j = hcf.joint()
    assert [j.get((7, b), 0) for b in range(1, 8)] == [0, 1272, 3020, 1704, 648, 188, 32]
    assert [j.get((4, b), 0) for b in range(1, 8)] == [5631080, 16434592, 3669752, 402116, 0, 0, 0]
    assert [j.get((2, b), 0) for b in range(1, 8)] == [14280500, 10396204, 0, 0, 0, 0, 0]


def test_published_figures_dealer_qualifies_and_flush_bonus():
    # "the dealer qualifies 75.36 % of the time" (worldcasinoindex.com, reference 4.3)
    nq = hcf.not_qualifying()
    assert nq == 32959524
    assert "%.2f" % (100 * (1 - nq / comb(52, 7))) == "75.36"
    lengths = hcf.flush_lengths()
    n = comb(52, 7)

    def edge(pays):
        won = sum(lengths[k] * p for k, p in pays.items())
        lost = n - sum(lengths[k] for k in pays)
        return -Fraction(won - lost, n)

    # Flush Bonus 300/100/10/1: "a house edge of about 8 %" (reference 4.4: 7.8072 %)
    assert "%.4f" % (100 * edge({7: 300, 6: 100, 5: 10, 4: 1})) == "7.8072"
    assert round(float(edge({7: 300, 6: 100, 5: 10, 4: 1})) * 100) == 8
    assert "%.4f" % (100 * edge({7: 100, 6: 20, 5: 10, 4: 2})) == "5.3038"


@pytest.fixture(scope="module")
def main():
    return hcfsheet.main()


def test_main_game_counts_and_published_rates(main):
    g = main.g
    assert g.hands.sum() == comb(52, 7) and g.total.sum() == comb(52, 7) * comb(45, 7)
    assert (g.win.sum() + g.tie.sum() + g.lose.sum() + g.nq.sum()) == g.total.sum()
    # the per-value strategy is Mousseau's: raise 3-card flushes T-8-6 or better, 4+ max
    three = g.length == 3
    names = [hcfsheet._mask_name(int(m)) for m in g.mask[three & (g.mult > 0)]]
    assert min(zip(g.x[three & (g.mult > 0)], names))[1] == "T-8-6"
    assert set(g.mult[g.length == 2]) == {0} and set(g.mult[g.length >= 4]) == set(
        hcfmain.raise_caps(4)
    ) | {2, 3}
    # "you will call 67.86 % of the time ... a 0.08 % chance the dealer will push"
    # (worldcasinoindex.com): the hand-by-hand strategy
    n = comb(52, 7)
    assert "%.2f" % (100 * (n - main.hands[0]) / n) == "67.86"
    ties = sum(int(main.by[r][2]) for r in main.by)
    assert "%.2f" % (100 * ties / g.total.sum()) == "0.08"


def test_raises_equals_the_direct_generating_function():
    rng = random.Random(9)
    seen = 0
    while seen < 120:
        cards = rng.sample(range(52), 7)
        m = hcf.masks_of(cards)
        flush = max(m, key=lambda s: (bin(s).count("1"), s))
        if bin(flush).count("1") != 3 or not 256 <= flush < 512:  # ten-high
            continue
        seen += 1
        x, nq, lt, le, n = hcf.hand_counts(m)
        assert hcfhand.raises(m) == (nq + 2 * ((lt - nq) - (n - le)) > -n)


def _max_over_patterns(total_other, longest, fn):
    """max of fn(sizes) over the player's suit sizes: one suit `longest`, the others
    holding total_other cards, none longer than `longest`."""
    best = None
    for rest in itertools.product(range(longest + 1), repeat=3):
        if sum(rest) == total_other:
            val = fn((longest,) + rest)
            best = val if best is None else max(best, val)
    return best


def _coeff(sizes, k):
    """Dealer hands (7 of the 45 cards the player's suit sizes leave) with every suit <= k."""
    acc = [1] + [0] * 7
    for s in sizes:
        a = 13 - s
        poly = [comb(a, j) if j <= k else 0 for j in range(8)]
        acc = [sum(acc[i] * poly[n - i] for i in range(n + 1)) for n in range(8)]
    return acc[7]


@pytest.mark.slow
def test_the_strategy_is_every_hands_best():
    n = comb(45, 7)
    # three-card flushes: every hand of every flush, exactly: only ten-high ones mix
    pop = hcf.suit_tables()[0]
    for flush in np.flatnonzero(pop == 3).tolist():
        s = hcfhand.split(flush)
        top = flush.bit_length() - 1
        if top == 8:
            assert s["raised"] and s["folded"]
        else:
            assert s["raised" if top < 8 else "folded"] == 0, hcfsheet._mask_name(flush)
    # two-card flushes lose to every qualifying dealer: raise only if nq > n / 3; the most
    # non-qualifying dealers any such hand leaves (by its low cards 2..8 per suit):
    best = 0
    for lows in itertools.product(range(3), range(3), range(3), range(2)):
        acc = [1] + [0] * 7
        for size, low in zip((2, 2, 2, 1), lows):
            a = 13 - size
            poly = [1, a, comb(a, 2), comb(7 - low, 3)] + [0] * 4
            acc = [sum(acc[i] * poly[k - i] for i in range(k + 1)) for k in range(8)]
        best = max(best, acc[7])
    assert 3 * best < n
    # four-card flushes: raising beats folding if the dealer holds a 4+ flush less than
    # half the time (EV >= 2n - nq - 4 * D4 > -n); then five and more: the Raise itself
    # wins (W - L >= n - D(<=3) - 2 * D(>=L) > 0), so the maximum is best
    d4 = _max_over_patterns(3, 4, lambda z: n - _coeff(z, 3))
    assert 2 * d4 < n
    for length in (5, 6, 7):
        low = _max_over_patterns(7 - length, length, lambda z: _coeff(z, 3))
        high = _max_over_patterns(
            7 - length, length, lambda z, length=length: n - _coeff(z, length - 1)
        )
        assert n - low - 2 * high > 0


def test_hand_by_hand_counts_must_add_up_to_the_per_flush_counts(main, monkeypatch):
    # the sheet refuses to mix two methods that disagree (here: one dealer hand moved)
    real = hcfhand.split

    def off_by_one(flush):
        s = real(flush)
        nq, lt, le = s["all"]
        return dict(s, all=(nq + 1, lt, le))

    monkeypatch.setattr(hcfmain, "Game", lambda: main.g)
    monkeypatch.setattr(hcfhand, "split", off_by_one)
    with pytest.raises(ArithmeticError):
        hcfsheet.Main()
