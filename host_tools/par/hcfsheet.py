"""The High Card Flush part of a par sheet: exact figures (host_tools.par.hcf, hcfmain,
hcfhand) and the simulation's figures beside them (host_tools.par.sheet builds the rest).

The main game does not depend on the pay table (Ante and Raise pay even money), so it is
computed once per process. Strategy: the best raise for each flush value (hcfmain), except
for ten-high three-card flushes, where each hand takes its own best decision (hcfhand): the
only flushes whose best decision depends on the off-suit cards (tests/host_tools/par check
every other hand's decision is the same for all hands of its flush).
"""

from fractions import Fraction
from math import comb

import numpy as np

from host_tools.par import hcf, hcfhand, hcfmain
from host_tools.par.entry import wager
from shoe.games.vocab import LOST, ONE

N_HANDS = comb(52, 7)
N_DEALER = comb(45, 7)
N_PAIRS = N_HANDS * N_DEALER
MAIN_METHOD = (
    "exact: all 133,784,560 x 45,379,620 (player, dealer) pairs by per-suit "
    "bivariate generating functions per flush value; ten-high three-card flushes "
    "hand by hand (per-suit generating functions of each hand)"
)
SIDE_METHOD = "exact: per-suit generating functions over C(52,7) = 133,784,560 hands"
MAIN_BRIEF = "exact, all (player, dealer) pairs; best raise (per hand where it matters)"
SIDE_BRIEF = "exact, generating functions"
_RANKS = "23456789TJQKA"

_main: list["Main"] = []
_memo: dict = {}


def _cached(key, fn):
    if key not in _memo:
        _memo[key] = fn()
    return _memo[key]


def _mask_name(m):
    return "-".join(_RANKS[r] for r in range(12, -1, -1) if m >> r & 1)


class Main:
    """The exact main game under the best strategy described in the module docstring."""

    def __init__(self):
        g = hcfmain.Game()
        self.g = g
        ten = np.flatnonzero((g.length == 3) & (g.mask >> 8 == 1))  # top card T (rank 8)
        self.split = {}
        for i in ten:
            s = hcfhand.split(int(g.mask[i]))
            lt, le = int(g.nq[i] + g.win[i]), int(g.nq[i] + g.win[i] + g.tie[i])
            if s["all"] != (int(g.nq[i]), lt, le) or s["raised"] + s["folded"] != g.hands[i]:
                raise ArithmeticError("hand-by-hand and per-value counts disagree")
            self.split[int(i)] = s
        # outcome sums: per raise multiple r: [nq, win, tie, lose] pairs; folded pairs
        by = {r: np.zeros(4, dtype=object) for r in (1, 2, 3)}
        folded = 0
        hands = {0: 0, 1: 0, 2: 0, 3: 0}
        for i in range(len(g.x)):
            s = self.split.get(i)
            if s is not None:
                by[1] += [s["nq"], s["win"], s["tie"], s["lose"]]
                folded += s["folded"] * N_DEALER
                hands[1] += s["raised"]
                hands[0] += s["folded"]
                continue
            r = int(g.mult[i])
            hands[r] += int(g.hands[i])
            if r == 0:
                folded += int(g.total[i])
            else:
                by[r] += [int(g.nq[i]), int(g.win[i]), int(g.tie[i]), int(g.lose[i])]
        self.by, self.folded, self.hands = by, folded, hands
        edge = g.win - g.lose  # the flush-value strategy alone, for comparison
        self.flush_value_return = Fraction(
            int(np.where(g.mult > 0, g.nq + edge + g.mult * edge, -g.total).sum()), N_PAIRS
        )
        self.values = {int(x): int(r) for x, r in zip(g.x, g.mult)}
        self.ten = {int(g.x[i]) for i in ten}

    def decide(self, cards):
        """Raise multiples for seat hands (card ids, shape (N, 7))."""
        pop, val, _ = hcf.suit_tables()
        out = np.zeros(len(cards), dtype=np.int64)
        for n, row in enumerate(np.asarray(cards).tolist()):
            m = hcf.masks_of(row)
            x = max(int(val[s]) for s in m)
            if x in self.ten:
                out[n] = 1 if hcfhand.raises(m) else 0
            else:
                out[n] = self.values[x]
        return out


def main():
    if not _main:
        _main.append(Main())
    return _main[0]


def _outcomes(mm):
    ante = [("fold", mm.folded, Fraction(-1))]
    rz = [("fold (no raise)", mm.folded, Fraction(0))]
    names = (
        "dealer does not qualify",
        "dealer qualifies, player higher",
        "tie",
        "dealer qualifies, dealer higher",
    )
    tot = [sum(int(mm.by[r][k]) for r in mm.by) for k in range(4)]
    for name, n, p in zip(names, tot, (1, 1, 0, -1)):
        ante.append((name, n, Fraction(p)))
    for r in (1, 2, 3):
        if not any(mm.by[r]):
            continue
        for name, n, p in zip(names, mm.by[r], (0, 1, 0, -1)):
            rz.append(("%dx, %s" % (r, name), int(n), Fraction(p * r)))
    return ante, rz


def _lengths_rows(section, counts, keys):
    rows = []
    lost = 0
    for n in sorted(counts, reverse=True):
        key = str(n)
        if key in keys and n >= int(keys[0]):
            rows.append(("%d cards" % n, counts[n], Fraction(section.get(key, LOST), ONE)))
        else:
            lost += counts[n]
    rows.append(("shorter (no pay)", lost, Fraction(-1)))
    return rows


