"""A stand-in for shoe.games.engine with the same API (used until/besides the real engine).

check_raise follows rules.md 1.5 / 2.2 roughly enough for the lifecycle tests: FCF pair of aces
or better (approximated: two aces, or three of a rank) allows 1-3x, else exactly 1x; HCF: 1x.
evaluate_round echoes the hands so tests can see exactly what the table passed.
"""

from shoe.errors import ShoeError


class EngineError(ShoeError):
    reason = "engine"


def check_wagers(game, wagers):
    if wagers.get("ante", 0) <= 0:
        raise EngineError("no ante", "ante_missing")


def allowed(game, cards, ante):
    if game == "four-card-frenzy":
        ranks = [c[0] for c in cards]
        big = ranks.count("A") >= 2 or any(ranks.count(r) >= 3 for r in ranks)
        return [0, ante, 2 * ante, 3 * ante] if big else [0, ante]
    return [0, ante]


def check_raise(game, seat, cards, ante, raise_amount):
    ok = allowed(game, cards, ante)
    if raise_amount not in ok:
        raise EngineError("raise %r not allowed; allowed %s" % (raise_amount, ok), "bad_raise")


CALLS = []


def evaluate_round(obj):
    CALLS.append(obj)
    if obj.get("paytable") == "boom":
        raise EngineError("pay table boom", "paytable")
    out = {
        "type": "round_result",
        "game": obj["game"],
        "dealer": {"cards": list(obj["dealer"])},
        "seats": {},
    }
    if "all_six_card" in obj:
        out["all_six_card"] = obj["all_six_card"]
    for k, s in obj["seats"].items():
        out["seats"][k] = {"cards": list(s["cards"]), "raise": s["raise"], "net": 0}
    return out
