"""Four Card Frenzy settlement (rules.md 1.6): one dealt, validated round -> round_result.

Called by shoe.games.engine.evaluate_round after every check has passed; pure arithmetic here.
Results are fixed-point odds (units of 1/10000, see shoe.games.paytable): +x paid x to 1, 0 push,
-1 lost; payout = floor(amount * x) for x >= 0, -amount when lost.

Decisions where rules.md is silent: the Odds wager follows "P >= D" under both `ties` variants
(the variant names Ante and Raise only) and does not depend on the dealer opening; a fold (raise
0) loses Ante and Odds whatever the hands, and the Raise entry shows amount 0, result 0.
"""
from micropython import const

from shoe.games import fcf
from shoe.games.paytable import ONE
from shoe.games.settle import pay as _pay
from shoe.games.settle import net_of, pick, wager

_LOST = const(-10000)


def settle(head, table, rules, dealer, six, seats, raises, values, dealer_names, six_name,
           emit=None):
    """Fill head (the result dict) with dealer, all_six_card and seats; see engine for emit.
    values: fcf.value of each seat's hand (computed by the engine's raise check)."""
    dv = fcf.value(dealer)
    opens = fcf.dealer_opens(dv)
    head["dealer"] = {"cards": dealer_names,
                      "best": pick(dealer_names, dealer, fcf.best_cards(dealer, dv)),
                      "category": fcf.CATEGORIES[fcf.category(dv)], "opens": opens}
    head["all_six_card"] = six_name
    head["seats"] = out_seats = {}
    if emit is not None:
        emit(head)
    tie_wins = rules["ties"] == "player"
    raise_wins = rules["raise_when_dealer_not_open"] == "win"
    sections = table.sections
    best_cards = fcf.best_cards
    names_of = fcf.CATEGORIES
    entry = wager  # locals: MicroPython looks globals up by name on every use
    pay = _pay
    limit = table.payout_limit
    allsix = None
    for (key, ids, s), rz, pv in zip(seats, raises, values):
        w = s["wagers"]
        ante = w["ante"]
        cat = pv >> 26  # fcf.category(pv)
        if pv > dv:
            cmp = ONE
        elif pv == dv:
            cmp = ONE if tie_wins else 0
        else:
            cmp = _LOST
        if rz == 0:
            e_ante = entry(ante, _LOST)
            e_odds = entry(ante, _LOST)
            e_raise = entry(0, 0)
        else:
            if cat >= fcf.STRAIGHT:
                name = names_of[cat]
                odds = pay(sections.get("odds.win" if pv >= dv else "odds.bad_beat"), name)
            else:
                odds = 0 if pv >= dv else _LOST
            e_ante = entry(ante, cmp if opens else 0)
            e_odds = entry(ante, odds)
            e_raise = entry(rz, ONE if raise_wins and not opens else cmp)
        e_prime = e_bonus = e_six = None
        a = w.get("prime", 0)
        if a:
            # suits 1 (d) and 2 (h) are red: count them with 6 >> suit & 1
            red = ((6 >> (ids[0] & 3) & 1) + (6 >> (ids[1] & 3) & 1) + (6 >> (ids[2] & 3) & 1)
                   + (6 >> (ids[3] & 3) & 1) + (6 >> (ids[4] & 3) & 1))
            pc = ("five_one_colour" if red == 0 or red == 5 else
                  "four_one_colour" if red == 1 or red == 4 else None)
            e_prime = entry(a, pay(sections.get("prime"), pc))
        a = w.get("four_card_bonus", 0)
        if a:
            bc = None
            if cat >= fcf.TWO_PAIR:
                bc = "royal_flush" if fcf.is_royal(pv) else names_of[cat]
            e_bonus = entry(a, pay(sections.get("four_card_bonus"), bc), bc)
        a = w.get("all_six", 0)
        if a:
            if allsix is None:
                from shoe.games import allsix
            ac = allsix.category(ids, six)
            e_six = entry(a, pay(sections.get("all_six"), ac), ac)
        # dict displays with every key where possible: each added key may cost a resize
        if e_prime is not None and e_bonus is not None and e_six is not None:
            wg = {"ante": e_ante, "odds": e_odds, "raise": e_raise, "prime": e_prime,
                  "four_card_bonus": e_bonus, "all_six": e_six}
        else:
            wg = {"ante": e_ante, "odds": e_odds, "raise": e_raise}
            if e_prime is not None:
                wg["prime"] = e_prime
            if e_bonus is not None:
                wg["four_card_bonus"] = e_bonus
            if e_six is not None:
                wg["all_six"] = e_six
        names = s["cards"]
        net, capped, uncapped = net_of(wg.values(), limit)
        seat = {"cards": names, "best": pick(names, ids, best_cards(ids, pv)),
                "category": names_of[cat], "wagers": wg, "net": net, "capped": capped,
                "uncapped_net": uncapped}
        if emit is None:
            out_seats[key] = seat
        else:
            emit((key, seat))
            seat = wg = None
    return head
