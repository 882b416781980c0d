"""Four Card Frenzy side wagers that need no enumeration of hands: Prime (colours of the seat's
five cards) and the All-Six Bonus (the best five of the seat's five cards and the All-Six card,
C(52, 6) = 20,358,520 six-card sets), both by combinatorics (rules.md 1.6; docs/par.md).

All-Six: a six-card set is "suited" when five or six of its cards share a suit; then the best
hand is a flush or better (six-card royal, royal, straight flush, flush) and nothing else can
beat it (five cards of one suit leave room for neither quads nor a full house). Every other set
is ranked by its ranks alone (four of a kind, full house, straight, three of a kind). So:

    count(category) = sum over rank multisets of the sets with those ranks, by rank category
                      - the suited sets, counted by their rank category
                      + the suited sets, counted by their suit category
"""

import itertools
from math import comb

ALL_SIX = (
    "six_card_royal_flush",
    "royal_flush",
    "straight_flush",
    "four_of_a_kind",
    "full_house",
    "flush",
    "straight",
    "three_of_a_kind",
)
PRIME = ("five_one_colour", "four_one_colour")
_ROYAL = frozenset(range(8, 13))  # T J Q K A (rank 0 = deuce)
_SIX_ROYAL = frozenset(range(7, 13))  # 9 T J Q K A


def prime_counts():
    """Hands per Prime outcome: five or four of the five cards one colour (26 cards each)."""
    return {
        "five_one_colour": 2 * comb(26, 5),
        "four_one_colour": 2 * comb(26, 4) * 26,
        None: 2 * comb(26, 3) * comb(26, 2),
    }


def has_five_run(ranks):
    """Five consecutive ranks among `ranks` (a set of 0..12), the ace also below the deuce."""
    ladder = [12] + list(range(13))  # A 2 3 ... K A
    return any(all(ladder[i + j] in ranks for j in range(5)) for i in range(len(ladder) - 4))


def _rank_category(counts):
    """Category of six cards from their rank multiplicities {rank: count}, suits ignored."""
    c = sorted(counts.values(), reverse=True)
    if c[0] == 4:
        return "four_of_a_kind"
    if c[0] == 3 and c[1] >= 2:
        return "full_house"
    if has_five_run(set(counts)):
        return "straight"
    if c[0] == 3:
        return "three_of_a_kind"
    return None


def _suited_category(ranks):
    """Category of a set whose cards of `ranks` (five or six) share one suit."""
    if len(ranks) == 6 and ranks == _SIX_ROYAL:
        return "six_card_royal_flush"
    if _ROYAL <= ranks:
        return "royal_flush"
    if has_five_run(ranks):
        return "straight_flush"
    return "flush"


_all_six: dict = {}


def all_six_counts():
    """Six-card sets per All-Six outcome (None: below three of a kind), exact (kept: a
    fresh dict of the counts computed on the first call)."""
    if not _all_six:
        _all_six.update(_all_six_counts())
    return dict(_all_six)


def _all_six_counts():
    out = dict.fromkeys(ALL_SIX + (None,), 0)
    for multiset in itertools.combinations_with_replacement(range(13), 6):
        counts = {}
        for r in multiset:
            counts[r] = counts.get(r, 0) + 1
        if max(counts.values()) > 4:
            continue
        ways = 1
        for n in counts.values():
            ways *= comb(4, n)
        out[_rank_category(counts)] += ways
    for size in (5, 6):
        for suited in itertools.combinations(range(13), size):
            ranks = frozenset(suited)
            cat = _suited_category(ranks)
            if size == 6:
                extra = [(None, 1)]
            else:  # the sixth card: another suit (3 of them), any rank
                extra = [(q, 3) for q in range(13)]
            for q, n in extra:
                counts = dict.fromkeys(ranks, 1)
                if q is not None:
                    counts[q] = counts.get(q, 0) + 1
                out[_rank_category(counts)] -= 4 * n  # 4 suits for the suited cards
                out[cat] += 4 * n
    return out
