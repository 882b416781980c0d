"""High Card Flush main game (Ante, Raise), exact over all C(52,7) * C(45,7) (player, dealer)
pairs, for the best raise strategy that looks at the player's flush (docs/par.md).

Both hands' values are maxima over the suits, and in each suit the player's and the dealer's
rank sets are disjoint. So with, per suit,

    B(z, w) = sum over disjoint rank sets p, d with v(p) <= x and v(d) < y of z^|p| w^|d|

the pairs with the player at most x and the dealer below y are [z^7 w^7] B(z, w)^4 (the same
with < for either side). B's coefficients are binomials except where both sets sit exactly on
their thresholds' lengths; those come from 2-D prefix sums of "disjoint" over every pair of
rank sets of the two lengths in mask order (at most 1716 x 1716). Differences over x give, for
every flush value x of the player: all pairs, the dealer not qualifying, the dealer qualifying
and below x, equal to x, above x.
"""

from math import comb

import numpy as np

from host_tools.par import hcf

INF = None  # a dealer threshold above every hand


class _Sets:
    """Every rank set of each length, as masks in ascending order, and for two lengths the
    2-D prefix sums of "disjoint" over those orders: pairs(a, b)[i, j] = disjoint pairs
    (p, d) with p among the first i sets of length a and d among the first j of length b."""

    def __init__(self, ranks):
        pop = hcf.suit_tables(ranks)[0]
        self.by_len = [np.flatnonzero(pop == n) for n in range(ranks + 1)]
        self._pairs = {}

    def pairs(self, a, b):
        t = self._pairs.get((a, b))
        if t is None:
            sa, sb = self.by_len[a], self.by_len[b]
            dis = (sa[:, None] & sb[None, :]) == 0
            t = np.zeros((len(sa) + 1, len(sb) + 1), dtype=np.int64)
            t[1:, 1:] = dis.cumsum(axis=0).cumsum(axis=1)
            self._pairs[(a, b)] = t
        return t


_sets: dict = {}


def pair_counts(queries, ranks=hcf.RANKS, cards=hcf.CARDS):
    """queries: list of ((xl, xm, x_strict), (yl, ym, y_strict) or INF). Returns, per query,
    #(player, dealer) pairs with v(player) <= x (< if strict) and v(dealer) <= y (< if
    strict; any if INF), where x = (length xl, rank mask xm). Exact int64."""
    sets = _sets.get(ranks) or _sets.setdefault(ranks, _Sets(ranks))
    q = len(queries)
    big = cards + 1  # the length of INF: above every hand
    xl = np.array([a[0][0] for a in queries])
    xm = np.array([a[0][1] for a in queries], dtype=np.int64)
    xs = np.array([a[0][2] for a in queries], dtype=bool)
    yl = np.array([big if a[1] is INF else a[1][0] for a in queries])
    ym = np.array([0 if a[1] is INF else a[1][1] for a in queries], dtype=np.int64)
    ys = np.array([True if a[1] is INF else a[1][2] for a in queries], dtype=bool)

    def bound(length, mask, strict):  # per query: sets of `length` below / at most `mask`
        s = sets.by_len[length] if length <= ranks else np.zeros(0, dtype=np.int64)
        return np.where(
            strict, np.searchsorted(s, mask, "left"), np.searchsorted(s, mask, "right")
        )

    B = np.zeros((q, cards + 1, cards + 1), dtype=np.int64)
    nx = {i: bound(i, xm, xs) for i in range(cards + 1)}
    ny = {j: bound(j, ym, ys) for j in range(cards + 1)}
    for i in range(cards + 1):
        for j in range(min(cards, ranks - i) + 1):
            free = comb(ranks, i) * comb(ranks - i, j)
            B[:, i, j] = np.where((i < xl) & (j < yl), free, 0)
            B[:, i, j] += np.where((i == xl) & (j < yl), nx[i] * comb(ranks - i, j), 0)
            B[:, i, j] += np.where((i < xl) & (j == yl), ny[j] * comb(ranks - j, i), 0)
            both = np.flatnonzero((i == xl) & (j == yl))
            if len(both):  # both sets at their thresholds' lengths: disjoint pairs
                B[both, i, j] += sets.pairs(i, j)[nx[i][both], ny[j][both]]
    # [z^cards w^cards] B^4: square, then the middle coefficient of the square's square
    B2 = np.zeros_like(B)
    for i in range(cards + 1):
        for j in range(cards + 1):
            B2[:, i:, j:] += B[:, i, j, None, None] * B[:, : cards + 1 - i, : cards + 1 - j]
    out = np.zeros(q, dtype=np.int64)
    for i in range(cards + 1):
        for j in range(cards + 1):
            out += B2[:, i, j] * B2[:, cards - i, cards - j]
    return out


def raise_caps(length):
    """The allowed Raise multiples for a flush length (rules.md 2.2)."""
    return (1, 2, 3) if length >= 6 else (1, 2) if length == 5 else (1,)


class Game:
    """Per player flush value x (ascending): pairs with the dealer not qualifying (nq), and
    qualifying below x (win), equal (tie), above x (lose); then the best raise per x."""

    def __init__(self, ranks=hcf.RANKS, cards=hcf.CARDS, qualify=hcf.QUALIFY, chunk=4000):
        import itertools

        xs = []
        for length in range(-(-cards // 4), min(cards, ranks) + 1):
            for combo in itertools.combinations(range(ranks), length):
                xs.append((length, sum(1 << r for r in combo)))
        xs.sort(key=lambda a: hcf.value(a[0], a[1], ranks))
        q = (qualify[0], qualify[1], True)
        queries = []
        for length, mask in xs:
            for strict in (False, True):
                p = (length, mask, strict)
                queries += [
                    (p, INF),
                    (p, q),
                    (p, (length, mask, True)),
                    (p, (length, mask, False)),
                ]
        got = np.concatenate(
            [
                pair_counts(queries[i : i + chunk], ranks, cards)
                for i in range(0, len(queries), chunk)
            ]
        ).reshape(len(xs), 2, 4)
        d = got[:, 0] - got[:, 1]  # the player exactly at x
        total, nq, lt, le = d[:, 0], d[:, 1], d[:, 2], d[:, 3]
        self.x = np.array([hcf.value(a, m, ranks) for a, m in xs], dtype=np.int64)
        self.length = np.array([a for a, _ in xs])
        self.mask = np.array([m for _, m in xs], dtype=np.int64)
        qv = hcf.value(qualify[0], qualify[1], ranks)
        up = self.x >= qv
        self.total, self.nq = total, nq
        self.win = np.where(up, lt - nq, 0)
        self.tie = np.where(up, le - lt, 0)
        self.lose = total - nq - self.win - self.tie
        self.dealer_hands = comb(4 * ranks - cards, cards)
        if np.any(total % self.dealer_hands):
            raise ArithmeticError("pairs per player value must be whole player hands")
        self.hands = total // self.dealer_hands
        # the best raise per x: Ante nq + win - lose, Raise r * (win - lose); fold: -total
        edge = self.win - self.lose
        cap = np.array([max(raise_caps(a)) for a in self.length])
        best = np.where(edge > 0, cap, 1)
        ev = self.nq + edge + best * edge
        self.mult = np.where(ev > -total, best, 0)
