"""Four Card Frenzy hand values for the par sheets, vectorized with numpy and written apart from
the firmware's evaluator (shoe.games.fcf) so that the par sheet checks the engine instead of
repeating it (rules.md 1.2).

Cards are ids rank * 4 + suit (rank 0 = deuce .. 12 = ace), the notation of rules.md. A value
is one int; a larger value is a better hand, equal values tie:

    value = category * 13**4 + tie-break, tie-break = the deciding ranks as base-13 digits
    category 0 high_card 1 pair 2 two_pair 3 straight 4 flush 5 three_of_a_kind
             6 straight_flush 7 four_of_a_kind

The best four of five is the largest value of its five four-card subsets.
"""

import numpy as np

CATEGORIES = (
    "high_card",
    "pair",
    "two_pair",
    "straight",
    "flush",
    "three_of_a_kind",
    "straight_flush",
    "four_of_a_kind",
)
BASE = 13**4
ROYAL = 6 * BASE + 12  # A-K-Q-J suited: a straight flush whose top card is the ace
OPEN = 11 * 13**3 + 2 * 13**2 + 1 * 13  # K-4-3-2: the lowest hand the dealer opens with


def value4(a, b, c, d, sa, sb, sc, sd):
    """Values of four-card hands given as ranks a >= b >= c >= d (int arrays) and their suits."""
    flush = (sa == sb) & (sb == sc) & (sc == sd)
    e1, e2, e3 = a == b, b == c, c == d
    equal = e1.astype(np.int8) + e2 + e3
    distinct = equal == 0
    wheel = distinct & (a == 12) & (b == 2)  # A-4-3-2 (distinct, so c, d are 3 and 2): top 4
    run = distinct & ((a - d == 3) | wheel)
    top = np.where(wheel, 2, a)
    cat = np.zeros(len(a), dtype=np.int64)
    tb = ((a * 13 + b) * 13 + c) * 13 + d  # high card and flush: card by card
    one = equal == 1  # one pair
    pair = np.where(e1, a, np.where(e2, b, c))
    kick = np.where(e1, c, a) * 13 + np.where(e3, b, d)
    np.copyto(cat, 1, where=one)
    np.copyto(tb, pair * 169 + kick, where=one)
    two = e1 & e3 & ~e2
    np.copyto(cat, 2, where=two)
    np.copyto(tb, a * 13 + c, where=two)
    np.copyto(cat, 3, where=run)
    np.copyto(tb, top, where=run)
    np.copyto(cat, 4, where=flush & ~run)
    trips = (equal == 2) & ~two
    np.copyto(cat, 5, where=trips)
    np.copyto(tb, b * 13 + np.where(e1, d, a), where=trips)
    np.copyto(cat, 6, where=run & flush)
    quads = equal == 3
    np.copyto(cat, 7, where=quads)
    np.copyto(tb, a, where=quads)
    return cat * BASE + tb


def value5(cards):
    """Best four of five: card ids of shape (N, 5) -> int64 values (N,)."""
    cards = -np.sort(-np.asarray(cards, dtype=np.int64), axis=1)  # rank (then suit) high to low
    ranks = [cards[:, j] >> 2 for j in range(5)]
    suits = [cards[:, j] & 3 for j in range(5)]
    best = None
    for drop in range(5):
        keep = [j for j in range(5) if j != drop]
        v = value4(*[ranks[j] for j in keep], *[suits[j] for j in keep])
        best = v if best is None else np.maximum(best, v)
    return best


def category(values):
    return np.asarray(values) // BASE


def opens(values):
    """The dealer opens: pair or better, or king high or better."""
    return np.asarray(values) >= OPEN
