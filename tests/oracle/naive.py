"""A deliberately naive Four Card Frenzy evaluator: the reference oracle for tests and benchmarks.

It tries all five four-card subsets and classifies each one by counting ranks and sorting, the
way a person would, and returns the same value encoding as `shoe.games.fcf` (so the two can be
compared hand by hand). Nothing in the engine imports it.
"""

from shoe.games import fcf


def value4(cards):
    """Value of exactly four card ids, in the encoding of shoe.games.fcf."""
    ranks = sorted([c >> 2 for c in cards], reverse=True)
    suits = [c & 3 for c in cards]
    counts = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    groups = sorted([(n, r) for r, n in counts.items()], reverse=True)
    flush = suits.count(suits[0]) == 4
    top = None
    if len(counts) == 4:
        if ranks[0] - ranks[3] == 3:
            top = ranks[0]
        elif ranks == [12, 2, 1, 0]:
            top = 2  # A-2-3-4: the ace plays low
    if groups[0][0] == 4:
        return fcf.FOUR_OF_A_KIND << 26 | 1 << groups[0][1]
    if top is not None:
        run = 1 if top == 2 and ranks[0] == 12 else (1 << (top - 3)) << 1
        return (fcf.STRAIGHT_FLUSH if flush else fcf.STRAIGHT) << 26 | run
    if groups[0][0] == 3:
        return fcf.THREE_OF_A_KIND << 26 | (1 << groups[0][1]) << 13 | 1 << groups[1][1]
    mask = 0
    for r in ranks:
        mask |= 1 << r
    if flush:
        return fcf.FLUSH << 26 | mask
    if groups[0][0] == 2 and groups[1][0] == 2:
        return fcf.TWO_PAIR << 26 | mask
    if groups[0][0] == 2:
        pr = groups[0][1]
        return fcf.PAIR << 26 | (1 << pr) << 13 | (mask & ~(1 << pr))
    return fcf.HIGH_CARD << 26 | mask


def value(hand):
    """Best four of five by trying every four-card subset."""
    best = -1
    for i in range(5):
        v = value4([hand[j] for j in range(5) if j != i])
        if v > best:
            best = v
    return best
