"""Four Card Frenzy par mathematics (rules.md 1): the pay-independent counts, computed once per
process, and the pay-table-dependent part (the raise strategy, the returns), a few dot products.

Main game. Per suit class of the player's five cards (134,459 classes of 2,598,960 hands), the
dealer's C(47, 5) = 1,533,939 hands are split by opening (pair or better, or king high) and by
comparison with the player (win / tie / lose): six exact counts (host_tools.par.disjoint). Each
pay table and rule set then gives every class its expected Ante, Odds and Raise returns, the
raise that maximizes the hand's expected return (fold, 1x, or 3x where allowed), and the sums.

Side wagers: Four Card Bonus from the class weights (exact enumeration), Prime and All-Six by
combinatorics (host_tools.par.fcfside).
"""

from fractions import Fraction
from math import comb

import numpy as np

from host_tools.par import disjoint, fcfhands
from shoe.games.vocab import LOST, ONE

N_HANDS = comb(52, 5)
N_DEALER = comb(47, 5)
N_PAIRS = N_HANDS * N_DEALER
BONUS = (
    "four_of_a_kind",
    "royal_flush",
    "straight_flush",
    "three_of_a_kind",
    "flush",
    "straight",
    "two_pair",
)
ODDS = ("four_of_a_kind", "straight_flush", "three_of_a_kind", "flush", "straight")

_model: list["Model"] = []


