"""Pay tables as data (interfaces.md 3): load, validate, and the named example presets.

    table = load("fcf-public-1", "four-card-frenzy")      # a preset name ...
    table = load({"name": ..., "game": ..., ...}, game)    # ... or a JSON document (a dict)

Odds are "x to 1" and may be fractional. They are kept as exact fixed-point integers in units
of 1/10000 (1.5 -> 15000), so money never touches a float:

    payout = amount * odds // 10000          (floor; `rounded` says a fraction was dropped)

More than four decimal places, a negative or non-numeric value, an unknown key or category, or
the wrong game raises PaytableError (reason "paytable") naming the field.

A Table has .name .game .example .payout_limit (None or int) .illustrative (section names) and
.sections: section name -> {category id (HCF: length "3".."7") -> fixed-point odds}; the FCF
Odds wager is split into sections "odds.win" and "odds.bad_beat"; HCF "progressive" maps a
straight-flush length to a tier name. A section the document leaves out is absent (the table
does not offer that wager); a category missing from a section does not pay.
"""
from micropython import const

ONE = const(10000)  # fixed-point unit of odds
FCF = "four-card-frenzy"
HCF = "high-card-flush"
PRESETS = ("fcf-public-1", "hcf-public-1", "hcf-public-2")
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


class PaytableError(ValueError):
    """A pay table that cannot be used; the message names the field."""

    reason = "paytable"


def _err(code, *args):
    """The PaytableError of a message code (texts in shoe.games.messages)."""
    from shoe.games import messages

    text = messages.text(code, args)[1]
    messages.unload()
    return PaytableError(text)


class Table:
    def __init__(self, name, game, example, payout_limit, illustrative, sections):
        self.name = name
        self.game = game
        self.example = example
        self.payout_limit = payout_limit
        self.illustrative = illustrative
        self.sections = sections


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


def odds_number(fx):
    """Fixed-point odds -> the JSON number of a result: an int if whole, else a float."""
    return fx // ONE if fx % ONE == 0 else fx / ONE


def _object(doc, field):
    if not isinstance(doc, dict):
        raise _err("pt_object", field, (doc,))
    return doc


def _check_keys(doc, known, field, what):
    for k in doc:
        if k not in known:
            raise _err("pt_unknown", field, what, (k,), ", ".join(known))


def validate(doc, game=None):
    """A pay table document (dict) -> Table. `game`, if given, must match doc["game"]."""
    _object(doc, "document")
    name = doc.get("name")
    if not isinstance(name, str) or not 0 < len(name) <= 64:
        raise _err("pt_name", "name")
    g = doc.get("game")
    if g not in _SPEC:
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
    return Table(name, g, ex, lim, tuple(ill), sections)


_cache = {}


def load(obj_or_name, game=None):
    """A preset name, a pay table document or a Table -> a validated Table (presets cached)."""
    if isinstance(obj_or_name, Table):
        if game is not None and obj_or_name.game != game:
            raise _err("pt_other_game", "game", (obj_or_name.name,), obj_or_name.game, game)
        return obj_or_name
    if not isinstance(obj_or_name, str):
        return validate(obj_or_name, game)
    t = _cache.get(obj_or_name)
    if t is None:
        t = _cache[obj_or_name] = validate(preset(obj_or_name))
    if game is not None and t.game != game:
        raise _err("pt_other_game", "game", (obj_or_name,), t.game, game)
    return t


def preset(name):
    """The JSON document (a fresh dict) of a named example pay table."""
    if name not in PRESETS:
        raise _err("pt_preset", (name,), ", ".join(PRESETS))
    import json
    import sys

    from shoe.games import presets

    doc = json.loads(presets.TEXT[PRESETS.index(name)])
    sys.modules.pop("shoe.games.presets", None)  # the text is not needed again: free it
    import shoe.games

    if "presets" in shoe.games.__dict__:
        delattr(shoe.games, "presets")
    return doc
