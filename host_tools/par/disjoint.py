"""For every hand P of a deck (up to suit symmetry), count the hands D disjoint from P below,
equal to and above P's value, exactly, without visiting the C(n-5, 5) hands D of each P
(docs/par.md, "Four Card Frenzy: the main game").

Inclusion-exclusion over the cards P and D could share:

    #{D : D and P disjoint, v(D) < x} = sum over S subset of P of (-1)^|S| G_S(x)
    G_S(x) = #{H : H contains S, v(H) < x}

Suit symmetry: a hand's class is the sorted tuple of its four suits' rank sets; hands of one
class have the same value and the same counts. Only one hand per class is evaluated, weighted
by the class size. G_S is the same for every S of one class, so

    |class of S| * G_S(x) = sum over representatives H with v(H) < x of
                            weight(H) * #{subsets of H in the class of S}

which is a sorted, weighted table of (subset class, value) pairs per subset size. The division
is exact (checked). Nothing here knows the game: `value` is any function of card ids, and the
deck any list of card ids that holds every rank it holds in all four suits.
"""

import itertools

import numpy as np

from host_tools.par.combin import subsets

_STAB = np.array([1, 2, 2, 6, 2, 4, 6, 24], dtype=np.int64)  # by (m0==m1, m1==m2, m2==m3)
_BIT = np.array([1 << (13 * (c & 3) + (c >> 2)) for c in range(52)], dtype=np.int64)


def _cx(a, b):
    return np.minimum(a, b), np.maximum(a, b)


def suit_key(cards):
    """Class key of hands (card ids, shape (N, k)): the four suits' rank masks sorted, packed
    13 bits each, and the class size (24 / the suit permutations that fix the masks)."""
    t = _BIT[np.asarray(cards)].sum(axis=1)  # bit 13 * suit + rank per card
    m0, m1, m2, m3 = (t & 0x1FFF, t >> 13 & 0x1FFF, t >> 26 & 0x1FFF, t >> 39)
    m0, m1 = _cx(m0, m1)  # a sorting network of four
    m2, m3 = _cx(m2, m3)
    m0, m2 = _cx(m0, m2)
    m1, m3 = _cx(m1, m3)
    m1, m2 = _cx(m1, m2)
    key = m0 | m1 << 13 | m2 << 26 | m3 << 39
    eq = (m0 == m1) * 4 + (m1 == m2) * 2 + (m2 == m3)
    return key, 24 // _STAB[eq]


class Classes:
    """The suit classes of every 5-card hand of `deck` (card ids): .key (sorted), .rep (card
    ids of one hand per class, ascending), .weight (hands in the class)."""

    def __init__(self, deck, k=5):
        deck = np.asarray(deck, dtype=np.int64)
        hands = deck[subsets(len(deck), k)]
        key, _ = suit_key(hands)
        self.key, first, self.weight = np.unique(key, return_index=True, return_counts=True)
        self.rep = hands[first]
        self.deck = deck

    def index(self, cards):
        """Class index of hands given as card ids (shape (N, k))."""
        key, _ = suit_key(cards)
        i = np.searchsorted(self.key, key)
        if not np.array_equal(self.key[np.minimum(i, len(self.key) - 1)], key):
            raise ValueError("a hand outside the deck's classes")
        return i


def _weighted_ranks(cls, vr, w, nv):
    """For entries (class, value rank, weight): the weight of the entries of the same class
    with a smaller value (lt) and with a smaller or equal value (le)."""
    key = cls * nv + vr
    order = np.argsort(key, kind="stable")
    sk = key[order]
    pre = np.concatenate(([0], np.cumsum(w[order])))
    m = len(sk)
    edge = np.empty(m, dtype=bool)
    edge[0] = True
    np.not_equal(sk[1:] // nv, sk[:-1] // nv, out=edge[1:])
    run = np.cumsum(edge) - 1
    cstart = pre[np.flatnonzero(edge)][run]
    np.not_equal(sk[1:], sk[:-1], out=edge[1:])
    starts = np.flatnonzero(edge)
    run = np.cumsum(edge) - 1
    lt = np.empty(m, dtype=np.int64)
    le = np.empty(m, dtype=np.int64)
    lt[order] = pre[starts][run] - cstart
    le[order] = pre[np.append(starts[1:], m)][run] - cstart
    return lt, le


def counts(classes, value):
    """Per class of `classes` (a Classes): (values, lt, le) and a function below(threshold)
    giving, per class, #{D disjoint from P : v(D) < threshold}. lt / le: #{D disjoint from P:
    v(D) < v(P)} / <= v(P). All int64 arrays indexed like classes.key."""
    rep, w = classes.rep, classes.weight.astype(np.int64)
    k = rep.shape[1]
    values = np.asarray(value(rep), dtype=np.int64)
    uniq, vr = np.unique(values, return_inverse=True)
    vr = vr.astype(np.int64)
    nv = len(uniq)
    cum = np.concatenate(([0], np.cumsum(np.bincount(vr, weights=w, minlength=nv)))).astype(
        np.int64
    )  # the empty subset: every hand
    lt = cum[vr].copy()
    le = cum[vr + 1].copy()
    tables = []
    for size in range(1, k):
        sign = -1 if size % 2 else 1
        picks = list(itertools.combinations(range(k), size))
        skey, ssize = suit_key(np.concatenate([rep[:, list(p)] for p in picks]))
        ids, cls = np.unique(skey, return_inverse=True)
        cls = cls.astype(np.int64)
        rvr = np.tile(vr, len(picks))
        rw = np.tile(w, len(picks))
        slt, sle = _weighted_ranks(cls, rvr, rw, nv)
        for a in (slt, sle):
            if np.any(a % ssize):
                raise ArithmeticError("suit classes do not divide evenly")
        lt += sign * (slt // ssize).reshape(len(picks), -1).sum(axis=0)
        le += sign * (sle // ssize).reshape(len(picks), -1).sum(axis=0)
        tables.append((sign, cls, ssize, rvr, rw, len(ids), len(picks)))
    le += -1 if k % 2 else 1  # S = P itself: v(P) < v(P) never, <= always

    def below(threshold):
        tr = int(np.searchsorted(uniq, threshold))
        out = np.full(len(vr), cum[tr], dtype=np.int64)
        for sign, cls, ssize, rvr, rw, ncls, npick in tables:
            per = np.bincount(cls, weights=rw * (rvr < tr), minlength=ncls).astype(np.int64)
            got = per[cls]
            if np.any(got % ssize):
                raise ArithmeticError("suit classes do not divide evenly")
            out += sign * (got // ssize).reshape(npick, -1).sum(axis=0)
        return out + (-1 if k % 2 else 1) * (vr < tr)

    return values, lt, le, below
