"""Re-evaluate a reported round result from its raw cards with the engine, on the host.

The shoe settles on the device; the host proves it: the cards, wagers and raise amounts in the
result are fed to the same engine (shoe.games.engine under CPython) and every seat's outcome must
come out identical. A disagreement means a fault, a tampered result or a version mismatch.
"""
from shoe.games import engine
from shoe.games.vocab import FCF


def evaluation_input(result, paytable=None, rules=None):
    obj = {"game": result["game"], "paytable": paytable or result.get("paytable"),
           "rules": rules if rules is not None else result.get("rules", {}),
           "dealer": result["dealer"]["cards"], "seats": {}}
    if result["game"] == FCF:
        obj["all_six_card"] = result.get("all_six_card")
    for seat, s in result["seats"].items():
        wagers = {k: v["amount"] for k, v in s["wagers"].items() if k != "raise"}
        obj["seats"][seat] = {"cards": s["cards"], "wagers": wagers,
                              "raise": s["wagers"].get("raise", {}).get("amount", 0)}
    return obj


def disagreements(result, paytable=None, rules=None):
    """[] when the engine agrees; otherwise a list of 'seat N: field reported X, engine Y'."""
    try:
        again = engine.evaluate_round(evaluation_input(result, paytable, rules))
    except (ValueError, KeyError, TypeError) as e:
        return ["the result cannot be re-evaluated: %s" % e]
    out = []
    for k in ("category", "best", "opens", "qualifies"):
        if result["dealer"].get(k) != again["dealer"].get(k):
            out.append("dealer: %s reported %r, engine %r" % (k, result["dealer"].get(k),
                                                              again["dealer"].get(k)))
    for seat, s in again["seats"].items():
        r = result["seats"].get(seat)
        if r is None:
            out.append("seat %s missing from the report" % seat)
            continue
        for k in ("category", "best", "net", "wagers"):
            if r.get(k) != s.get(k):
                out.append("seat %s: %s reported %r, engine %r" % (seat, k, r.get(k), s.get(k)))
    return out
