"""Re-evaluate a reported round result with the engine, on the host.

The shoe settles on the device; the host proves it: the wagers and raise amounts in the result
are fed to the same engine (shoe.games.engine under CPython) with the round's cards, and every
seat's outcome must come out identical. The cards are the revealed ones when the caller has the
round's reveal (`hands`: host_tools.reveal.RoundWatch.hands, every card checked against its
commitment), else the result's own. A disagreement means a fault, a tampered result or a
version mismatch.
"""

from shoe.games import engine
from shoe.games.vocab import FCF


def evaluation_input(result, paytable=None, rules=None, hands=None):
    obj = {
        "game": result["game"],
        "paytable": paytable or result.get("paytable"),
        "rules": rules if rules is not None else result.get("rules", {}),
        "dealer": hands["dealer"] if hands else result["dealer"]["cards"],
        "seats": {},
    }
    if result["game"] == FCF:
        obj["all_six_card"] = hands.get("all_six") if hands else result.get("all_six_card")
    for seat, s in result["seats"].items():
        wagers = {k: v["amount"] for k, v in s["wagers"].items() if k != "raise"}
        obj["seats"][seat] = {
            "cards": hands.get(seat, []) if hands else s["cards"],
            "wagers": wagers,
            "raise": s["wagers"].get("raise", {}).get("amount", 0),
        }
    return obj


def disagreements(result, paytable=None, rules=None, hands=None):
    """[] when the engine agrees; otherwise a list of 'seat N: field reported X, engine Y'.
    With `hands` (the revealed cards) the round is settled from them, and a result whose cards
    are not those is a disagreement too."""
    out = []
    if hands:
        if result["dealer"].get("cards") != hands.get("dealer"):
            out.append(
                "dealer: cards reported %r, revealed %r"
                % (result["dealer"].get("cards"), hands.get("dealer"))
            )
        for seat, s in result["seats"].items():
            if s.get("cards") != hands.get(seat):
                out.append(
                    "seat %s: cards reported %r, revealed %r"
                    % (seat, s.get("cards"), hands.get(seat))
                )
    try:
        again = engine.evaluate_round(evaluation_input(result, paytable, rules, hands))
    except (ValueError, KeyError, TypeError) as e:
        return out + ["the result cannot be re-evaluated: %s" % e]
    for k in ("category", "best", "opens", "qualifies"):
        if result["dealer"].get(k) != again["dealer"].get(k):
            out.append(
                "dealer: %s reported %r, engine %r"
                % (k, result["dealer"].get(k), again["dealer"].get(k))
            )
    for seat, s in again["seats"].items():
        r = result["seats"].get(seat)
        if r is None:
            out.append("seat %s missing from the report" % seat)
            continue
        for k in ("category", "best", "net", "wagers"):
            if r.get(k) != s.get(k):
                out.append("seat %s: %s reported %r, engine %r" % (seat, k, r.get(k), s.get(k)))
    return out
