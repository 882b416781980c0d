"""All-Six Bonus hand (rules.md 1.6): the best five-card poker category of six cards.

The seat's five cards plus the All-Six card, standard five-card categories on the best five of
six, ace high or low in a straight (A-2-3-4-5 counts), no wrap. Only the highest category pays:

    six_card_royal_flush  A-K-Q-J-T-9 of one suit
    royal_flush           A-K-Q-J-T of one suit (not a six-card royal)
    straight_flush, four_of_a_kind, full_house, flush, straight, three_of_a_kind

`category(cards6)` returns one of those ids, or None below three of a kind. Not a hot path (one
call per seat with an All-Six wager); it allocates nothing.
"""
from micropython import const

from shoe.games.fcf import _V

_SIX_ROYAL = const(0x1F80)  # 9 T J Q K A
_ROYAL = const(0x1F00)  # T J Q K A
_RANKS = const(0x1FFF)
_SUMS = const(0x7FFF)
_LOW_BITS = const(0x249)  # bit 0 of each 3-bit suit counter


# frozen: @micropython.native
def _run5(m):
    e = (m << 1) | (m >> 12)  # ace copied below the deuce
    return e & (e >> 1) & (e >> 2) & (e >> 3) & (e >> 4)


# clause: 684a.7(d)(4), 684a.11(d)(3), rules:1.6-all-six
# frozen: @micropython.native
def category(cards, extra=-1):
    """Category id of the best five of six card ids (distinct, trusted), or None.
    `extra` (the All-Six card) may be given apart from the seat's five `cards`.

    Same arithmetic as shoe.games.fcf.value5: with the per-card table _V, the sum carries the
    rank sum S and four 3-bit suit counters; m = OR and x = XOR of the rank bits. p = m ^ x
    are the ranks held an even number of times and k = S - m = sum((count - 1) << rank):
      k == p          no trips or quads          p == 0          trips, or two trips (k/2
      k - p == 2q     q in p: quads, else a full house (trips + pair)  has two bits)
    """
    t = m = x = 0
    V = _V
    for c in cards:
        v = V[c]
        t += v
        m |= v
        x ^= v
    if extra >= 0:
        v = _V[extra]
        t += v
        m |= v
        x ^= v
    m &= _RANKS
    x &= _RANKS
    g = t >> 15  # suit counters: a field >= 5 is 0b101 or 0b110
    if (g >> 2) & (g | (g >> 1)) & _LOW_BITS:
        f = (g >> 2) & (g | (g >> 1)) & _LOW_BITS
        s = 0 if f & 1 else 1 if f & 8 else 2 if f & 64 else 3
        sm = 0
        for c in cards:
            if c & 3 == s:
                sm |= 1 << (c >> 2)
        if extra >= 0 and extra & 3 == s:
            sm |= 1 << (extra >> 2)
        if sm & _SIX_ROYAL == _SIX_ROYAL:
            return "six_card_royal_flush"
        if sm & _ROYAL == _ROYAL:
            return "royal_flush"
        if _run5(sm):
            return "straight_flush"
        return "flush"  # five suited cards leave no room for quads or a full house
    p = m ^ x
    k = (t & _SUMS) - m
    if k != p:
        if p == 0:
            h = k >> 1
            if h & (h - 1):
                return "full_house"
            return "straight" if _run5(m) else "three_of_a_kind"
        q = (k - p) >> 1
        return "four_of_a_kind" if q & p else "full_house"
    return "straight" if _run5(m) else None
