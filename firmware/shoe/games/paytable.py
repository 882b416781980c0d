"""Pay tables as data (interfaces.md 3): load, validate, and the named example presets.

    table = load("fcf-public-1", "four-card-frenzy")      # a preset name ...
    table = load({"name": ..., "game": ..., ...}, game)    # ... or a JSON document (a dict)

Odds are exact fixed-point integers (shoe.games.vocab.ONE = 1/10000): money never touches a
float. What a document may hold, the errors (PaytableError naming the field), `digest(doc)` (a
document named by content, the same on shoe and host) and the PayTable's attributes:
docs/engine.md, "Pay tables".
"""
from shoe.games.pttypes import FCF, HCF, ONE, PayTable, PaytableError  # noqa: F401 (re-exported)
from shoe.games.pttypes import error as _err

PRESETS = ("fcf-public-1", "hcf-public-1", "hcf-public-2")


def odds_number(fx):
    """Fixed-point odds -> the JSON number of a result: an int if whole, else a float."""
    return fx // ONE if fx % ONE == 0 else fx / ONE


def validate(doc, game=None):
    """A pay table document (dict) -> PayTable. `game`, if given, must match doc["game"].

    The checking code (shoe.games.ptcheck) is loaded for the call and, on MicroPython,
    dropped again: a table is validated once, then only used."""
    import sys

    from shoe.games import ptcheck

    try:
        return ptcheck.validate(doc, game)
    finally:
        if sys.implementation.name == "micropython":
            from shoe import forget

            forget("shoe.games.ptcheck")


_cache = {}


def clear_cache():
    """Drop the cached preset tables (loaded again on use)."""
    _cache.clear()


# clause: rules:4-paytable-data
def load(obj_or_name, game=None):
    """A preset name, a pay table document or a PayTable -> a validated one (presets cached)."""
    if isinstance(obj_or_name, PayTable):
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

    from shoe import forget
    from shoe.games import presets

    doc = json.loads(presets.TEXT[PRESETS.index(name)])
    forget("shoe.games.presets")  # the text is not needed again: free it
    return doc


def digest(doc):
    """Hex SHA-256 of a pay table document (a dict) in canonical form: dict keys sorted, every
    number as fixed-point odds (5 and 5.0 are the same). Equal on the shoe and the host."""
    import hashlib

    from shoe.crypto import hexlify

    h = hashlib.sha256()
    _canon(h, doc)
    return hexlify(h.digest())


def _canon(h, x):
    if isinstance(x, dict):
        h.update(b"{")
        for k in sorted(x):
            _canon(h, k)
            _canon(h, x[k])
        h.update(b"}")
    elif isinstance(x, (list, tuple)):
        h.update(b"[")
        for v in x:
            _canon(h, v)
        h.update(b"]")
    elif isinstance(x, str):
        b = x.encode()
        h.update(b"s%d:" % len(b))
        h.update(b)
    elif x is None or isinstance(x, bool):
        h.update(b"n" if x is None else (b"t" if x else b"f"))
    elif isinstance(x, int):
        h.update(b"x%d;" % (x * ONE))
    elif isinstance(x, float):
        h.update(b"x%d;" % round(x * ONE))
    else:
        h.update(b"?")
