"""The game engine's entry points: validate a dealt round and settle it (rules.md 1, 2).

Integration API (called by the round lifecycle, shoe.table, and by `shoectl eval`):

    evaluate_round(obj) -> dict
        obj: the interfaces.md 4 input (card names; "paytable" a document or a preset name;
        "rules"; "dealer"; FCF "all_six_card"; "seats": {"1": {"cards", "wagers", "raise"}}).
        Returns the round_result dict of interfaces.md 4. Invalid input raises EngineError;
        a partial result is never returned.
    check_wagers(game, wagers) -> None       one seat's wagers at round opening
    check_raise(game, seat, cards, ante, raise_amount) -> None
        cards: the seat's card names (5 FCF, 7 HCF); the error names the seat, the hand and
        the allowed amounts; 0 (fold) is always allowed.
    EngineError(message, reason): a ValueError with a short `.reason`: bad_round, bad_card,
        card_count, duplicate_card, all_six_card, bad_wager, ante_odds, optional_without_ante,
        ante_missing, wager_not_offered, invalid_raise, bad_rules, paytable.

Results beyond interfaces.md 4: a wager that dropped a fraction of a unit when rounding down
carries "rounded": true; each seat carries "uncapped_net" (the net before the payout limit).
Settlement lives in shoe.games.fcfround and shoe.games.hcfround.
"""
from shoe import cards as _cards
from shoe.games import paytable as _paytable
from shoe.games.jsonout import show

FCF = _paytable.FCF
HCF = _paytable.HCF
MAX_SEATS = 6
MAX_AMOUNT = 1000000000  # per wager, in the smallest currency unit

_FCF_WAGERS = ("ante", "odds", "prime", "four_card_bonus", "all_six")
_HCF_WAGERS = ("ante", "flush_bonus", "straight_flush_bonus", "progressive")
_SEAT_KEYS = ("cards", "wagers", "raise")
_ROUND_KEYS = ("game", "paytable", "rules", "dealer", "all_six_card", "seats", "round", "deck")
_RULES = {FCF: (("ties", ("player", "push")),
                ("raise_when_dealer_not_open", ("compare", "win"))),
          HCF: ()}


class EngineError(ValueError):
    """Invalid round input; `reason` is a short code for reports."""

    def __init__(self, message, reason="bad_round"):
        super().__init__(message)
        self.reason = reason


def _hand_size(game):
    return 5 if game == FCF else 7


def parse_cards(names, count, what):
    """Card names -> ids, checking type, count, notation and duplicates inside the hand."""
    if not isinstance(names, list):
        raise EngineError("%s must be a list of %d cards, got %s" % (what, count, show(names)),
                          "bad_card")
    if len(names) != count:
        raise EngineError("%s must have %d cards, got %d" % (what, count, len(names)),
                          "card_count")
    ids = []
    for n in names:
        ids.append(parse_card(n, what))
    for i in range(1, count):
        if ids[i] in ids[:i]:
            raise EngineError("%s has %s twice" % (what, names[i]), "duplicate_card")
    return ids


def parse_card(name, what):
    if isinstance(name, str) and len(name) == 2 and name != "CV":
        try:
            return _cards.parse(name)
        except ValueError:
            pass
    raise EngineError("%s: not a card: %s (rank 23456789TJQKA + suit cdhs, e.g. \"As\")" % (
        what, show(name)), "bad_card")


def _amount(wagers, key, seat):
    a = wagers.get(key, 0)
    if isinstance(a, bool) or not isinstance(a, int) or a < 0 or a > MAX_AMOUNT:
        raise EngineError("%swager %s must be an integer 0..%d, got %s" % (
            seat, key, MAX_AMOUNT, show(a)), "bad_wager")
    return a


