"""Pay tables as data (interfaces.md 3): load, validate, and the named example presets.

    table = load("fcf-public-1", "four-card-frenzy")      # a preset name ...
    table = load({"name": ..., "game": ..., ...}, game)    # ... or a JSON document (a dict)

Odds are "x to 1" and may be fractional. They are kept as exact fixed-point integers in units
of 1/10000 (1.5 -> 15000), so money never touches a float:

    payout = amount * odds // 10000          (floor; `rounded` says a fraction was dropped)

More than four decimal places, a negative or non-numeric value, an unknown key or category, or
the wrong game raises PaytableError (reason "paytable") naming the field.

The Table object: .name .game .example .payout_limit (None or int) and, per section, a dict
from category id (or flush length as a string, "4".."7") to fixed-point odds; a section the
document leaves out is None (the table does not offer that wager); a category missing from a
section does not pay. HCF `progressive` maps straight-flush length to a tier name.
"""
from micropython import const

from shoe.games.jsonout import show as _show

ONE = const(10000)  # fixed-point unit of odds
FCF = "four-card-frenzy"
HCF = "high-card-flush"
GAMES = (FCF, HCF)
PRESETS = ("fcf-public-1", "hcf-public-1", "hcf-public-2")

_ODDS_CATS = ("four_of_a_kind", "straight_flush", "three_of_a_kind", "flush", "straight")
_PRIME_CATS = ("five_one_colour", "four_one_colour")
_FCB_CATS = ("four_of_a_kind", "royal_flush", "straight_flush", "three_of_a_kind", "flush",
             "straight", "two_pair")
_A6_CATS = ("six_card_royal_flush", "royal_flush", "straight_flush", "four_of_a_kind",
            "full_house", "flush", "straight", "three_of_a_kind")
_FLUSH_LENS = ("4", "5", "6", "7")
_SF_LENS = ("3", "4", "5", "6", "7")
_COMMON = ("name", "game", "example", "payout_limit", "notes", "illustrative")
_MAX_ODDS = const(1000000)


class PaytableError(ValueError):
    """A pay table that cannot be used; the message names the field."""

    def __init__(self, message):
        super().__init__(message)
        self.reason = "paytable"


class Table:
    def __init__(self, name, game, example, payout_limit):
        self.name = name
        self.game = game
        self.example = example
        self.payout_limit = payout_limit
        self.odds_win = None
        self.odds_bad_beat = None
        self.prime = None
        self.four_card_bonus = None
        self.all_six = None
        self.flush_bonus = None
        self.straight_flush_bonus = None
        self.progressive = None
        self.illustrative = ()


