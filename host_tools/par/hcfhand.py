"""High Card Flush, hand by hand: the exact dealer counts of every player hand with a given
three-card flush, so that the raise can follow the off-suit cards (docs/par.md).

A hand with a three-card flush M is M in one suit and three other suits holding four cards,
none longer than three (a three-card suit at most M). For a dealer threshold y of length 3,
a suit where the player holds k cards offers the dealer the polynomial
A(z) + h z^3 with A(z) = 1 + a z + C(a, 2) z^2, a = 13 - k, and h = the three-card sets of
the suit's free ranks below y. Four suits, seven dealer cards:

    [z^7] prod (A_s + h_s z^3) = [z^7] prod A_s + sum_s h_s [z^4] prod_{t != s} A_t
                                 + sum_{s < t} h_s h_t (a_u + a_v)      (u, v: the other two)

(three z^3 terms already exceed z^7). Three thresholds per hand: below M, at most M, and the
qualifier (three-card sets of the free ranks 2..8). Each generated hand stands for 4 suit
choices, halved when another suit holds M as well (it is generated from both suits).
"""

import itertools
from math import comb

import numpy as np

from host_tools.par import hcf

N_DEALER = comb(45, 7)
_LOW = (1 << 7) - 1  # ranks 2..8: a three-card flush of these does not qualify