def exact(table, rules):
    """(sheet fields, decide) for a validated HCF table."""
    mm = main()
    ante, rz = _outcomes(mm)
    ra = Fraction(sum(r * c for r, c in mm.hands.items()), N_HANDS)
    wagers = [
        wager(
            "ante", "Ante", MAIN_METHOD, "(player, dealer) pairs", N_PAIRS, ante, brief=MAIN_BRIEF
        ),
        wager(
            "raise",
            "Raise",
            MAIN_METHOD,
            "(player, dealer) pairs",
            N_PAIRS,
            rz,
            wagered=ra,
            brief=MAIN_BRIEF,
        ),
    ]
    ret = sum((Fraction(w["return_exact"]) for w in wagers), Fraction(0))
    ten = [
        {"flush": _mask_name(int(mm.g.mask[i])), "raised": s["raised"], "folded": s["folded"]}
        for i, s in sorted(mm.split.items())
    ]
    by_len = []
    for n in range(2, 8):
        sel = mm.g.length == n
        row = {"flush_length": n, "hands": int(mm.g.hands[sel].sum())}
        for r, name in ((0, "fold"), (1, "raise_1x"), (2, "raise_2x"), (3, "raise_3x")):
            row[name] = int(mm.g.hands[sel & (mm.g.mult == r)].sum())
        by_len.append(row)
    for row in by_len:  # the ten-high flushes: hand by hand
        if row["flush_length"] == 3:
            moved = sum(t["folded"] for t in ten) - sum(
                int(mm.g.hands[i]) for i, s in mm.split.items() if mm.g.mult[i] == 0
            )
            row["fold"] += moved
            row["raise_1x"] -= moved
    fv = mm.flush_value_return
    main_ = {
        "return_per_hand": float(ret),
        "return_exact": "%d/%d" % (ret.numerator, ret.denominator),
        "initial_wager": 1,
        "average_raise": float(ra),
        "house_edge_per_hand": float(-ret),
        "element_of_risk": float(-ret / (1 + ra)),
        "method": MAIN_METHOD,
        "brief": MAIN_BRIEF,
        "raise_frequency": float(Fraction(N_HANDS - mm.hands[0], N_HANDS)),
        "push_frequency": float(Fraction(sum(int(mm.by[r][2]) for r in mm.by), N_PAIRS)),
        "strategy": {
            "rule": "raise the maximum with a flush of 4 or more cards (1x with "
            "4, 2x with 5, 3x with 6-7); raise 1x with a three-card "
            "flush jack-high or better; fold a two-card flush and a "
            "three-card flush 9-high or lower; a ten-high three-card "
            "flush: raise when its exact expected return is larger "
            "(depends on the off-suit cards; table)",
            "by_length": by_len,
            "ten_high": ten,
            "flush_value_only": {
                "rule": "raise every three-card flush T-8-6 or better, the "
                "maximum with 4+ (the best that ignores off-suit cards)",
                "house_edge_per_hand": float(-fv),
            },
        },
    }
    secs = table.sections
    nq = _cached("nq", hcf.not_qualifying)
    fields = {
        "wagers": wagers,
        "main_game": main_,
        "dealer": {
            "qualifies": float(Fraction(N_HANDS - nq, N_HANDS)),
            "qualifies_exact": "%d/%d" % (N_HANDS - nq, N_HANDS),
            "method": SIDE_METHOD,
        },
    }
    lengths = _cached("lengths", hcf.flush_lengths)
    runs = _cached("runs", hcf.sf_runs)
    if "flush_bonus" in secs:
        wagers.append(
            wager(
                "flush_bonus",
                "Flush Bonus",
                SIDE_METHOD,
                "seven-card hands",
                N_HANDS,
                _lengths_rows(secs["flush_bonus"], lengths, hcf.LENGTHS),
                brief=SIDE_BRIEF,
            )
        )
    if "straight_flush_bonus" in secs:
        wagers.append(
            wager(
                "straight_flush_bonus",
                "Straight Flush Bonus",
                SIDE_METHOD + " (ace high or low)",
                "seven-card hands",
                N_HANDS,
                _lengths_rows(secs["straight_flush_bonus"], runs, hcf.SF_LENGTHS),
                brief=SIDE_BRIEF,
            )
        )
    if "progressive" in secs:
        prog = secs["progressive"]
        rows = []
        lost = 0
        for n in sorted(runs, reverse=True):
            tier = prog.get(str(n)) if n >= 3 else None
            if tier is None:
                lost += runs[n]
            else:
                rows.append(("%d-card straight flush: %s" % (n, tier), runs[n], None))
        rows.append(("no tier", lost, Fraction(-1)))
        w = wager(
            "progressive",
            "Progressive",
            SIDE_METHOD,
            "seven-card hands",
            N_HANDS,
            rows,
            brief=SIDE_BRIEF,
        )
        w["house_edge"] = None  # it depends on the jackpot awards, not on this table
        w["note"] = (
            "the shoe reports the tier; the award comes from the host's jackpot "
            "meter: the return shown is the shoe's own settlement (a hit counts 0, "
            "a miss -1); the game's return adds sum(probability x award in units)"
        )
        wagers.append(w)
    return fields, mm.decide
