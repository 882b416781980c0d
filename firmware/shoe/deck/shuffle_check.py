"""Unshuffled-deck detector: is a dealt sequence far too ordered to come from a shuffle?

Two cards are *neighbours* when they have the same suit and adjacent ranks (A-2 and K-A both
count) or the same rank; four statistics of the neighbour pairs in the round's sequence (adjacent,
window, run, repeat against the last KEEP rounds' successor maps), each compared with a binomial
tail at ALPHA, flag a deck far too ordered for a shuffle. The statistics, their limits and the
measured false-alarm and detection rates: docs/irregularities.md, "Unshuffled-deck detector".
Sequences shorter than MIN_LEN are not judged.
"""
from micropython import const
from shoe.deck.ledger import hexs, unhex

ALPHA = 1e-7
KEEP = const(4)
MIN_LEN = const(8)
_P_NEIGH = 5 / 51
_P_SUCC = 1 / 51
_WIN = const(3)


def neighbours(a, b):
    ra, rb = a >> 2, b >> 2
    if ra == rb:
        return True
    if (a & 3) != (b & 3):
        return False
    d = (ra - rb) % 13
    return d == 1 or d == 12


def limit(n, p, alpha=ALPHA):
    """Smallest k with P(Binomial(n, p) >= k) < alpha (n+1 if none)."""
    if n <= 0:
        return 1
    q = 1.0 - p
    pmf = q**n
    cdf = 0.0  # P(X < k)
    for k in range(n + 1):
        if 1.0 - cdf < alpha:
            return k
        cdf += pmf
        pmf = pmf * (n - k) / (k + 1) * p / q
    return n + 1


def run_limit(length, alpha=ALPHA):
    r = 1
    x = _P_NEIGH
    while (length - 1) * x >= alpha:
        r += 1
        x *= _P_NEIGH
    return r


def stats(seq):
    """(A, W, longest run) of a sequence of card ids."""
    L = len(seq)
    a = w = run = best = 0
    for i in range(L - 1):
        x = seq[i]
        if neighbours(x, seq[i + 1]):
            a += 1
            run += 1
            if run > best:
                best = run
        else:
            run = 0
        for j in range(i + 1, min(L, i + 1 + _WIN)):
            if neighbours(x, seq[j]):
                w += 1
    return a, w, best


class ShuffleCheck:
    def __init__(self):
        self.prints = []  # successor maps (bytearray(52)) of recent rounds, newest last

    # clause: rules:1.1-shuffle, rules:3-unshuffled
    def repeat(self, seq):
        best = 0
        for fp in self.prints:
            m = 0
            for i in range(len(seq) - 1):
                if fp[seq[i]] == seq[i + 1]:
                    m += 1
            if m > best:
                best = m
        return best

    # clause: rules:3-unshuffled
    def check(self, seq):
        """None if the sequence looks shuffled, else a JSON-able finding dict."""
        L = len(seq)
        if L < MIN_LEN:
            return None
        a, w, r = stats(seq)
        found = None
        k = limit(L - 1, _P_NEIGH)
        if a >= k:
            found = ("adjacent", a, k)
        if found is None:
            k = limit(3 * L - 6, _P_NEIGH)
            if w >= k:
                found = ("window", w, k)
        if found is None:
            k = run_limit(L)
            if r >= k:
                found = ("run", r, k)
        if found is None and self.prints:
            m = self.repeat(seq)
            k = limit(L - 1, _P_SUCC, ALPHA / KEEP)
            if m >= k:
                found = ("repeat", m, k)
        if found is None:
            return None
        return {"stat": found[0], "value": found[1], "limit": found[2], "length": L}

    def remember(self, seq):
        if len(seq) < 2:
            return
        fp = self.prints.pop(0) if len(self.prints) >= KEEP else bytearray(52)
        for i in range(52):
            fp[i] = 0xFF
        for i in range(len(seq) - 1):
            fp[seq[i]] = seq[i + 1]
        self.prints.append(fp)

    def to_state(self):
        return [hexs(fp) for fp in self.prints]

    @classmethod
    def from_state(cls, st):
        sc = cls()
        for h in st[-KEEP:]:
            sc.prints.append(unhex(h, 52))
        return sc
