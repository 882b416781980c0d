"""Four Card Frenzy hands: the best four of five cards (rules.md 1.2), table-driven and alloc-free.

A hand's *value* is one small int; a larger value is a better hand, equal values tie:

    value = category << 26 | payload                 (< 2**29: a small int on every port)

    category  0 high_card  1 pair  2 two_pair  3 straight  4 flush  5 three_of_a_kind
              6 straight_flush  7 four_of_a_kind            (CATEGORIES[category] is the id)
    payload   rank sets as 13-bit masks (bit r = rank r, 0 = deuce .. 12 = ace); two masks of
              the same size compare like their ranks card by card, high to low:
      high_card, flush          the four chosen ranks
      pair                      pair bit << 13 | the two highest kickers
      two_pair                  both pair bits (higher pair, then lower pair)
      three_of_a_kind           trips bit << 13 | the best kicker bit
      straight, straight_flush  lowest-card bit << 1 of the run; A-2-3-4 is 1 (top card 4)
      four_of_a_kind            the quad bit
Only the four chosen cards count: the fifth card and the suits never reach the payload.

How `value5` works without sorting or counting per rank: one table entry per card id

    _V[c] = 1 << rank | 1 << (15 + 3 * suit)      bits 0..14 rank sum, 15..26 suit counts

The sum of five entries carries the rank sum S (bits 0..14) and four 3-bit suit counters; a
counter >= 4 (bit 2 of its field) means a four-card flush. With m = OR and x = XOR of the rank
bits: S == m means five different ranks; otherwise p = m ^ x are the ranks held an even number
of times and k = S - m tells pair / two pair / trips / full house / quads apart (see the code).
"""
from micropython import const

from shoe.games.vocab import FCF

HIGH_CARD = const(0)
PAIR = const(1)
TWO_PAIR = const(2)
STRAIGHT = const(3)
FLUSH = const(4)
THREE_OF_A_KIND = const(5)
STRAIGHT_FLUSH = const(6)
FOUR_OF_A_KIND = const(7)
CATEGORIES = ("high_card", "pair", "two_pair", "straight", "flush", "three_of_a_kind",
              "straight_flush", "four_of_a_kind")

GAME = FCF
_SHIFT = const(26)
_RANKS = const(0x1FFF)
_SUMS = const(0x7FFF)
_FLUSH_BITS = const(0x924 << 15)
_WHEEL = const(0x1007)  # A, 2, 3, 4
_KING = const(1 << 11)
_ACE = const(1 << 12)
_ROYAL_RUN = const(1 << 10)  # run whose low card is J (rank 9), shifted like the payload

# One 32-bit entry per card id (see the module docstring).
_V = tuple((1 << (c >> 2)) | (1 << (15 + 3 * (c & 3))) for c in range(52))


# frozen: @micropython.native
def _flush4(a, b, c, d, e, t):
    # Four or five cards of one suit: the flush or straight flush of those cards is the best
    # four (trips and quads need three different suits, impossible beside a four-card flush).
    f = (t & _FLUSH_BITS) >> 15
    s = 0 if f & 4 else 1 if f & 0x20 else 2 if f & 0x100 else 3
    m = 0  # the suited ranks (unrolled: a loop over a tuple would allocate)
    if a & 3 == s:
        m |= 1 << (a >> 2)
    if b & 3 == s:
        m |= 1 << (b >> 2)
    if c & 3 == s:
        m |= 1 << (c >> 2)
    if d & 3 == s:
        m |= 1 << (d >> 2)
    if e & 3 == s:
        m |= 1 << (e >> 2)
    r = m & (m >> 1) & (m >> 2) & (m >> 3)
    if r:
        h = r & (r - 1)
        return STRAIGHT_FLUSH << _SHIFT | (h if h else r) << 1
    if m & _WHEEL == _WHEEL:
        return STRAIGHT_FLUSH << _SHIFT | 1
    return FLUSH << _SHIFT | _top4(m)


# frozen: @micropython.native
def _top4(m):
    # m has four or five bits: drop the lowest while more than four remain.
    n = m & (m - 1)
    n2 = n & (n - 1)
    n3 = n2 & (n2 - 1)
    n4 = n3 & (n3 - 1)
    return n if n4 else m


