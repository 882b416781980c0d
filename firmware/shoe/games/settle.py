"""Shared settlement pieces for shoe.games.fcfround and shoe.games.hcfround.

Results are fixed-point odds (units of shoe.games.vocab.ONE = 1/10000): +x paid x to 1, 0
push, -1 lost (-10000); payout = floor(amount * x) for x >= 0, -amount when lost
(docs/engine.md, "Settlement").
"""
from micropython import const

# vocab.ONE and vocab.LOST as this module's own constants: immediates in its code, not a global
# lookup at each use (tests/firmware/games/test_rules.py checks they are vocab's)
_ONE = const(10000)
_LOST = const(-10000)

_NO = ()  # "no category key" (a category may be None)


# clause: rules:4-round-down
# frozen: @micropython.native
def wager(amount, fx, category=_NO):
    """The wager entry {amount, result, payout[, rounded][, category]} for fixed-point fx."""
    if fx < 0:
        if category is _NO:
            return {"amount": amount, "result": -1, "payout": -amount}
        return {"amount": amount, "result": -1, "payout": -amount, "category": category}
    p = amount * fx
    r = fx // _ONE if fx % _ONE == 0 else fx / _ONE  # paytable.odds_number, inlined (hot)
    if category is _NO:
        w = {"amount": amount, "result": r, "payout": p // _ONE}
    else:
        w = {"amount": amount, "result": r, "payout": p // _ONE, "category": category}
    if p % _ONE:
        w["rounded"] = True
    return w


# clause: rules:4-paytable-data
# frozen: @micropython.native
def pay(section, cat):
    """Fixed-point odds of cat in a pay table section; a missing section or category loses."""
    if section is None or cat is None:
        return _LOST
    fx = section.get(cat)
    return _LOST if fx is None else fx


# clause: rules:1.6-payout-limit
# frozen: @micropython.native
def net_of(entries, limit):
    """(net, capped, uncapped_net) of wager entries: net = min(wins, limit) - losses."""
    wins = 0
    losses = 0
    for w in entries:
        p = w["payout"]
        if p > 0:
            wins += p
        else:
            losses -= p
    if limit is not None and wins > limit:
        return limit - losses, True, wins - losses
    return wins - losses, False, wins - losses


# frozen: @micropython.native
def pick(names, ids, chosen):
    """The input's own name strings for the chosen ids (no new strings on a small heap). A loop,
    not a comprehension: that would be a function made and called each time."""
    out = []
    for c in chosen:
        out.append(names[ids.index(c)])
    return out
