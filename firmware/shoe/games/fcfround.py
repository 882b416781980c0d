"""Four Card Frenzy settlement (rules.md 1.6): one dealt, validated round -> round_result.

Called by shoe.games.engine.evaluate_round after every check has passed; pure arithmetic here.
Results, payouts and the decisions where rules.md is silent: docs/engine.md, "Settlement".
"""
from micropython import const

from shoe.games import fcf
from shoe.games.vocab import LOST, ONE
from shoe.games.settle import pick, wager

GAME = fcf.GAME
_RED = bytes(6 >> (c & 3) & 1 for c in range(52))  # card id -> 1 if red (suit d or h)
_PAIR = const(1)  # fcf.PAIR ... (an attribute lookup costs ~5 us on the chip)
_TWO_PAIR = const(2)
_STRAIGHT = const(3)
_FLUSH = const(4)
_TRIPS = const(5)
_STRAIGHT_FLUSH = const(6)


# frozen: @micropython.native
def best_names(names, ids, v):
    """pick(names, ids, fcf.best_cards(ids, v)) by one sort of (in group << 9 | id << 3 |
    position): the group (pair, two pairs, trips, quads) first, then the highest cards, each
    high to low, as best_cards orders them; straights and flushes through best_cards."""
    cat = v >> 26
    a, b, c, d, e = ids
    if cat == 0:  # high card (the commonest): the four highest
        k = [a << 3, b << 3 | 1, c << 3 | 2, d << 3 | 3, e << 3 | 4]
    elif cat == _STRAIGHT or cat == _FLUSH or cat == _STRAIGHT_FLUSH:
        return pick(names, ids, fcf.best_cards(ids, v))
    else:
        # the group's ranks: payload bits 13.. (pair, trips, full house) or 0.. (two pair,
        # quads); see fcf
        g = v >> 13 & 0x1FFF if cat == _PAIR or cat == _TRIPS else v & 0x1FFF
        k = [(g >> (a >> 2) & 1) << 9 | a << 3, (g >> (b >> 2) & 1) << 9 | b << 3 | 1,
             (g >> (c >> 2) & 1) << 9 | c << 3 | 2, (g >> (d >> 2) & 1) << 9 | d << 3 | 3,
             (g >> (e >> 2) & 1) << 9 | e << 3 | 4]
    k.sort()
    return [names[k[4] & 7], names[k[3] & 7], names[k[2] & 7], names[k[1] & 7]]


