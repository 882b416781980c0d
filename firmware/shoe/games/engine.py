"""The game engine's entry points: validate a dealt round and settle it (rules.md 1, 2).

Integration API (called by the round lifecycle, shoe.table, and by `shoectl eval`):

    evaluate_round(obj, emit=None) -> dict
        obj: the interfaces.md 4 input (card names; "paytable" a document, a preset name or
        a shoe.games.paytable.Table; "rules"; "dealer"; FCF "all_six_card"; "seats":
        {"1": {"cards", "wagers", "raise"}}; optional integers "round" and "deck" are copied
        to the result). Returns the round_result dict of interfaces.md 4. Invalid input
        raises EngineError before anything is settled: never a partial result.
    check_wagers(game, wagers, seat=None, table=None) -> None
        one seat's wagers at round opening; with a table also "is this wager offered"
    check_raise(game, seat, cards, ante, raise_amount) -> None
        cards: the seat's card names (5 FCF, 7 HCF); the error names the seat, the hand and
        the allowed amounts; 0 (fold) is always allowed.
    EngineError(message, reason): a ValueError with a short `.reason`: bad_round, bad_card,
        card_count, duplicate_card, all_six_card, bad_wager, ante_odds, optional_without_ante,
        ante_missing, wager_not_offered, invalid_raise, bad_rules, paytable.

Results beyond interfaces.md 4: a wager that dropped a fraction of a unit when rounding down
carries "rounded": true; each seat carries "uncapped_net" (the net before the payout limit);
four_card_bonus / all_six entries carry "category" (null when the hand does not qualify) and
progressive "tier" (null when no tier is hit). A fold shows the Raise as amount 0, result 0.

Other entry points: shoe.games.paytable.load(obj_or_name, game) and .PRESETS (pay tables),
shoe.games.packing.pack(result) / unpack(data) (binary result for the wire), shoe.games.fcf /
hcf / allsix (hand values), shoe.games.evalrun (the `shoectl eval` device side).
Settlement: shoe.games.fcfround / hcfround. Message texts: shoe.games.messages (loaded only
when an error is raised, to keep RAM free while settling).
"""
from micropython import const

from shoe.games import paytable as _paytable

FCF = "four-card-frenzy"
HCF = "high-card-flush"
MAX_SEATS = const(6)
MAX_AMOUNT = const(1000000000)  # per wager, in the smallest currency unit

# The notation of shoe.cards (id = rank * 4 + suit), repeated here so that settling a round
# does not need that module in RAM; tests/engine check that both agree on every card.
_RANKS = "23456789TJQKA"
_SUITS = "cdhs"
_WAGERS = {FCF: ("ante", "odds", "prime", "four_card_bonus", "all_six"),
           HCF: ("ante", "flush_bonus", "straight_flush_bonus", "progressive")}
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


def fail(code, *args):
    """Raise the EngineError of a message code (texts in shoe.games.messages)."""
    from shoe.games import messages

    reason, text = messages.text(code, args)
    messages.unload()
    raise EngineError(text, reason)


def _game(game):
    if game != FCF and game != HCF:
        fail("game", (game,))
    return 5 if game == FCF else 7


def _what(what):
    # a seat key stands for "seat K cards": formatted only when an error needs it
    return what if isinstance(what, str) and len(what) > 1 else "seat %s cards" % what


def parse_card(name, what):
    if isinstance(name, str) and len(name) == 2 and name != "CV":
        r = _RANKS.find(name[0])
        s = _SUITS.find(name[1])
        if r >= 0 and s >= 0:
            return r * 4 + s
    fail("card", _what(what), (name,))


def parse_cards(names, count, what):
    """Card names -> ids, checking type, count, notation and duplicates inside the hand.
    `what` names the hand in errors ("dealer"), or is a seat key (for "seat K cards")."""
    if not isinstance(names, list):
        fail("hand_list", _what(what), count, (names,))
    if len(names) != count:
        fail("hand_count", _what(what), count, len(names))
    ids = []
    for n in names:
        ids.append(parse_card(n, what))
    for i in range(1, count):
        c = ids[i]
        for j in range(i):
            if c == ids[j]:
                fail("hand_dup", _what(what), names[i])
    return ids


