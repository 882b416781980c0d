"""A faster `value5` for CPython (the host tools): one dict lookup per hand.

Only shoe.games.fcf imports this, and only when it is not running on MicroPython: on the device
a dict of this size would not fit, and the table-free evaluator runs there. The table maps a
rank multiset to the value of shoe.games.fcf.value5_arith:

    key = sum(5 ** rank << 12) + suit counters     a rank occurs at most 4 times, so the
                                                   base-5 digits are unique; the low 12 bits
                                                   are the 3-bit suit counters of fcf._V

Built at import from value5_arith itself (6,175 entries, about 10 ms) and proved equal to it
on all C(52,5) hands by tests/engine/test_counts.py.
"""
import itertools

_FLUSH_BITS = 0x924  # bit 2 of each 3-bit suit counter
_W = tuple((5 ** (c >> 2)) << 12 | 1 << 3 * (c & 3) for c in range(52))


def install(value5_arith, flush4):
    """Build the table and return the fast value5(a, b, c, d, e)."""
    table = {}
    for ranks in itertools.combinations_with_replacement(range(13), 5):
        if ranks[0] == ranks[4]:
            continue  # five of a rank: not in a deck
        hand = [r * 4 + i % 4 for i, r in enumerate(ranks)]  # suits round-robin: no flush
        table[sum(5 ** r for r in ranks)] = value5_arith(*hand)
    w = _W

    def value5(a, b, c, d, e):
        k = w[a] + w[b] + w[c] + w[d] + w[e]
        if k & _FLUSH_BITS:  # four or five of a suit: the flush path of the evaluator
            return flush4(a, b, c, d, e, (k & 0xFFF) << 15)
        return table[k >> 12]

    return value5