def check_wagers(game, wagers, seat=None):
    """One seat's wagers at round opening (rules.md 1.3, 2.2). Raises EngineError."""
    where = "" if seat is None else "seat %s: " % seat
    if game not in (FCF, HCF):
        raise EngineError("game must be %s or %s, got %s" % (FCF, HCF, show(game)), "bad_round")
    if not isinstance(wagers, dict):
        raise EngineError("%swagers must be an object, got %s" % (where, show(wagers)),
                          "bad_wager")
    known = _FCF_WAGERS if game == FCF else _HCF_WAGERS
    for k in wagers:
        if k not in known:
            raise EngineError("%sunknown wager %s for %s (known: %s)" % (
                where, show(k), game, ", ".join(known)), "bad_wager")
    amounts = [_amount(wagers, k, where) for k in known]
    if game == FCF:
        ante, odds = amounts[0], amounts[1]
        if ante == 0 and odds == 0:
            if any(amounts[2:]):
                raise EngineError("%soptional wagers need Ante and Odds" % where,
                                  "optional_without_ante")
            raise EngineError("%sAnte and Odds are required" % where, "ante_odds")
        if ante != odds:
            raise EngineError("%sAnte and Odds must be equal, got ante %d, odds %d" % (
                where, ante, odds), "ante_odds")
    elif amounts[0] == 0:
        if any(amounts[1:]):
            raise EngineError("%soptional wagers need an Ante" % where, "optional_without_ante")
        raise EngineError("%sthe Ante is required" % where, "ante_missing")


def allowed_raises(game, ids, ante):
    """(value, allowed amounts) for a seat's hand: 0 (fold) first."""
    if game == FCF:
        from shoe.games import fcf

        v = fcf.value(ids)
        mult = fcf.raise_multiples(v)
    else:
        from shoe.games import hcf

        v = hcf.flush_value(ids)
        mult = hcf.raise_multiples(v)
    return v, (0,) + tuple(ante * k for k in mult)


def describe(game, ids, v):
    """'pair (Kd Kh 9s 4c)' / 'flush of 5 (Ah Kh 9h 4h 2h)' for messages."""
    if game == FCF:
        from shoe.games import fcf

        return "%s (%s)" % (fcf.CATEGORIES[fcf.category(v)],
                            " ".join(_cards.names(fcf.best_cards(ids, v))))
    from shoe.games import hcf

    return "flush of %d (%s)" % (hcf.length(v), " ".join(_cards.names(hcf.flush_cards(ids, v))))


def check_raise(game, seat, cards, ante, raise_amount):
    """Raise or fold (rules.md 1.5, 2.2). Raises EngineError naming seat, hand, allowed amounts."""
    if game not in (FCF, HCF):
        raise EngineError("game must be %s or %s, got %s" % (FCF, HCF, show(game)), "bad_round")
    ids = parse_cards(cards, _hand_size(game), "seat %s cards" % seat)
    _check_raise_ids(game, seat, ids, ante, raise_amount)


def _check_raise_ids(game, seat, ids, ante, raise_amount):
    if isinstance(raise_amount, bool) or not isinstance(raise_amount, int):
        raise EngineError("seat %s: raise must be an integer (0 = fold), got %s" % (
            seat, show(raise_amount)), "invalid_raise")
    v, allowed = allowed_raises(game, ids, ante)
    if raise_amount not in allowed:
        raise EngineError("seat %s: raise %d not allowed with %s: allowed %s or 0 (fold)" % (
            seat, raise_amount, describe(game, ids, v),
            ", ".join(str(a) for a in allowed[1:])), "invalid_raise")
    return v


def _rules(game, rules):
    spec = _RULES[game]
    out = {}
    for key, values in spec:
        out[key] = values[0]
    if rules is None:
        return out
    if not isinstance(rules, dict):
        raise EngineError("rules must be an object, got %s" % show(rules), "bad_rules")
    for k in rules:
        for key, values in spec:
            if k == key:
                if rules[k] not in values:
                    raise EngineError("rules %s must be one of %s, got %s" % (
                        k, ", ".join(values), show(rules[k])), "bad_rules")
                out[k] = rules[k]
                break
        else:
            raise EngineError("unknown rule %s for %s" % (show(k), game), "bad_rules")
    return out


