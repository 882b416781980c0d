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

All functions take a sequence of 7 distinct card ids (trusted); only the flush's cards are
allocated (a list and its pair with the straight flush).
"""
from micropython import const

from shoe.games.vocab import HCF

GAME = HCF
_SHIFT = const(13)
_RANKS = const(0x1FFF)
_NINE = const(1 << 7)  # rank 7 = nine

# The three viper functions in the frozen image (machine ints; the suits' rank masks
# are four locals, not a list): written so that CPython, the unix port and a .mpy deploy run the
# same source as plain Python with the same results (small non-negative ints only; int() is a
# no-op there). A 13-bit popcount is the usual bit trick.


# clause: rules:2.1-flush, rules:2.1-compare
# frozen: @micropython.viper
def flush_value(hand) -> int:
    """length << 13 | mask of the hand's flush (the best suit)."""
    m0 = 0
    m1 = 0
    m2 = 0
    m3 = 0
    for x in hand:
        c = int(x)
        b = 1 << (c >> 2)
        s = c & 3
        if s == 0:
            m0 |= b
        elif s == 1:
            m1 |= b
        elif s == 2:
            m2 |= b
        else:
            m3 |= b
    best = 0
    s = 0
    while s < 4:
        m = m0 if s == 0 else m1 if s == 1 else m2 if s == 2 else m3
        k = m - ((m >> 1) & 0x5555)
        k = (k & 0x3333) + ((k >> 2) & 0x3333)
        k = (k + (k >> 4)) & 0x0F0F
        v = ((k + (k >> 8)) & 0x1F) << _SHIFT | m
        if v > best:
            best = v
        s += 1
    return best


# frozen: @micropython.viper
def flush_suit(hand) -> int:
    """The suit (0..3) holding the flush; the lowest suit when two suits are identical in rank."""
    m0 = 0
    m1 = 0
    m2 = 0
    m3 = 0
    for x in hand:
        c = int(x)
        b = 1 << (c >> 2)
        s = c & 3
        if s == 0:
            m0 |= b
        elif s == 1:
            m1 |= b
        elif s == 2:
            m2 |= b
        else:
            m3 |= b
    best = 0
    suit = 0
    s = 0
    while s < 4:
        m = m0 if s == 0 else m1 if s == 1 else m2 if s == 2 else m3
        k = m - ((m >> 1) & 0x5555)
        k = (k & 0x3333) + ((k >> 2) & 0x3333)
        k = (k + (k >> 4)) & 0x0F0F
        v = ((k + (k >> 8)) & 0x1F) << _SHIFT | m
        if v > best:
            best = v
            suit = s
        s += 1
    return suit


def length(v):
    return v >> _SHIFT


# clause: rules:2.2-dealer-qualifies
def qualifies(v):
    """Dealer: a 3-card flush whose highest card is 9 or more, or any flush of 4 or more."""
    n = v >> _SHIFT
    return n >= 4 or (n == 3 and (v & _RANKS) >= _NINE)


# clause: rules:2.1-straight-flush
# frozen: @micropython.viper
def straight_flush(hand) -> int:
    """Length (3..7) of the longest straight flush, 0 if none."""
    m0 = 0
    m1 = 0
    m2 = 0
    m3 = 0
    for x in hand:
        c = int(x)
        b = 1 << (c >> 2)
        s = c & 3
        if s == 0:
            m0 |= b
        elif s == 1:
            m1 |= b
        elif s == 2:
            m2 |= b
        else:
            m3 |= b
    return int(_run(m0, m1, m2, m3))


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
def flush_cards(hand, v):
    """The flush's card ids, high to low (`v`: the hand's flush_value)."""
    return flush_and_straight(hand, v)[0]


def flush_and_straight(hand, v):
    """(flush_cards(hand, v), straight_flush(hand)) from one pass over the hand (`v`: the
    hand's flush_value)."""
    return flush_names(hand, hand, v)


# frozen: @micropython.viper
def flush_names(hand, names, v: int):
    """(the names of the flush's cards high to low, straight_flush(hand)): names[i] is the
    name of hand[i] (a seat's settlement reports its input's own strings; names = hand gives
    the ids). The flush suit is the lowest whose rank mask is v's (flush_suit: the lowest suit
    of the best value; equal masks are equal values)."""
    m0 = 0
    m1 = 0
    m2 = 0
    m3 = 0
    for x in hand:
        c = int(x)
        b = 1 << (c >> 2)
        s = c & 3
        if s == 0:
            m0 |= b
        elif s == 1:
            m1 |= b
        elif s == 2:
            m2 |= b
        else:
            m3 |= b
    f = v & _RANKS
    suit = 0 if m0 == f else 1 if m1 == f else 2 if m2 == f else 3
    lo = 0  # the hand index of the flush card of rank r: 3 bits at 3r (r < 7) ...
    hi = 0  # ... or at 3(r - 7)
    i = 0
    for x in hand:
        c = int(x)
        if c & 3 == suit:
            r = c >> 2
            if r < 7:
                lo |= i << (3 * r)
            else:
                hi |= i << (3 * (r - 7))
        i += 1
    out = []
    r = 12
    while f:
        if (f >> r) & 1:
            i = (lo >> (3 * r)) & 7 if r < 7 else (hi >> (3 * (r - 7))) & 7
            out.append(names[i])
            f ^= 1 << r
        r -= 1
    return out, _run(m0, m1, m2, m3)


# frozen: @micropython.viper
def _run(m0: int, m1: int, m2: int, m3: int) -> int:
    """The longest run in the four suits' rank masks, 0 under 3 (straight_flush)."""
    best = 0
    s = 0
    while s < 4:
        m = m0 if s == 0 else m1 if s == 1 else m2 if s == 2 else m3
        e = (m << 1) | (m >> 12)
        n = 0
        while e:
            e &= e >> 1
            n += 1
        if n > best:
            best = n
        s += 1
    return best if best >= 3 else 0
