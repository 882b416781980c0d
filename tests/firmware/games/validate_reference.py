"""The engine's round validation as it was before the one-pass version (three passes over the
seats: cards, wagers, raises), kept as the reference that tests/firmware/games/test_fastpaths.py
compares engine.validate with (same result, or the same error, on every round)."""

from shoe.games import paytable as _paytable
from shoe.games.engine import (  # noqa: F401
    _KNOWN,
    _ROUND_KEYS,
    _SEAT_KEYS,
    _SEAT_NUMBERS,
    _WAGERS,
    FCF,
    HCF,
    MAX_AMOUNT,
    EngineError,
    _check_raise,
    _dups,
    _game,
    _offered,
    _rules,
    check_wagers,
    fail,
    module,
    parse_card,
    parse_cards,
)


def validate(obj):
    """Every check of evaluate_round (raises EngineError) -> the validated round for settle()."""
    if not isinstance(obj, dict):
        fail("round_obj", (obj,))
    game = obj.get("game")
    n = _game(game)
    for k in obj:
        if k not in _ROUND_KEYS or (game == HCF and k == "all_six_card" and obj[k] is not None):
            fail("field", (k,), game)
    if "paytable" not in obj:
        fail("no_table")
    try:
        table = _paytable.load(obj["paytable"], game)
    except _paytable.PaytableError as e:
        raise EngineError(str(e), "paytable") from e
    for k in ("round", "deck"):
        v = obj.get(k)
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 30
        ):
            fail("int_field", k, (v,))
    rules = _rules(game, obj.get("rules"))
    if "dealer" not in obj:
        fail("no_dealer")
    dealer = parse_cards(obj["dealer"], n, "dealer", False)
    # card id -> 0 free, 1..6 seat, 7 dealer, 8 the All-Six card. A card met twice is either
    # twice in one hand (reported first, as "has X twice") or held by an earlier hand.
    owner = bytearray(53)
    for c in dealer:
        if owner[c]:
            _dups(dealer, obj["dealer"], "dealer")
        owner[c] = 7
    seats_in = obj.get("seats")
    if not isinstance(seats_in, dict) or not seats_in:
        fail("seats", (seats_in,))
    keys = []
    for k in seats_in:
        if k not in _SEAT_NUMBERS:
            fail("seat_key", (k,))
        keys.append(k)
    keys.sort()
    six = None
    if game == FCF and obj.get("all_six_card") is not None:
        six = parse_card(obj["all_six_card"], "all_six_card")
        if owner[six]:
            fail("six_dealer", obj["all_six_card"])
        owner[six] = 8
    seats = []
    for k in keys:
        s = seats_in[k]
        if not isinstance(s, dict):
            fail("seat_obj", k, (s,))
        for f in s:
            if f not in _SEAT_KEYS:
                fail("seat_field", k, (f,))
        if "cards" not in s:
            fail("no_cards", k)
        t = _SEAT_NUMBERS[k]
        ids = parse_cards(s["cards"], n, k, False)
        i = 0
        for c in ids:
            o = owner[c]
            if o:
                _dups(ids, s["cards"], k)
                fail(
                    "held",
                    k,
                    s["cards"][i],
                    "the dealer" if o == 7 else "the all_six_card" if o == 8 else "seat %d" % o,
                )
            owner[c] = t
            i += 1
        seats.append((k, ids, s))
    secs = table.sections
    offers_all = True  # most tables offer every optional wager: then no per-seat check
    for key in _WAGERS[game][1 if game == HCF else 2 :]:
        if key not in secs:
            offers_all = False
    known = _KNOWN[game]
    for k, _ids, s in seats:
        w = s.get("wagers")
        if w is None:
            fail("no_wagers", k)
        ok = isinstance(w, dict)  # check_wagers' common case inline; it reports any error
        if ok:
            try:
                for key in w:
                    a = w[key]
                    if (
                        key not in known
                        or a is True
                        or a is False
                        or not 0 <= (a | 0) <= MAX_AMOUNT
                    ):
                        ok = False
                        break
            except TypeError:  # a | 0 of a non-integer
                ok = False
            a = w.get("ante", 0)
            if a == 0 or (game == FCF and a != w.get("odds", 0)):
                ok = False
        if not ok:
            check_wagers(game, w, k)
        if not offers_all:
            _offered(game, table, w, k)
        if six is None and w.get("all_six", 0):
            fail("six_null", k)
    raises = []
    values = []
    g = module(game)
    value = g.value if game == FCF else g.flush_value
    for k, ids, s in seats:
        if "raise" not in s:
            fail("no_raise", k)
        r = s["raise"]
        ante = s["wagers"]["ante"]
        if r is ante:  # the validated Ante itself (1 x, always allowed; `is`: never a float)
            values.append(value(ids))
        else:
            values.append(_check_raise(game, k, ids, ante, r, g))
        raises.append(r)
    return (game, table, rules, dealer, six, seats, raises, values, obj)
