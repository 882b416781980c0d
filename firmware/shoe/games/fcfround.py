"""Four Card Frenzy settlement (rules.md 1.6): one dealt, validated round -> round_result.

Called by shoe.games.engine.evaluate_round after every check has passed; pure arithmetic here.
Results are fixed-point odds (units of 1/10000, see shoe.games.paytable): +x paid x to 1, 0 push,
-1 lost; payout = floor(amount * x) for x >= 0, -amount when lost.

Decisions where rules.md is silent: the Odds wager follows "P >= D" under both `ties` variants
(the variant names Ante and Raise only) and does not depend on the dealer opening; a fold (raise
0) loses Ante and Odds whatever the hands, and the Raise entry shows amount 0, result 0.
"""
from micropython import const

from shoe import cards as _cards
from shoe.games import allsix, fcf
from shoe.games.paytable import ONE, odds_number

_LOST = const(-10000)


def wager(amount, fx):
    """The wager entry {amount, result, payout[, rounded]} for fixed-point result fx."""
    if fx < 0:
        return {"amount": amount, "result": -1, "payout": -amount}
    p = amount * fx
    w = {"amount": amount, "result": odds_number(fx), "payout": p // ONE}
    if p % ONE:
        w["rounded"] = True
    return w


def _pay(section, cat):
    if section is None or cat is None:
        return _LOST
    fx = section.get(cat)
    return _LOST if fx is None else fx


def totals(seat, entries, limit):
    """net, capped, uncapped_net from the wager entries (payout limit: rules.md 1.6)."""
    wins = 0
    losses = 0
    for w in entries:
        p = w["payout"]
        if p > 0:
            wins += p
        else:
            losses -= p
    seat["uncapped_net"] = wins - losses
    if limit is not None and wins > limit:
        seat["net"] = limit - losses
        seat["capped"] = True
    else:
        seat["net"] = wins - losses
        seat["capped"] = False


def settle(table, rules, dealer, six, seats, raises):
    dv = fcf.value(dealer)
    opens = fcf.dealer_opens(dv)
    tie_wins = rules["ties"] == "player"
    raise_wins = rules["raise_when_dealer_not_open"] == "win"
    out_seats = {}
    for (key, ids, s), rz in zip(seats, raises):
        w = s["wagers"]
        ante = w["ante"]
        pv = fcf.value(ids)
        cat = fcf.category(pv)
        if pv > dv:
            cmp = ONE
        elif pv == dv:
            cmp = ONE if tie_wins else 0
        else:
            cmp = _LOST
        wg = {}
        if rz == 0:
            wg["ante"] = wager(ante, _LOST)
            wg["odds"] = wager(ante, _LOST)
            wg["raise"] = wager(0, 0)
        else:
            wg["ante"] = wager(ante, cmp if opens else 0)
            if cat >= fcf.STRAIGHT:
                name = fcf.CATEGORIES[cat]
                odds = _pay(table.odds_win if pv >= dv else table.odds_bad_beat, name)
            else:
                odds = 0 if pv >= dv else _LOST
            wg["odds"] = wager(ante, odds)
            wg["raise"] = wager(rz, ONE if raise_wins and not opens else cmp)
        a = w.get("prime", 0)
        if a:
            red = 0
            for c in ids:
                if 1 <= c & 3 <= 2:
                    red += 1
            pc = ("five_one_colour" if red == 0 or red == 5 else
                  "four_one_colour" if red == 1 or red == 4 else None)
            wg["prime"] = wager(a, _pay(table.prime, pc))
        a = w.get("four_card_bonus", 0)
        if a:
            bc = None
            if cat >= fcf.TWO_PAIR:
                bc = "royal_flush" if fcf.is_royal(pv) else fcf.CATEGORIES[cat]
            e = wager(a, _pay(table.four_card_bonus, bc))
            e["category"] = bc
            wg["four_card_bonus"] = e
        a = w.get("all_six", 0)
        if a:
            ac = allsix.category(ids + [six])
            e = wager(a, _pay(table.all_six, ac))
            e["category"] = ac
            wg["all_six"] = e
        seat = {"cards": _cards.names(ids), "best": _cards.names(fcf.best_cards(ids, pv)),
                "category": fcf.CATEGORIES[cat], "wagers": wg}
        totals(seat, wg.values(), table.payout_limit)
        out_seats[key] = seat
    return {"type": "round_result", "game": "four-card-frenzy",
            "dealer": {"cards": _cards.names(dealer),
                       "best": _cards.names(fcf.best_cards(dealer, dv)),
                       "category": fcf.CATEGORIES[fcf.category(dv)], "opens": opens},
            "all_six_card": None if six is None else _cards.name(six),
            "seats": out_seats}
