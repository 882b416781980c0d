"""Pay table validation (interfaces.md 3), loaded only while a table is checked.

validate(doc, game) -> shoe.games.paytable.PayTable or PaytableError naming the field: unknown
field or category, negative / non-numeric / too precise odds (at most 4 decimal places: odds
are fixed-point integers in units of 1/10000), wrong game (docs/engine.md, "Pay tables").
Use shoe.games.paytable.load().
"""
from micropython import const

from shoe.games.pttypes import FCF, HCF, ONE, PayTable
from shoe.games.pttypes import error as _err

_MAX_ODDS = const(1000000)
_SF = ("3", "4", "5", "6", "7")
# game -> ((section, categories), ...); "odds" holds {"win": x, "bad_beat": y} per category
_SPEC = {
    FCF: (("odds", ("four_of_a_kind", "straight_flush", "three_of_a_kind", "flush", "straight")),
          ("prime", ("five_one_colour", "four_one_colour")),
          ("four_card_bonus", ("four_of_a_kind", "royal_flush", "straight_flush",
                               "three_of_a_kind", "flush", "straight", "two_pair")),
          ("all_six", ("six_card_royal_flush", "royal_flush", "straight_flush",
                       "four_of_a_kind", "full_house", "flush", "straight", "three_of_a_kind"))),
    HCF: (("flush_bonus", ("4", "5", "6", "7")), ("straight_flush_bonus", _SF),
          ("progressive", _SF)),
}
_COMMON = ("name", "game", "example", "payout_limit", "notes", "illustrative")


def odds_value(x, field):
    """A JSON number -> fixed-point odds (units of 1/10000), or PaytableError naming field."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _err("pt_number", field, (x,))
    if not 0 <= x <= _MAX_ODDS:  # also NaN
        raise _err("pt_range", field, _MAX_ODDS, (x,))
    if isinstance(x, int):
        return x * ONE
    f = x * ONE
    n = int(f + 0.5)
    if abs(f - n) > 1e-6 * (1 + f):
        raise _err("pt_decimals", field)
    return n


def _object(doc, field):
    if not isinstance(doc, dict):
        raise _err("pt_object", field, (doc,))
    return doc


def _check_keys(doc, known, field, what):
    for k in doc:
        if k not in known:
            raise _err("pt_unknown", field, what, (k,), ", ".join(known))


# clause: rules:4-paytable-data
def validate(doc, game=None):
    """A pay table document (dict) -> PayTable. `game`, if given, must match doc["game"]."""
    _object(doc, "document")
    name = doc.get("name")
    if not isinstance(name, str) or not 0 < len(name) <= 64:
        raise _err("pt_name", "name")
    g = doc.get("game")
    if not isinstance(g, str) or g not in _SPEC:
        raise _err("pt_game", "game", (g,))
    if game is not None and g != game:
        raise _err("pt_other_game", "game", (name,), g, game)
    ex = doc.get("example", False)
    if not isinstance(ex, bool):
        raise _err("pt_example", "example")
    lim = doc.get("payout_limit")
    if lim is not None and (isinstance(lim, bool) or not isinstance(lim, int) or lim < 0):
        raise _err("pt_limit", "payout_limit")
    spec = _SPEC[g]
    known = _COMMON + tuple(s for s, c in spec)
    _check_keys(doc, known, "document", "field")
    ill = doc.get("illustrative", [])
    if not isinstance(ill, list) or not all(s in known for s in ill):
        raise _err("pt_illustrative", "illustrative")
    sections = {}
    for sec, cats in spec:
        body = doc.get(sec)
        if body is None:
            continue
        _check_keys(_object(body, sec), cats, sec, "category")
        if sec == "odds":
            win = sections["odds.win"] = {}
            bad = sections["odds.bad_beat"] = {}
            for cat in body:
                field = "odds." + cat
                pair = _object(body[cat], field)
                _check_keys(pair, ("win", "bad_beat"), field, "key")
                if "win" in pair:
                    win[cat] = odds_value(pair["win"], field + ".win")
                if "bad_beat" in pair:
                    bad[cat] = odds_value(pair["bad_beat"], field + ".bad_beat")
        elif sec == "progressive":
            for k in body:
                t = body[k]
                if not isinstance(t, str) or not 0 < len(t) <= 32:
                    raise _err("pt_tier", "progressive." + k, (t,))
            sections[sec] = dict(body)
        else:
            sections[sec] = {cat: odds_value(body[cat], sec + "." + cat) for cat in body}
    return PayTable(name, g, ex, lim, tuple(ill), sections)