def evaluate_round(obj):
    """Validate and settle one dealt round (interfaces.md 4) -> the round_result dict."""
    if not isinstance(obj, dict):
        raise EngineError("a round must be an object, got %s" % show(obj), "bad_round")
    game = obj.get("game")
    if game not in (FCF, HCF):
        raise EngineError("game must be %s or %s, got %s" % (FCF, HCF, show(game)), "bad_round")
    for k in obj:
        if k not in _ROUND_KEYS or (game == HCF and k == "all_six_card" and obj[k] is not None):
            raise EngineError("unknown field %s in a %s round" % (show(k), game), "bad_round")
    if "paytable" not in obj:
        raise EngineError("paytable is missing (a document or a preset name)", "paytable")
    try:
        table = _paytable.load(obj["paytable"], game)
    except _paytable.PaytableError as e:
        raise EngineError(str(e), "paytable")
    for k in ("round", "deck"):
        v = obj.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0
                              or v >= 1 << 30):
            raise EngineError("%s must be a non-negative integer, got %s" % (k, show(v)),
                              "bad_round")
    rules = _rules(game, obj.get("rules"))
    n = _hand_size(game)
    if "dealer" not in obj:
        raise EngineError("dealer cards are missing", "card_count")
    dealer = parse_cards(obj["dealer"], n, "dealer")
    seats_in = obj.get("seats")
    if not isinstance(seats_in, dict) or not seats_in:
        raise EngineError("seats must be an object with 1..%d seats, got %s" % (
            MAX_SEATS, show(seats_in)), "bad_round")
    keys = []
    for k in seats_in:
        if not (isinstance(k, str) and len(k) == 1 and "1" <= k <= "6"):
            raise EngineError("seat %s: seats are numbered \"1\"..\"6\"" % show(k), "bad_round")
        keys.append(k)
    keys.sort()
    seen = {}
    for c in dealer:
        seen[c] = "dealer"
    six = None
    if game == FCF:
        a6 = obj.get("all_six_card")
        if a6 is not None:
            six = parse_card(a6, "all_six_card")
            if six in seen:
                raise EngineError("all_six_card %s is also in the dealer's hand" % a6,
                                  "duplicate_card")
            seen[six] = "the all_six_card"
    seats = []
    for k in keys:
        s = seats_in[k]
        if not isinstance(s, dict):
            raise EngineError("seat %s must be an object, got %s" % (k, show(s)), "bad_round")
        for f in s:
            if f not in _SEAT_KEYS:
                raise EngineError("seat %s: unknown field %s" % (k, show(f)), "bad_round")
        if "cards" not in s:
            raise EngineError("seat %s: cards are missing" % k, "card_count")
        ids = parse_cards(s["cards"], n, "seat %s cards" % k)
        for i in range(n):
            other = seen.get(ids[i])
            if other is not None:
                raise EngineError("seat %s has %s, also held by %s" % (k, s["cards"][i], other),
                                  "duplicate_card")
            seen[ids[i]] = "seat " + k
        seats.append((k, ids, s))
    for k, ids, s in seats:
        if "wagers" not in s:
            raise EngineError("seat %s: wagers are missing" % k, "bad_wager")
        check_wagers(game, s["wagers"], k)
        _offered(game, table, s["wagers"], k)
    if game == FCF and six is None:
        for k, ids, s in seats:
            if s["wagers"].get("all_six", 0):
                raise EngineError("seat %s has an All-Six Bonus wager but all_six_card is "
                                  "null" % k, "all_six_card")
    raises = []
    for k, ids, s in seats:
        if "raise" not in s:
            raise EngineError("seat %s: raise is missing (0 = fold)" % k, "invalid_raise")
        _check_raise_ids(game, k, ids, s["wagers"]["ante"], s["raise"])
        raises.append(s["raise"])
    if game == FCF:
        from shoe.games import fcfround

        out = fcfround.settle(table, rules, dealer, six, seats, raises)
    else:
        from shoe.games import hcfround

        out = hcfround.settle(table, rules, dealer, seats, raises)
    for k in ("round", "deck"):
        if obj.get(k) is not None:
            out[k] = obj[k]
    return out


def _offered(game, table, wagers, seat):
    if game == FCF:
        sections = (("prime", table.prime),
                    ("four_card_bonus", table.four_card_bonus), ("all_six", table.all_six))
    else:
        sections = (("flush_bonus", table.flush_bonus),
                    ("straight_flush_bonus", table.straight_flush_bonus),
                    ("progressive", table.progressive))
    for key, sec in sections:
        if sec is None and wagers.get(key, 0):
            raise EngineError("seat %s: wager %s is not offered by pay table %s" % (
                seat, key, show(table.name)), "wager_not_offered")
