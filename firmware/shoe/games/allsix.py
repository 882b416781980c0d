"""All-Six Bonus hand (rules.md 1.6): the best five-card poker category of six cards.

The seat's five cards plus the All-Six card, standard five-card categories on the best five of
six, ace high or low in a straight (A-2-3-4-5 counts), no wrap. Only the highest category pays:

    six_card_royal_flush  A-K-Q-J-T-9 of one suit
    royal_flush           A-K-Q-J-T of one suit (not a six-card royal)
    straight_flush, four_of_a_kind, full_house, flush, straight, three_of_a_kind

`category(cards6)` returns one of those ids, or None below three of a kind. Not a hot path (one
call per seat with an All-Six wager); it allocates nothing but uses the preallocated buffers.
"""
from micropython import const

_SIX_ROYAL = const(0x1F80)  # 9 T J Q K A
_ROYAL = const(0x1F00)  # T J Q K A

_suits = [0, 0, 0, 0]  # rank mask per suit
_sizes = bytearray(4)  # cards per suit
_counts = bytearray(13)  # cards per rank: left all zero after every call


def _run5(m):
    e = (m << 1) | (m >> 12)  # ace copied below the deuce
    return e & (e >> 1) & (e >> 2) & (e >> 3) & (e >> 4)


def category(cards):
    sm = _suits
    sz = _sizes
    cnt = _counts
    sm[0] = sm[1] = sm[2] = sm[3] = 0
    sz[0] = sz[1] = sz[2] = sz[3] = 0
    ranks = 0
    for c in cards:
        r = c >> 2
        s = c & 3
        sm[s] |= 1 << r
        sz[s] += 1
        cnt[r] += 1
        ranks |= 1 << r
    quads = trips = pairs = 0
    for c in cards:  # read each rank's count once and clear it for the next call
        r = c >> 2
        n = cnt[r]
        if n:
            cnt[r] = 0
            if n == 4:
                quads = 1
            elif n == 3:
                trips += 1
            elif n == 2:
                pairs += 1
    flush = -1
    for s in range(4):
        if sz[s] >= 5:
            flush = s
    if flush >= 0:  # (five suited cards leave no room for quads or a full house)
        m = sm[flush]
        if m & _SIX_ROYAL == _SIX_ROYAL:
            return "six_card_royal_flush"
        if m & _ROYAL == _ROYAL:
            return "royal_flush"
        if _run5(m):
            return "straight_flush"
        return "flush"
    if quads:
        return "four_of_a_kind"
    if trips >= 2 or (trips and pairs):
        return "full_house"
    if _run5(ranks):
        return "straight"
    if trips:
        return "three_of_a_kind"
    return None