def _size_terms(a):
    """What depends on the four suits' sizes alone (a = 13 - the player's cards there, ints
    or arrays): [z^7] prod A, [z^4] of the products without suit s, and a_u + a_v for every
    pair (s, t) and the other two suits u, v."""
    polys = [[x * 0 + 1, x, x * (x - 1) // 2] for x in a]
    all4 = polys[0]
    for p in polys[1:]:
        all4 = _mul(all4, p, 7)
    t1 = []
    for s in range(4):
        acc = [a[0] * 0 + 1]
        for u in range(4):
            if u != s:
                acc = _mul(acc, polys[u], 4)
        t1.append(acc[4])
    t2 = {}
    for s, u in itertools.combinations(range(4), 2):
        v, w = [x for x in range(4) if x not in (s, u)]
        t2[s, u] = a[v] + a[w]
    return all4[7], t1, t2


def _coeff(t0, t1, t2, h):
    """[z^7] prod (A_s + h_s z^3) from the size terms and each suit's h."""
    f = t0 + sum(h[s] * t1[s] for s in range(4))
    for (s, u), c in t2.items():
        f = f + h[s] * h[u] * c
    return f


def _mul(p, q, top):
    out = [0] * (top + 1)
    for i, x in enumerate(p):
        for j, y in enumerate(q):
            if i + j <= top:
                out[i + j] = out[i + j] + x * y
    return out


def _three_below(free, mask):
    """Per entry of `free` (rank masks): its three-card subsets numerically below `mask`."""
    pop = hcf.suit_tables()[0]
    out = np.zeros(len(free), dtype=np.int64)
    choose = [np.array([comb(n, k) for n in range(14)]) for k in range(4)]
    for b in range(12, -1, -1):
        if mask >> b & 1:
            above = mask >> (b + 1) << (b + 1)
            need = 3 - bin(above).count("1")
            if need >= 0:
                ok = (free & above) == above
                out += np.where(ok, choose[need][pop[free & ((1 << b) - 1)]], 0)
    return out


class _Others:
    """The ordered triples of rank masks for the three other suits (four cards, <= 3 each),
    and what depends on their sizes alone: a per suit, [z^7] prod A and [z^4] of the
    products without one suit (the flush suit first, a = 10)."""

    def __init__(self):
        pop = hcf.suit_tables()[0]
        self.masks = np.flatnonzero(pop <= 3)
        size = pop[self.masks]
        by = [np.flatnonzero(size == k) for k in range(4)]
        rows = []
        for sizes in sorted(
            set(itertools.permutations((3, 1, 0)))
            | set(itertools.permutations((2, 2, 0)))
            | set(itertools.permutations((2, 1, 1)))
        ):
            g = np.meshgrid(*[by[k] for k in sizes], indexing="ij")
            rows.append(np.stack([x.ravel() for x in g], axis=1))
        self.triples = t = np.concatenate(rows)
        self.size = size
        self.three = size[t] == 3  # a three-card other suit must not beat the flush
        a = [np.full(len(t), 10, dtype=np.int64)] + [13 - size[t[:, j]] for j in range(3)]
        self.t0, self.t1, self.t2 = _size_terms(a)


_others: list["_Others"] = []


def hands(flush):
    """Every hand whose flush is the three-card rank mask `flush`, one row per suit pattern:
    (weight = hands it stands for, not qualifying, below, at most) as int64 arrays of
    dealer-hand counts; the player's hands with this flush are weight.sum()."""
    if not _others:
        _others.append(_Others())
    o = _others[0]
    full = (1 << 13) - 1
    masks = o.masks
    h_lt = _three_below(full & ~masks, flush)
    h_le = h_lt + ((masks & flush) == 0)
    pop = hcf.suit_tables()[0]
    h_q = np.array([comb(7 - n, 3) for n in range(8)])[pop[masks & _LOW]]
    keep = ~np.any(o.three & (masks[o.triples] > flush), axis=1)
    t = o.triples[keep]
    t0, t1 = o.t0[keep], [x[keep] for x in o.t1]
    t2 = {k: v[keep] for k, v in o.t2.items()}
    own_lt = int(_three_below(np.array([full & ~flush]), flush)[0])
    own_q = comb(7 - bin(flush & _LOW).count("1"), 3)
    out = []
    for h_other, own in ((h_q, own_q), (h_lt, own_lt), (h_le, own_lt)):
        out.append(_coeff(t0, t1, t2, [own] + [h_other[t[:, j]] for j in range(3)]))
    twins = (masks[t] == flush).sum(axis=1)
    weight = 4 // (1 + twins)
    return (weight,) + tuple(out)


def split(flush):
    """For one three-card flush: the hands raised and folded when each hand takes its own
    best decision, and the dealer-pair counts of the raised hands (nq, win, tie, lose), plus
    the sums over all its hands (nq, below, at most) for checking against hcfmain."""
    w, nq, lt, le = hands(flush)
    qualifies = hcf.value(3, flush) >= hcf.value(*hcf.QUALIFY)
    win = np.where(qualifies, lt - nq, 0)
    tie = np.where(qualifies, le - lt, 0)
    lose = N_DEALER - nq - win - tie
    up = nq + 2 * (win - lose) > -N_DEALER  # raise 1x beats folding; equal: fold
    s = lambda a, sel=up: int((w * a)[sel].sum())  # noqa: E731
    return {
        "raised": int(w[up].sum()),
        "folded": int(w[~up].sum()),
        "nq": s(nq),
        "win": s(win),
        "tie": s(tie),
        "lose": s(lose),
        "all": (s(nq, slice(None)), s(lt, slice(None)), s(le, slice(None))),
    }


_below_of: dict[int, list[int]] = {}  # flush mask -> _three_below of every free-rank mask


def raises(suit_masks):
    """One hand (its four suits' rank masks) whose flush is three cards: True if raising 1x
    has the larger expected return (the same sums as `hands`, for a single hand)."""
    flush = max(suit_masks, key=lambda m: (bin(m).count("1"), m))
    below = _below_of.get(flush)
    if below is None:  # every free-rank mask at once: then each hand is a lookup
        below = _below_of[flush] = _three_below(np.arange(1 << 13), flush).tolist()
    t0, t1, t2 = _size_terms([13 - bin(m).count("1") for m in suit_masks])
    h_lt = [below[((1 << 13) - 1) & ~m] for m in suit_masks]
    h_le = [h + (1 if m & flush == 0 else 0) for h, m in zip(h_lt, suit_masks)]
    h_q = [comb(7 - bin(m & _LOW).count("1"), 3) for m in suit_masks]
    nq, lt, le = (_coeff(t0, t1, t2, h) for h in (h_q, h_lt, h_le))
    if hcf.value(3, flush) >= hcf.value(*hcf.QUALIFY):
        win, lose = lt - nq, N_DEALER - le
    else:
        win, lose = 0, N_DEALER - nq
    return nq + 2 * (win - lose) > -N_DEALER
