"""Unshuffled-deck detector: quiet on shuffles, loud on ordered, riffled-once and repeated decks.
(The 100,000-shuffle figures are measured by bench/bench_shuffle.py.)"""

import random

import pytest

from shoe.deck.shuffle_check import ShuffleCheck, limit, neighbours, stats
from tests.firmware.table.helpers import shuffled

NEW_DECK = [s + 4 * r for s in (3, 1) for r in range(13)] + [
    s + 4 * r for s in (0, 2) for r in range(12, -1, -1)
]  # Bicycle-style order


def riffle(deck, rng):
    cut = sum(rng.random() < 0.5 for _ in range(52))
    a, b = deck[:cut], deck[cut:]
    out = []
    while a or b:
        if rng.random() < len(a) / (len(a) + len(b)):
            out.append(a.pop(0))
        else:
            out.append(b.pop(0))
    return out


def test_neighbours():
    assert neighbours(0, 1)  # 2c 2d same rank
    assert neighbours(0, 4)  # 2c 3c
    assert neighbours(48, 0)  # Ac 2c
    assert not neighbours(0, 5)  # 2c 3d


def test_limit_is_a_tail_bound():
    assert limit(51, 5 / 51) > 10
    assert limit(9, 5 / 51) <= 9


@pytest.mark.clause("rules:3-unshuffled")
def test_quiet_on_random_shuffles():
    sc = ShuffleCheck()
    for seed in range(2000):
        for n in (10, 35, 52):
            assert sc.check(shuffled(seed, n)) is None


@pytest.mark.clause("rules:3-unshuffled")
@pytest.mark.parametrize("n", (10, 15, 35, 52))
def test_new_deck_order_and_reversed(n):
    sc = ShuffleCheck()
    assert sc.check(NEW_DECK[:n])["stat"] in ("adjacent", "window", "run")
    assert sc.check(list(reversed(NEW_DECK))[:n]) is not None
    assert sc.check(list(range(52))[:n]) is not None


@pytest.mark.clause("rules:3-unshuffled")
def test_riffle_once_of_new_deck_order():
    rng = random.Random(3)
    sc = ShuffleCheck()
    hits = sum(sc.check(riffle(NEW_DECK, rng)) is not None for _ in range(200))
    assert hits >= 195


@pytest.mark.clause("rules:1.1-shuffle")
def test_repeated_deck_even_after_a_cut():
    sc = ShuffleCheck()
    d = shuffled(8)
    assert sc.check(d) is None
    sc.remember(d)
    assert sc.check(d)["stat"] == "repeat"
    assert sc.check(d[17:] + d[:17])["stat"] == "repeat"
    assert sc.check(shuffled(9)) is None
    for s in range(10, 14):  # pushed out after KEEP rounds
        sc.remember(shuffled(s))
    assert sc.check(d) is None


def test_short_sequences_are_not_judged():
    assert ShuffleCheck().check(list(range(7))) is None


def test_state_round_trip():
    sc = ShuffleCheck()
    sc.remember(shuffled(1))
    sc.remember(shuffled(2)[:20])
    sc2 = ShuffleCheck.from_state(sc.to_state())
    assert sc2.to_state() == sc.to_state()
    assert sc2.check(shuffled(1))["stat"] == "repeat"


def test_stats():
    a, w, r = stats(list(range(0, 52, 4)))  # 2c 3c ... Ac
    assert a == 12 and r == 12
