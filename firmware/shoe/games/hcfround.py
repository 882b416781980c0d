"""High Card Flush settlement (rules.md 2.2): one dealt, validated round -> round_result.

Called by shoe.games.engine.evaluate_round after every check has passed. The results, the
bonuses and the progressive (the shoe reports the tier; the host pays the jackpot):
docs/engine.md, "Settlement".
"""
from micropython import const

from shoe.games import hcf
from shoe.games.settle import net_of, pay, wager

# vocab.ONE and vocab.LOST as this module's own constants: immediates in its code, not a global
# lookup at each use (tests/firmware/games/test_rules.py checks they are vocab's)
_ONE = const(10000)
_LOST = const(-10000)

GAME = hcf.GAME


_LENGTHS = ("0", "1", "2", "3", "4", "5", "6", "7")   # a pay table's keys (no str(n) each time)


# frozen: @micropython.native
def _pay(section, n):
    return pay(section, _LENGTHS[n])


# frozen: @micropython.native
def _flush(v, cards):
    return {"length": hcf.length(v), "cards": cards}


# frozen: @micropython.native
def settle(head, table, rules, dealer, seats, raises, values, dealer_names, emit=None):
    """Fill head (the result dict) with dealer and seats; see engine for emit.
    values: hcf.flush_value of each seat's hand (computed by the engine's raise check)."""
    dv = hcf.flush_value(dealer)
    q = hcf.qualifies(dv)
    dcards = hcf.flush_names(dealer, dealer_names, dv)[0]
    head["dealer"] = {"cards": dealer_names, "flush": _flush(dv, dcards),
                      "qualifies": q}
    head["seats"] = out_seats = {}
    if emit is not None:
        emit(head)
    for (key, ids, s), rz, pv in zip(seats, raises, values):
        w = s["wagers"]
        cards, sf = hcf.flush_names(ids, s["cards"], pv)
        # clause: rules:2.2-fold
        if rz == 0:
            wg = {"ante": wager(w["ante"], _LOST), "raise": wager(0, 0)}
        # clause: rules:2.2-not-qualified
        elif not q:
            wg = {"ante": wager(w["ante"], _ONE), "raise": wager(rz, 0)}
        else:
            # clause: rules:2.2-qualified
            r = _ONE if pv > dv else 0 if pv == dv else _LOST
            wg = {"ante": wager(w["ante"], r), "raise": wager(rz, r)}
        # clause: 678a.7(d)(2)
        a = w.get("flush_bonus", 0)
        if a:
            n = hcf.length(pv)
            fx = _pay(table.sections.get("flush_bonus"), n) if n >= 4 else _LOST
            wg["flush_bonus"] = wager(a, fx)
        # clause: 678a.7(d)(3)
        a = w.get("straight_flush_bonus", 0)
        if a:
            wg["straight_flush_bonus"] = wager(
                a, _pay(table.sections.get("straight_flush_bonus"), sf) if sf >= 3 else _LOST)
        # clause: 678a.7(d)(4)
        a = w.get("progressive", 0)
        if a:
            tier = None
            prog = table.sections.get("progressive")
            if sf >= 3 and prog is not None:
                tier = prog.get(str(sf))
            e = wager(a, 0 if tier is not None else _LOST)
            e["tier"] = tier
            wg["progressive"] = e
        # clause: rules:1.6-payout-limit
        net, capped, uncapped = net_of(wg.values(), table.payout_limit)
        seat = {"cards": s["cards"], "flush": _flush(pv, cards), "straight_flush": sf,
                "wagers": wg, "net": net, "capped": capped, "uncapped_net": uncapped}
        if emit is None:
            out_seats[key] = seat
        else:
            emit((key, seat))
            seat = wg = None
    return head
