"""High Card Flush hands (rules.md 2.1): the flush, its comparison, the longest straight flush.

A hand's flush *value* is one small int; larger is better, equal values tie:

    value = length << 13 | mask      length 2..7, mask = the flush suit's ranks (bit r = rank r)

Two masks with the same number of bits compare like their cards, high to low, so the value
orders flush length first, then the flush cards card by card; off-suit cards never count. The
flush is the suit with the largest value, which also settles two suits of equal length.

Straight flush: the longest run of consecutive ranks in one suit, ace high or low (A-2-3 counts),
no wrap. The suit mask is widened to 14 bits with the ace copied below the deuce,

    bit 13 12 ... 1  0
        A  K  ... 2  A(low)

and the run length is the number of `e &= e >> 1` steps until e is 0. A run of 1 or 2 is not a
straight flush: `straight_flush()` reports 0 then.

All functions take a sequence of 7 distinct card ids (trusted) and allocate nothing.
"""
from micropython import const

from shoe.games.vocab import HCF

GAME = HCF
_SHIFT = const(13)
_RANKS = const(0x1FFF)
_NINE = const(1 << 7)  # rank 7 = nine

_masks = [0, 0, 0, 0]  # preallocated per-suit rank masks (one hand at a time)
# popcount of 7-bit values; a 13-bit mask is two lookups
_POP = bytes(bin(i).count("1") for i in range(128))


# frozen: @micropython.native
def _fill(hand):
    ms = _masks
    ms[0] = ms[1] = ms[2] = ms[3] = 0
    for c in hand:
        ms[c & 3] |= 1 << (c >> 2)
    return ms


# clause: rules:2.1-flush, rules:2.1-compare
# frozen: @micropython.native
def flush_value(hand):
    """length << 13 | mask of the hand's flush (the best suit)."""
    ms = _fill(hand)
    pop = _POP
    best = 0
    for s in range(4):
        m = ms[s]
        v = (pop[m & 127] + pop[m >> 7]) << _SHIFT | m
        if v > best:
            best = v
    return best


# frozen: @micropython.native
def flush_suit(hand):
    """The suit (0..3) holding the flush; the lowest suit when two suits are identical in rank."""
    ms = _fill(hand)
    pop = _POP
    best = 0
    suit = 0
    for s in range(4):
        m = ms[s]
        v = (pop[m & 127] + pop[m >> 7]) << _SHIFT | m
        if v > best:
            best = v
            suit = s
    return suit


def length(v):
    return v >> _SHIFT


# clause: rules:2.2-dealer-qualifies
def qualifies(v):
    """Dealer: a 3-card flush whose highest card is 9 or more, or any flush of 4 or more."""
    n = v >> _SHIFT
    return n >= 4 or (n == 3 and (v & _RANKS) >= _NINE)


# clause: rules:2.1-straight-flush
# frozen: @micropython.native
def straight_flush(hand):
    """Length (3..7) of the longest straight flush, 0 if none."""
    return _longest(_fill(hand))


# frozen: @micropython.native
def _longest(ms):
    best = 0
    for s in range(4):
        m = ms[s]
        e = (m << 1) | (m >> 12)
        n = 0
        while e:
            e &= e >> 1
            n += 1
        if n > best:
            best = n
    return best if best >= 3 else 0


# clause: rules:2.2-raise-caps
def raise_multiples(v):
    """Allowed Raise multiples of the Ante: flush 2-4 -> 1; 5 -> 1, 2; 6-7 -> 1, 2, 3."""
    n = v >> _SHIFT
    if n >= 6:
        return (1, 2, 3)
    if n == 5:
        return (1, 2)
    return (1,)


# clause: rules:2.1-flush
# frozen: @micropython.native
def flush_cards(hand, v):
    """The flush's card ids, high to low (`v`: the hand's flush_value)."""
    return _suited(_fill(hand), v)


# frozen: @micropython.native
def flush_and_straight(hand, v):
    """(flush_cards(hand, v), straight_flush(hand)) from one pass over the hand (a seat's
    settlement needs both; `v`: the hand's flush_value)."""
    ms = _fill(hand)
    return _suited(ms, v), _longest(ms)


# frozen: @micropython.native
def _suited(ms, v):
    # The flush suit is the lowest whose rank mask is v's (flush_suit: the lowest suit of the
    # best value; equal masks are equal values); its ranks read from the ace down.
    m = v & _RANKS
    suit = 0 if ms[0] == m else 1 if ms[1] == m else 2 if ms[2] == m else 3
    out = []
    r = 12
    while m:
        if m >> r & 1:
            out.append(r << 2 | suit)
            m ^= 1 << r
        r -= 1
    return out