# frozen: @micropython.native
def settle(head, table, rules, dealer, six, seats, raises, values, dealer_names, six_name,
           emit=None):
    """Fill head (the result dict) with dealer, all_six_card and seats; see engine for emit.
    values: fcf.value of each seat's hand (computed by the engine's raise check)."""
    # clause: 684a.11(c)
    dv = fcf.value(dealer)
    opens = fcf.dealer_opens(dv)
    head["dealer"] = {"cards": dealer_names,
                      "best": best_names(dealer_names, dealer, dv),
                      "category": fcf.CATEGORIES[fcf.category(dv)], "opens": opens}
    head["all_six_card"] = six_name
    head["seats"] = out_seats = {}
    if emit is not None:
        emit(head)
    tie_wins = rules["ties"] == "player"
    raise_wins = rules["raise_when_dealer_not_open"] == "win"
    sections = table.sections
    no = {}  # a section the table leaves out: nothing pays (dict.get(cat, LOST), cat may be None)
    odds_win = sections.get("odds.win") or no
    odds_bad = sections.get("odds.bad_beat") or no
    sec_prime = sections.get("prime") or no
    sec_bonus = sections.get("four_card_bonus") or no
    sec_six = sections.get("all_six") or no
    best = best_names
    red_of = _RED
    allsix = None
    names_of = fcf.CATEGORIES
    entry = wager  # locals: MicroPython looks globals up by name on every use
    limit = table.payout_limit
    for (key, ids, s), rz, pv in zip(seats, raises, values):
        w = s["wagers"]
        ante = w["ante"]
        cat = pv >> 26  # fcf.category(pv)
        # clause: rules:1.6-ties
        if pv > dv:
            cmp = ONE
        elif pv == dv:
            cmp = ONE if tie_wins else 0
        else:
            cmp = LOST
        # clause: 684a.11(b)(2)
        if rz == 0:
            e_ante = entry(ante, LOST)
            e_odds = entry(ante, LOST)
            e_raise = entry(0, 0)
        else:
            # clause: 684a.11(c)(4)(i)(A), 684a.11(c)(4)(i)(B), rules:1.6-odds-by-hands
            if cat >= _STRAIGHT:
                odds = (odds_win if pv >= dv else odds_bad).get(names_of[cat], LOST)
            else:
                # clause: 684a.11(c)(4)(ii)(A), 684a.11(c)(4)(ii)(B)
                odds = 0 if pv >= dv else LOST
            # clause: 684a.11(c)(2)(i), 684a.11(c)(2)(ii)(A), 684a.11(c)(2)(ii)(B)
            e_ante = entry(ante, cmp if opens else 0)
            e_odds = entry(ante, odds)
            # clause: 684a.11(c)(3)(i), 684a.11(c)(3)(ii), rules:1.6-raise-not-open
            e_raise = entry(rz, ONE if raise_wins and not opens else cmp)
        e_prime = e_bonus = e_six = None
        # clause: 684a.7(d)(2), 684a.11(d)(1)
        a = w.get("prime", 0)
        if a:
            red = (red_of[ids[0]] + red_of[ids[1]] + red_of[ids[2]] + red_of[ids[3]]
                   + red_of[ids[4]])
            pc = ("five_one_colour" if red == 0 or red == 5 else
                  "four_one_colour" if red == 1 or red == 4 else None)
            fx = sec_prime.get(pc, LOST)
            e_prime = entry(a, fx)
        # clause: 684a.7(d)(3), 684a.11(d)(2), rules:1.6-four-card-bonus
        a = w.get("four_card_bonus", 0)
        if a:
            bc = None
            if cat >= _TWO_PAIR:
                bc = "royal_flush" if fcf.is_royal(pv) else names_of[cat]
            fx = sec_bonus.get(bc, LOST)
            e_bonus = entry(a, fx, bc)
        # clause: 684a.7(d)(4), 684a.11(d)(3)
        a = w.get("all_six", 0)
        if a:
            if allsix is None:
                from shoe.games import allsix
            ac = allsix.category(ids, six)
            fx = sec_six.get(ac, LOST)
            e_six = entry(a, fx, ac)
        # dict displays with every key where possible: each added key may cost a resize
        net = None
        if e_prime is not None and e_bonus is not None and e_six is not None:
            wg = {"ante": e_ante, "odds": e_odds, "raise": e_raise, "prime": e_prime,
                  "four_card_bonus": e_bonus, "all_six": e_six}
            if limit is None:  # no cap: the net is the sum of the payouts
                net = (e_ante["payout"] + e_odds["payout"] + e_raise["payout"]
                       + e_prime["payout"] + e_bonus["payout"] + e_six["payout"])
        else:
            wg = {"ante": e_ante, "odds": e_odds, "raise": e_raise}
            if e_prime is not None:
                wg["prime"] = e_prime
            if e_bonus is not None:
                wg["four_card_bonus"] = e_bonus
            if e_six is not None:
                wg["all_six"] = e_six
        names = s["cards"]
        if net is None:
            wins = losses = 0  # settle.net_of, inline
            for e in wg.values():
                p = e["payout"]
                if p > 0:
                    wins += p
                else:
                    losses -= p
            net = uncapped = wins - losses
            # clause: rules:1.6-payout-limit
            capped = limit is not None and wins > limit
            if capped:
                net = limit - losses
        else:
            uncapped = net
            capped = False
        seat = {"cards": names, "best": best(names, ids, pv),
                "category": names_of[cat], "wagers": wg, "net": net, "capped": capped,
                "uncapped_net": uncapped}
        if emit is None:
            out_seats[key] = seat
        else:
            emit((key, seat))
            seat = wg = None
    return head
