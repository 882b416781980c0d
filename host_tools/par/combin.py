"""Small combinatorics for the par sheets: binomials, every k-subset of a deck as a numpy array
in colex order (row i is the subset whose colex index is i), and the colex index of sorted rows.

Colex index of a sorted subset c0 < c1 < ... < c(k-1): sum of C(c_j, j + 1). It numbers the
C(n, k) subsets 0 .. C(n, k) - 1, so a hand can be looked up in an array by its cards.
"""

from math import comb

import numpy as np


def binomials(n, k):
    """int64 table B[a, j] = C(a, j) for a < n + 1, j < k + 1."""
    return np.array([[comb(a, j) for j in range(k + 1)] for a in range(n + 1)], dtype=np.int64)


def colex(rows, table=None):
    """Colex index of each row of ascending card positions (shape (N, k)) -> int64 (N,)."""
    rows = np.asarray(rows)
    k = rows.shape[1]
    b = binomials(max(int(rows.max()) + 1, k), k) if table is None else table
    out = np.zeros(len(rows), dtype=np.int64)
    for j in range(k):
        out += b[rows[:, j], j + 1]
    return out


def subsets(n, k):
    """Every k-subset of range(n) as a (C(n, k), k) int16 array, ascending, row = colex index.

    In colex order the subsets of range(t) come first, so the k-subsets are, for each top card
    t = k-1 .. n-1, the first C(t, k-1) rows of the (k-1)-subsets with t appended."""
    rows = np.zeros((1, 0), dtype=np.int16)
    for j in range(1, k + 1):
        blocks = []
        for t in range(j - 1, n):
            head = rows[: comb(t, j - 1)]
            blocks.append(np.hstack((head, np.full((len(head), 1), t, dtype=np.int16))))
        rows = np.vstack(blocks)
    return rows