def check_wagers(game, wagers, seat=None, table=None):
    """One seat's wagers at round opening (rules.md 1.3, 2.2). Raises EngineError.

    table (a preset name, a document or a Table), if given: also refuse an optional wager the
    pay table does not offer."""
    _game(game)
    where = "" if seat is None else "seat %s: " % seat
    if not isinstance(wagers, dict):
        fail("wagers_obj", where, (wagers,))
    known = _WAGERS[game]
    for k in wagers:
        if k not in known:
            fail("wager_unknown", where, (k,), game, ", ".join(known))
    amounts = []
    for k in known:
        a = wagers.get(k, 0)
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a <= MAX_AMOUNT:
            fail("wager_amount", where, k, MAX_AMOUNT, (a,))
        amounts.append(a)
    if game == FCF:
        if amounts[0] == 0 and amounts[1] == 0:
            fail("optional_fcf" if any(amounts[2:]) else "ante_odds_missing", where)
        if amounts[0] != amounts[1]:
            fail("ante_odds", where, amounts[0], amounts[1])
    elif amounts[0] == 0:
        fail("optional_hcf" if any(amounts[1:]) else "ante_missing", where)
    if table is not None:
        try:
            t = _paytable.load(table, game)
        except _paytable.PaytableError as e:
            raise EngineError(str(e), "paytable")
        _offered(game, t, wagers, "" if seat is None else seat)


def _offered(game, table, w, seat):
    for key in _WAGERS[game][1 if game == HCF else 2:]:
        if key not in table.sections and w.get(key, 0):
            fail("not_offered", seat, key, (table.name,))


def check_raise(game, seat, cards, ante, raise_amount):
    """Raise or fold (rules.md 1.5, 2.2). Raises EngineError naming seat, hand, allowed amounts."""
    ids = parse_cards(cards, _game(game), "seat %s cards" % seat)
    _check_raise(game, seat, ids, ante, raise_amount)


def _check_raise(game, seat, ids, ante, amount):
    if isinstance(amount, bool) or not isinstance(amount, int):
        fail("raise_type", seat, (amount,))
    if game == FCF:
        from shoe.games import fcf as g

        v = g.value(ids)
    else:
        from shoe.games import hcf as g

        v = g.flush_value(ids)
    mult = g.raise_multiples(v)
    if amount != 0 and (amount % ante or amount // ante not in mult):
        from shoe.games import messages

        hand = messages.describe(game, ids, v)
        fail("raise_value", seat, amount, hand, ", ".join(str(ante * k) for k in mult))


def _rules(game, rules):
    spec = _RULES[game]
    out = {}
    for key, values in spec:
        out[key] = values[0]
    if rules is None:
        return out
    if not isinstance(rules, dict):
        fail("rules_obj", (rules,))
    for k in rules:
        for key, values in spec:
            if k == key:
                if rules[k] not in values:
                    fail("rule_value", k, ", ".join(values), (rules[k],))
                out[k] = rules[k]
                break
        else:
            fail("rule_unknown", (k,), game)
    return out


def evaluate_round(obj, emit=None):
    """Validate and settle one dealt round (interfaces.md 4) -> the round_result dict.

    emit (for the eval runner on a small heap): if given, it is called with the result dict
    (its "seats" still empty) once everything is validated, then with (key, seat) for each
    seat in order; those seats are not kept in the returned dict."""
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
        raise EngineError(str(e), "paytable")
    for k in ("round", "deck"):
        v = obj.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                              or not 0 <= v < 1 << 30):
            fail("int_field", k, (v,))
    rules = _rules(game, obj.get("rules"))
    if "dealer" not in obj:
        fail("no_dealer")
    dealer = parse_cards(obj["dealer"], n, "dealer")
    seats_in = obj.get("seats")
    if not isinstance(seats_in, dict) or not seats_in:
        fail("seats", (seats_in,))
    keys = []
    for k in seats_in:
        if not (isinstance(k, str) and len(k) == 1 and "1" <= k <= "6"):
            fail("seat_key", (k,))
        keys.append(k)
    keys.sort()
    owner = bytearray(53)  # card id -> 0 free, 1..6 seat, 7 dealer, 8 the All-Six card
    for c in dealer:
        owner[c] = 7
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
        ids = parse_cards(s["cards"], n, k)
        for i in range(n):
            o = owner[ids[i]]
            if o:
                fail("held", k, s["cards"][i], "the dealer" if o == 7 else
                     "the all_six_card" if o == 8 else "seat %d" % o)
            owner[ids[i]] = int(k)
        seats.append((k, ids, s))
    for k, ids, s in seats:
        w = s.get("wagers")
        if w is None:
            fail("no_wagers", k)
        check_wagers(game, w, k)
        _offered(game, table, w, k)
        if six is None and w.get("all_six", 0):
            fail("six_null", k)
    raises = []
    for k, ids, s in seats:
        if "raise" not in s:
            fail("no_raise", k)
        _check_raise(game, k, ids, s["wagers"]["ante"], s["raise"])
        raises.append(s["raise"])
    head = {"type": "round_result", "game": game}
    for k in ("round", "deck"):
        if obj.get(k) is not None:
            head[k] = obj[k]
    if game == FCF:
        from shoe.games import fcfround

        return fcfround.settle(head, table, rules, dealer, six, seats, raises, obj["dealer"],
                               obj.get("all_six_card"), emit)
    from shoe.games import hcfround

    return hcfround.settle(head, table, rules, dealer, seats, raises, obj["dealer"], emit)
