"""A lying shoe for the reveal checks: a simulated shoe's round (host_tools/sim/floor/simshoe.py,
signed with the shoe's own key: an insider with the key, or a shoe whose firmware cheats),
tampered with before it is sealed.

    events = lying_round(shoe, how)      # how: "honest", "changed", "missing", "result"
    shoe._plan = events                  # the shoe sends them, each MAC'd and chained

  changed  a card is swapped after it was dealt: the reveal names another card at one position
           and the result is settled, consistently, on the swapped card (so only the
           commitment can tell)
  missing  one position's card event is never sent; the reveal and the result are honest
  result   the reveal is honest, the result gives seat 1 other cards (settled on them)
"""

from host_tools.engine import reeval, unpacking
from host_tools.reveal import hands_of
from shoe.cards import name
from shoe.games import engine, packing

HOW = ("honest", "changed", "missing", "result")
POS = 7


def _repack(body, hands):
    res = unpacking.unpack(bytes(body["packed"]))
    deck, rnd = res["deck"], res["round"]
    res = engine.evaluate_round(reeval.evaluation_input(res, "fcf-public-1", {}, hands))
    res.update(round=rnd, deck=deck, paytable="fcf-public-1")
    return {"round": rnd, "packed": packing.pack(res)}


def lying_round(shoe, how):
    evs = shoe._round()
    cards = [b for k, b in evs if k == "card"]
    i_rev = next(i for i, (k, _) in enumerate(evs) if k == "reveal")
    i_res = next(i for i, (k, _) in enumerate(evs) if k == "round_result")
    rev = dict(evs[i_rev][1])
    shown = list(rev["cards"])
    if how == "changed":
        other = next(name(c) for c in range(51, -1, -1) if name(c) not in shown)
        shown[POS] = other
        rev["cards"] = shown
        evs[i_rev] = ("reveal", rev)
        evs[i_res] = ("round_result", _repack(evs[i_res][1], hands_of(shown, cards)))
    elif how == "missing":
        evs = [(k, b) for k, b in evs if not (k == "card" and b["position"] == POS)]
    elif how == "result":
        hands = hands_of(shown, cards)
        seat = sorted(k for k in hands if k.isdigit())[0]
        other = [name(c) for c in range(51, -1, -1) if name(c) not in shown][:5]
        hands[seat] = other
        evs[i_res] = ("round_result", _repack(evs[i_res][1], hands))
    return evs