# clause: rules:1.2-categories, rules:1.2-ace, rules:1.2-best-four, rules:1.2-tiebreak, 684a.11(c)
# frozen: @micropython.native
def value5(a, b, c, d, e):
    """The value of the best four of five card ids (0..51, distinct, trusted)."""
    V = _V
    va = V[a]
    vb = V[b]
    vc = V[c]
    vd = V[d]
    ve = V[e]
    t = va + vb + vc + vd + ve
    if t & _FLUSH_BITS:
        return _flush4(a, b, c, d, e, t)
    m = (va | vb | vc | vd | ve) & _RANKS
    s = t & _SUMS
    if s == m:  # five different ranks
        r = m & (m >> 1) & (m >> 2) & (m >> 3)
        if r:
            h = r & (r - 1)
            return STRAIGHT << _SHIFT | (h if h else r) << 1
        if m & _WHEEL == _WHEEL:
            return STRAIGHT << _SHIFT | 1
        return m & (m - 1)  # high card: the four highest (category 0)
    x = (va ^ vb ^ vc ^ vd ^ ve) & _RANKS
    p = m ^ x
    k = s - m
    if k == p:
        if p & (p - 1):  # two pairs (the odd card is irrelevant)
            return TWO_PAIR << _SHIFT | p
        # one pair: four different ranks may still be a straight
        r = m & (m >> 1) & (m >> 2) & (m >> 3)
        if r:
            return STRAIGHT << _SHIFT | r << 1
        if m == _WHEEL:
            return STRAIGHT << _SHIFT | 1
        return PAIR << _SHIFT | p << 13 | (x & (x - 1))
    if p == 0:  # three of a kind and two singles: keep the higher single
        tr = k >> 1
        y = x ^ tr
        return THREE_OF_A_KIND << _SHIFT | tr << 13 | (y & (y - 1))
    if k == 3 * p:
        return FOUR_OF_A_KIND << _SHIFT | p
    # full house: trips plus one card of the pair as kicker
    return THREE_OF_A_KIND << _SHIFT | ((k - p) >> 1) << 13 | p



def value(hand):
    """value5 of a sequence of five card ids."""
    return value5(hand[0], hand[1], hand[2], hand[3], hand[4])


def category(v):
    return v >> _SHIFT


# clause: rules:1.6-four-card-bonus
def is_royal(v):
    """A-K-Q-J suited: split out of the straight flushes for the Four Card Bonus."""
    return v == STRAIGHT_FLUSH << _SHIFT | _ROYAL_RUN


# clause: 684a.11(c)(2)(i), rules:1.6-dealer-opens
def dealer_opens(v):
    """Pair or better, or king high or better (the top card of a high-card hand is in the four)."""
    return v >> _SHIFT != HIGH_CARD or v & (_KING | _ACE) != 0


# clause: 684a.11(b)(1)
def raise_multiples(v):
    """Allowed Raise multiples of the Ante (rules.md 1.5): pair of aces or better -> 1, 2, 3."""
    cat = v >> _SHIFT
    if cat >= TWO_PAIR or (cat == PAIR and v & (_ACE << 13)):
        return (1, 2, 3)
    return (1,)


# clause: rules:1.2-best-four
def best_cards(hand, v):
    """The four chosen card ids of a five-card hand of value v, in display order.

    Groups first (quads, trips, pairs), then high to low; a straight runs high to low with the
    ace last in A-2-3-4. Where two cards could serve (a pair inside a straight, the kicker of a
    full house) the higher suit is taken, so the choice never depends on the dealt order.
    """
    cat = v >> _SHIFT
    pay = v & ((1 << _SHIFT) - 1)
    hs = sorted(hand, reverse=True)  # rank high to low, then suit high to low
    if cat == HIGH_CARD:
        return hs[:4]
    if cat == PAIR or cat == THREE_OF_A_KIND:
        g = pay >> 13  # the pair or trips rank bit; its cards sit together in hs
        out = []
        rest = []
        for c in hs:
            if g >> (c >> 2) & 1:
                out.append(c)
            else:
                rest.append(c)
        out.append(rest[0])  # kickers high to low (a full house: the pair's higher suit)
        if cat == PAIR:
            out.append(rest[1])
        return out
    out = []
    if cat == FOUR_OF_A_KIND or cat == TWO_PAIR:
        for c in hs:
            if pay >> (c >> 2) & 1:
                out.append(c)
        return out
    s = _flush_suit(hand) if cat == FLUSH or cat == STRAIGHT_FLUSH else -1
    if cat == FLUSH:
        for c in hs:
            if c & 3 == s:
                out.append(c)
        return out[:4]
    if pay == 1:  # straight or straight flush
        ranks = (2, 1, 0, 12)
    else:
        lo = _low_rank(pay >> 1)
        ranks = (lo + 3, lo + 2, lo + 1, lo)
    for r in ranks:
        for c in hs:
            if c >> 2 == r and (s < 0 or c & 3 == s):
                out.append(c)
                break
    return out


def _flush_suit(hand):
    n = [0, 0, 0, 0]
    for c in hand:
        n[c & 3] += 1
    return n.index(max(n))


def _low_rank(mask):
    r = 0
    while not mask >> r & 1:
        r += 1
    return r