def odds_value(x, field):
    """A JSON number -> fixed-point odds (units of 1/10000), or PaytableError naming field."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PaytableError("pay table %s: odds must be a number, got %s" % (field, _show(x)))
    if not x >= 0:  # also NaN
        raise PaytableError("pay table %s: odds must not be negative, got %s" % (field, _show(x)))
    if x > _MAX_ODDS:
        raise PaytableError("pay table %s: odds above %d to 1" % (field, _MAX_ODDS))
    if isinstance(x, int):
        return x * ONE
    f = x * ONE
    n = int(f + 0.5)
    if abs(f - n) > 1e-6 * (1 + f):
        raise PaytableError("pay table %s: odds may have at most 4 decimal places" % field)
    return n


def odds_number(fx):
    """Fixed-point odds -> the JSON number of a result: an int if whole, else a float."""
    if fx % ONE == 0:
        return fx // ONE
    return fx / ONE


def _section(doc, key, cats, table_name):
    sec = doc.get(key)
    if sec is None:
        return None
    if not isinstance(sec, dict):
        raise PaytableError("pay table %s: must be an object" % key)
    out = {}
    for cat in sec:
        if cat not in cats:
            raise PaytableError("pay table %s: unknown category %s (known: %s)" % (
                key, _show(cat), ", ".join(cats)))
        out[cat] = odds_value(sec[cat], key + "." + cat)
    return out


def _odds(doc):
    sec = doc.get("odds")
    if sec is None:
        return None, None
    if not isinstance(sec, dict):
        raise PaytableError("pay table odds: must be an object")
    win = {}
    bad = {}
    for cat in sec:
        if cat not in _ODDS_CATS:
            raise PaytableError("pay table odds: unknown category %s (known: %s)" % (
                _show(cat), ", ".join(_ODDS_CATS)))
        pair = sec[cat]
        if not isinstance(pair, dict):
            raise PaytableError("pay table odds.%s: must be {\"win\": x, \"bad_beat\": y}" % cat)
        for k in pair:
            if k != "win" and k != "bad_beat":
                raise PaytableError("pay table odds.%s: unknown key %s (win, bad_beat)" % (
                    cat, _show(k)))
        if "win" in pair:
            win[cat] = odds_value(pair["win"], "odds.%s.win" % cat)
        if "bad_beat" in pair:
            bad[cat] = odds_value(pair["bad_beat"], "odds.%s.bad_beat" % cat)
    return win, bad


def _progressive(doc):
    sec = doc.get("progressive")
    if sec is None:
        return None
    if not isinstance(sec, dict):
        raise PaytableError("pay table progressive: must be an object")
    out = {}
    for k in sec:
        if k not in _SF_LENS:
            raise PaytableError("pay table progressive: unknown straight flush length %s "
                                "(known: 3..7)" % _show(k))
        tier = sec[k]
        if not isinstance(tier, str) or not 0 < len(tier) <= 32:
            raise PaytableError("pay table progressive.%s: tier must be a name (1-32 "
                                "characters), got %s" % (k, _show(tier)))
        out[k] = tier
    return out


def validate(doc, game=None):
    """A pay table document (dict) -> Table. `game`, if given, must match doc["game"]."""
    if not isinstance(doc, dict):
        raise PaytableError("pay table must be an object or a preset name, got %s" % _show(doc))
    name = doc.get("name")
    if not isinstance(name, str) or not 0 < len(name) <= 64:
        raise PaytableError("pay table name: must be a string of 1-64 characters")
    g = doc.get("game")
    if g not in GAMES:
        raise PaytableError("pay table game: must be %s or %s, got %s" % (FCF, HCF, _show(g)))
    if game is not None and g != game:
        raise PaytableError("pay table game: table %s is for %s, the round is %s" % (
            _show(name), g, game))
    ex = doc.get("example", False)
    if not isinstance(ex, bool):
        raise PaytableError("pay table example: must be true or false")
    lim = doc.get("payout_limit")
    if lim is not None and (isinstance(lim, bool) or not isinstance(lim, int) or lim < 0):
        raise PaytableError("pay table payout_limit: must be null or a non-negative integer")
    if g == FCF:
        known = _COMMON + ("odds", "prime", "four_card_bonus", "all_six")
    else:
        known = _COMMON + ("flush_bonus", "straight_flush_bonus", "progressive")
    for k in doc:
        if k not in known:
            raise PaytableError("pay table %s: unknown field for %s (known: %s)" % (
                _show(k), g, ", ".join(known)))
    t = Table(name, g, ex, lim)
    ill = doc.get("illustrative", [])
    if not isinstance(ill, list) or not all(isinstance(s, str) and s in known for s in ill):
        raise PaytableError("pay table illustrative: must be a list of section names")
    t.illustrative = tuple(ill)
    if g == FCF:
        t.odds_win, t.odds_bad_beat = _odds(doc)
        t.prime = _section(doc, "prime", _PRIME_CATS, name)
        t.four_card_bonus = _section(doc, "four_card_bonus", _FCB_CATS, name)
        t.all_six = _section(doc, "all_six", _A6_CATS, name)
    else:
        t.flush_bonus = _section(doc, "flush_bonus", _FLUSH_LENS, name)
        t.straight_flush_bonus = _section(doc, "straight_flush_bonus", _SF_LENS, name)
        t.progressive = _progressive(doc)
    return t


_cache = {}


def load(obj_or_name, game=None):
    """A preset name or a pay table document -> a validated Table (presets are cached)."""
    if isinstance(obj_or_name, str):
        t = _cache.get(obj_or_name)
        if t is None:
            t = validate(preset(obj_or_name))
            _cache[obj_or_name] = t
        if game is not None and t.game != game:
            raise PaytableError("pay table game: preset %s is for %s, the round is %s" % (
                _show(obj_or_name), t.game, game))
        return t
    return validate(obj_or_name, game)


def preset(name):
    """The JSON document (a fresh dict) of a named example pay table."""
    if name not in PRESETS:
        raise PaytableError("pay table %s: no such preset (known: %s)" % (
            _show(name), ", ".join(PRESETS)))
    from shoe.games import presets

    return presets.document(name)
