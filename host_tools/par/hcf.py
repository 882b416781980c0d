"""High Card Flush par mathematics by per-suit generating functions (rules.md 2; docs/par.md).

A hand is four rank sets, one per suit. Every property the game asks about is a maximum over
the suits (the flush: the largest (length, ranks) of a suit; the longest straight flush), so
"every suit satisfies s" counts hands with the maximum at most some bound:

    #{7-card hands, every suit's rank set in A} = [z^7] (sum over m in A of z^|m|)^4

and differences of such counts give exact distributions: flush length, longest straight flush,
both jointly, the dealer's qualification. A suit's value is length << 13 | rank mask (bit r =
rank r, 0 = deuce .. 12 = ace): same-length masks compare card by card, high to low.

Everything takes the deck's shape (ranks per suit, cards per hand) as parameters, so that the
tests can check it against brute force on a small deck; the game is ranks=13, cards=7.
"""

from math import comb

import numpy as np

RANKS = 13
CARDS = 7
QUALIFY = (3, 1 << 7)  # the dealer's least qualifying hand: a 3-card flush 9-high (rules.md 2.2)
LENGTHS = ("4", "5", "6", "7")
SF_LENGTHS = ("3", "4", "5", "6", "7")

_tables: dict = {}


def suit_tables(ranks=RANKS):
    """(popcount, value, longest run) of every rank mask of one suit, numpy arrays."""
    t = _tables.get(ranks)
    if t is None:
        masks = np.arange(1 << ranks, dtype=np.int64)
        pop = np.zeros(len(masks), dtype=np.int64)
        for r in range(ranks):
            pop += masks >> r & 1
        # the ace (the top rank) also plays below the deuce: shift in a copy of the top bit
        e = (masks << 1 | masks >> (ranks - 1)) & ((1 << (ranks + 1)) - 1)
        run = np.zeros(len(masks), dtype=np.int64)
        while e.any():
            run += e != 0
            e &= e >> 1
        t = _tables[ranks] = (pop, pop << ranks | masks, run)
    return t


def value(length, mask, ranks=RANKS):
    return length << ranks | mask


def power_coeff(poly, cards=CARDS, suits=4):
    """[z^cards] poly(z)^suits for a coefficient list (exact Python integers)."""
    acc = [1] + [0] * cards
    for _ in range(suits):
        nxt = [0] * (cards + 1)
        for i, a in enumerate(acc):
            if a:
                for j in range(cards + 1 - i):
                    if j < len(poly):
                        nxt[i + j] += a * int(poly[j])
        acc = nxt
    return acc[cards]


def count_hands(select, ranks=RANKS, cards=CARDS):
    """Hands whose every suit's mask m has select[m] true."""
    pop = suit_tables(ranks)[0]
    return power_coeff(np.bincount(pop[select], minlength=cards + 1), cards)


def _distribution(per_suit, ranks, cards):
    """{n: hands whose largest per_suit[mask] over the four suits is n}."""
    out, below = {}, 0
    for n in range(cards + 1):
        upto = count_hands(per_suit <= n, ranks, cards)
        if upto - below:
            out[n] = upto - below
        below = upto
    return out


def flush_lengths(ranks=RANKS, cards=CARDS):
    """{length: hands whose flush has that length}."""
    return _distribution(suit_tables(ranks)[0], ranks, cards)


def sf_runs(ranks=RANKS, cards=CARDS):
    """{run: hands whose longest straight flush (ace high or low) has that length}."""
    return _distribution(suit_tables(ranks)[2], ranks, cards)


def joint(ranks=RANKS, cards=CARDS):
    """{(flush length, longest run): hands}, exact."""
    pop, _, run = suit_tables(ranks)
    upto = {
        (a, b): count_hands((pop <= a) & (run <= b), ranks, cards)
        for a in range(-1, cards + 1)
        for b in range(-1, cards + 1)
    }
    out = {}
    for a in range(cards + 1):
        for b in range(cards + 1):
            n = upto[a, b] - upto[a - 1, b] - upto[a, b - 1] + upto[a - 1, b - 1]
            if n:
                out[a, b] = n
    return out


def not_qualifying(qualify=QUALIFY, ranks=RANKS, cards=CARDS):
    """Hands below the least qualifying value (every suit below it)."""
    v = suit_tables(ranks)[1]
    return count_hands(v < value(*qualify, ranks), ranks, cards)


def masks_of(cards_ids, ranks=RANKS):
    """The four suits' rank masks of one hand given as card ids (rank * 4 + suit)."""
    m = [0, 0, 0, 0]
    for c in cards_ids:
        m[c & 3] |= 1 << (c >> 2)
    return m


def hand_counts(player_masks, qualify=QUALIFY, ranks=RANKS, cards=CARDS):
    """For one player hand (its four suit masks): the dealer's hands from the other cards
    below the least qualifying value, below the player's flush and at most the player's flush:
    (player value, not qualifying, below, at most, all). Exact, per-suit generating functions."""
    pop, val, _ = suit_tables(ranks)
    x = max(int(val[m]) for m in player_masks)
    q = value(*qualify, ranks)

    def count(limit, strict):
        polys = []
        for m in player_masks:
            free = (np.arange(len(pop)) & m) == 0
            ok = free & ((val < limit) if strict else (val <= limit))
            polys.append(np.bincount(pop[ok], minlength=cards + 1))
        acc = np.array([1] + [0] * cards, dtype=object)
        for p in polys:
            acc = np.convolve(acc, p.astype(object))[: cards + 1]
        return int(acc[cards])

    left = ranks * 4 - cards
    return x, count(q, True), count(x, True), count(x, False), comb(left, cards)
