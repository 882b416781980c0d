"""The rows of a par sheet: one wager's entry (its outcomes, return, house edge, hit frequency)
built from exact combination counts; shared by the sheet and the per-game builders."""

from fractions import Fraction


def frac(x):
    return "%d/%d" % (x.numerator, x.denominator)


def outcome(name, combos, total, pays, wagered=1):
    """One outcome row; pays: the result per unit of the wager's base (a Fraction, or None
    when the shoe does not settle it: the progressive's jackpot)."""
    p = Fraction(combos, total)
    row = {
        "outcome": name,
        "combinations": combos,
        "probability": float(p),
        "pays": None if pays is None else float(pays),
    }
    row["contribution"] = None if pays is None else float(p * pays)
    if wagered != 1:
        row["wagered"] = wagered
    return row


def wager(name, title, method, unit, total, rows, wagered=Fraction(1), brief=None):
    """A wager entry: rows are (outcome, combinations, pays) with pays a Fraction or None.
    method: how the figures were found, in full; brief: the same in a few words."""
    ret = sum((Fraction(c, total) * p for _, c, p in rows if p is not None), Fraction(0))
    hit = sum(c for _, c, p in rows if p is None or p > 0)  # None: a jackpot tier
    entry = {
        "wager": name,
        "title": title,
        "method": method,
        "brief": brief or method,
        "unit": unit,
        "total": total,
        "outcomes": [outcome(n, c, total, p) for n, c, p in rows],
        "return": float(ret),
        "return_exact": frac(ret),
        "wagered_per_hand": float(wagered),
        "house_edge": float(-ret / wagered) if wagered else None,
        "hit_frequency": float(Fraction(hit, total)),
    }
    return entry