class Model:
    """Pay-independent counts per suit class (numpy arrays, one entry per class)."""

    def __init__(self):
        self.classes = disjoint.Classes(np.arange(52))
        values, lt, le, below = disjoint.counts(self.classes, fcfhands.value5)
        below = below(fcfhands.OPEN)
        self.weight = self.classes.weight.astype(np.int64)
        self.value = values
        self.cat = values // fcfhands.BASE
        self.royal = values == fcfhands.ROYAL
        # pair of aces or better: 1x, 2x or 3x (rules.md 1.5)
        self.three = (self.cat >= 2) | ((self.cat == 1) & (values % fcfhands.BASE // 169 == 12))
        self.win, self.tie, self.lose = lt, le - lt, N_DEALER - le
        low = values <= fcfhands.OPEN  # P <= the lowest opening hand: all D < P do not open
        self.nwin = np.where(low, lt, below)
        self.ntie = np.where(values < fcfhands.OPEN, self.tie, 0)
        self.nlose = below - self.nwin - self.ntie
        self.owin, self.otie, self.olose = (
            self.win - self.nwin,
            self.tie - self.ntie,
            self.lose - self.nlose,
        )
        if int((self.weight * self.win).sum()) != int((self.weight * self.lose).sum()):
            raise ArithmeticError("player wins and dealer wins must balance over all pairs")


def model():
    """The Model, computed on first use (a few seconds) and kept for the process."""
    if not _model:
        _model.append(Model())
    return _model[0]


def _fx(section, cat):
    """Fixed-point odds of cat, LOST when the section or the category is missing."""
    if section is None:
        return LOST
    return section.get(cat, LOST)


class Main:
    """The main game (Ante, Odds, Raise) under one pay table and rule set, with the raise
    that maximizes each hand's expected return. Counts are (player hand, dealer hand) pairs."""

    def __init__(self, m, table, rules):
        win_sec = table.sections.get("odds.win")
        bad_sec = table.sections.get("odds.bad_beat")
        tv = ONE if rules["ties"] == "player" else 0
        raise_wins = rules["raise_when_dealer_not_open"] == "win"
        pays_win = np.zeros(8, dtype=np.int64)
        pays_bad = np.full(8, LOST, dtype=np.int64)
        for c in range(3, 8):
            name = fcfhands.CATEGORIES[c]
            pays_win[c] = _fx(win_sec, name)
            pays_bad[c] = _fx(bad_sec, name)
        self.pays_win, self.pays_bad, self.tv, self.raise_wins = pays_win, pays_bad, tv, raise_wins
        # expected results summed over the dealer's hands, fixed point (exact integers)
        ante = ONE * m.owin + tv * m.otie - ONE * m.olose
        odds = pays_win[m.cat] * (m.win + m.tie) + pays_bad[m.cat] * m.lose
        if raise_wins:
            rz = ONE * m.owin + tv * m.otie - ONE * m.olose + ONE * (m.nwin + m.ntie + m.nlose)
        else:
            rz = ONE * (m.owin + m.nwin) + tv * (m.otie + m.ntie) - ONE * (m.olose + m.nlose)
        fold = -2 * ONE * N_DEALER
        best = np.where(m.three & (rz > 0), 3, 1)
        ev = ante + odds + best * rz
        self.mult = np.where(ev > fold, best, 0)  # a tie in expectation: the smaller wager
        self.ante, self.odds, self.rz, self.fold = ante, odds, rz, fold
        self.m = m

    def per_class_ev(self):
        """Expected net of Ante + Odds + Raise per class, in units of the Ante (floats)."""
        ev = np.where(self.mult > 0, self.ante + self.odds + self.mult * self.rz, self.fold)
        return ev / (ONE * N_DEALER)

    def decision(self, cards):
        """The raise multiple (0 fold, 1, 3) for hands given as card ids (shape (N, 5))."""
        return self.mult[self.m.classes.index(np.sort(np.asarray(cards), axis=1))]

    def outcomes(self):
        """Outcome rows per wager: {wager: [(outcome, pairs, result as Fraction)]}."""
        m, mult = self.m, self.mult
        w = m.weight
        up = mult > 0

        def tot(a, sel=None):
            s = up if sel is None else up & sel
            return int((w * a)[s].sum())

        folded = int(w[~up].sum()) * N_DEALER
        tie = Fraction(self.tv, ONE)
        ante = [
            ("fold", folded, Fraction(-1)),
            ("dealer does not open", tot(m.nwin + m.ntie + m.nlose), Fraction(0)),
            ("dealer opens, player wins", tot(m.owin), Fraction(1)),
            ("dealer opens, tie", tot(m.otie), tie),
            ("dealer opens, dealer wins", tot(m.olose), Fraction(-1)),
        ]
        odds = [("fold", folded, Fraction(-1))]
        for c in range(7, 2, -1):
            name = fcfhands.CATEGORIES[c]
            sel = m.cat == c
            odds.append(
                (
                    name + ", beats or ties the dealer",
                    tot(m.win + m.tie, sel),
                    Fraction(int(self.pays_win[c]), ONE),
                )
            )
            odds.append(
                (
                    name + ", loses (bad beat)",
                    tot(m.lose, sel),
                    Fraction(int(self.pays_bad[c]), ONE),
                )
            )
        low = m.cat < 3
        odds.append(
            ("two pair or lower, beats or ties the dealer", tot(m.win + m.tie, low), Fraction(0))
        )
        odds.append(("two pair or lower, loses", tot(m.lose, low), Fraction(-1)))
        raise_rows = [("fold (no raise)", folded, Fraction(0))]
        for r in (1, 2, 3):
            sel = mult == r
            if not (w * sel).any():
                continue
            if self.raise_wins:
                raise_rows.append(
                    (
                        "%dx, dealer does not open" % r,
                        tot(m.nwin + m.ntie + m.nlose, sel),
                        Fraction(r),
                    )
                )
                win, tie_, lose = m.owin, m.otie, m.olose
            else:
                win, tie_, lose = m.win, m.tie, m.lose
            raise_rows += [
                ("%dx, player wins" % r, tot(win, sel), Fraction(r)),
                ("%dx, tie" % r, tot(tie_, sel), r * tie),
                ("%dx, dealer wins" % r, tot(lose, sel), Fraction(-r)),
            ]
        return {"ante": ante, "odds": odds, "raise": raise_rows}

    def raise_amount(self):
        """Expected Raise amount per hand (Ante units), exact."""
        return Fraction(int((self.m.weight * self.mult).sum()), N_HANDS)

    def strategy(self):
        """Per player category: hands, and hands folded / raised 1x / 3x; plus the weakest
        hands raised and the strongest folded (by value), to state the strategy in words."""
        m = self.m
        rows = []
        for c in range(7, -1, -1):
            sel = m.cat == c
            row = {"category": fcfhands.CATEGORIES[c], "hands": int(m.weight[sel].sum())}
            for r, name in ((0, "fold"), (1, "raise_1x"), (3, "raise_3x")):
                row[name] = int(m.weight[sel & (self.mult == r)].sum())
            rows.append(row)
        return rows

    def borders(self):
        """(weakest raised hand, strongest folded hand, hands of mixed value): card ids of
        class representatives, and how many values hold both raised and folded classes."""
        m = self.m
        up = self.mult > 0
        lo = np.argmin(np.where(up, m.value, np.iinfo(np.int64).max))
        hi = np.argmax(np.where(up, -1, m.value))
        vu, vf = set(m.value[up].tolist()), set(m.value[~up].tolist())
        return m.classes.rep[lo], m.classes.rep[hi], len(vu & vf)


def bonus_counts(m):
    """Four Card Bonus: hands per paying category (royal split out), exact enumeration."""
    out = {}
    for c, name in (
        (7, "four_of_a_kind"),
        (6, "straight_flush"),
        (5, "three_of_a_kind"),
        (4, "flush"),
        (3, "straight"),
        (2, "two_pair"),
    ):
        sel = m.cat == c
        if c == 6:
            out["royal_flush"] = int(m.weight[sel & m.royal].sum())
            sel = sel & ~m.royal
        out[name] = int(m.weight[sel].sum())
    out[None] = N_HANDS - sum(out.values())
    return {k: out[k] for k in BONUS + (None,)}
