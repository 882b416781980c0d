"""The game engine's entry points: validate a dealt round and settle it (rules.md 1, 2).

    evaluate_round(obj, emit=None) -> the round_result dict (interfaces.md 4), or EngineError
    check_wagers(game, wagers, seat=None, table=None)    one seat's wagers at round opening
    check_raise(game, seat, cards, ante, raise_amount)   raise or fold

The API, the error reasons, the result fields beyond interfaces.md 4 and the modules behind it:
docs/engine.md.
"""
from micropython import const
from shoe.errors import ShoeError

from shoe.games import paytable as _paytable

from shoe.games.vocab import FCF, HCF, OPTIONAL
MAX_AMOUNT = const(1000000000)  # per wager, in the smallest currency unit

# Card name -> id in the notation of shoe.cards (id = rank * 4 + suit), repeated here so that
# settling a round does not need that module in RAM; tests/engine check that both agree on every
# card. One dict lookup: on the RP2040 a str subscript such as name[0] costs ~36 us, this ~3 us.
_IDS = {"2c": 0, "2d": 1, "2h": 2, "2s": 3, "3c": 4, "3d": 5, "3h": 6, "3s": 7, "4c": 8, "4d": 9,
        "4h": 10, "4s": 11, "5c": 12, "5d": 13, "5h": 14, "5s": 15, "6c": 16, "6d": 17, "6h": 18,
        "6s": 19, "7c": 20, "7d": 21, "7h": 22, "7s": 23, "8c": 24, "8d": 25, "8h": 26, "8s": 27,
        "9c": 28, "9d": 29, "9h": 30, "9s": 31, "Tc": 32, "Td": 33, "Th": 34, "Ts": 35, "Jc": 36,
        "Jd": 37, "Jh": 38, "Js": 39, "Qc": 40, "Qd": 41, "Qh": 42, "Qs": 43, "Kc": 44, "Kd": 45,
        "Kh": 46, "Ks": 47, "Ac": 48, "Ad": 49, "Ah": 50, "As": 51}
# the wagers a seat places, in order: the main ones, then the optional ones
_WAGERS = {FCF: ("ante", "odds") + OPTIONAL[FCF], HCF: ("ante",) + OPTIONAL[HCF]}
# wager name -> 1 for an optional wager (offered or not by the pay table), 0 for a main one
_KNOWN = {FCF: {"ante": 0, "odds": 0, "prime": 1, "four_card_bonus": 1, "all_six": 1},
          HCF: {"ante": 0, "flush_bonus": 1, "straight_flush_bonus": 1, "progressive": 1}}
_SEAT_NUMBERS = {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6}
_SEAT_KEYS = {"cards": 0, "wagers": 0, "raise": 0}
_ROUND_KEYS = {"game": 0, "paytable": 0, "rules": 0, "dealer": 0, "all_six_card": 0, "seats": 0,
               "round": 0, "deck": 0}  # a dict: `in` a tuple of strings costs ~15 us on the chip
_RULES = {FCF: {"ties": ("player", "push"),
               "raise_when_dealer_not_open": ("compare", "win")},
          HCF: {}}  # rule -> allowed values, the first is the default


class EngineError(ShoeError):
    """Invalid round input; `reason` is a short code for reports."""

    reason = "bad_round"


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
    try:
        return _IDS[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name (a list, a dict)
        pass
    fail("card", _what(what), (name,))


# frozen: @micropython.native
def parse_cards(names, count, what, dups=True):
    """Card names -> ids, checking type, count, notation and duplicates inside the hand.
    `what` names the hand in errors ("dealer"), or is a seat key (for "seat K cards").
    dups=False: the caller checks duplicates (evaluate_round, with its card owner table)."""
    if not isinstance(names, list):
        fail("hand_list", _what(what), count, (names,))
    if len(names) != count:
        fail("hand_count", _what(what), count, len(names))
    ids = []
    put = ids.append
    table = _IDS
    try:
        for n in names:
            put(table[n])
    except (KeyError, TypeError):
        for n in names:  # the first bad name, in order
            parse_card(n, what)
    if dups:
        _dups(ids, names, what)
    return ids


def _dups(ids, names, what):
    for i in range(1, len(ids)):
        c = ids[i]
        for j in range(i):
            if c == ids[j]:
                fail("hand_dup", _what(what), names[i])


def _seat_fields(k, s):
    """Raise for a seat that is not an object or has an unknown field, or no cards; return if
    only its wagers or raise are missing (reported later, in the order of validate)."""
    if not isinstance(s, dict):
        fail("seat_obj", k, (s,))
    for f in s:
        if f not in _SEAT_KEYS:
            fail("seat_field", k, (f,))
    if "cards" not in s:
        fail("no_cards", k)


# frozen: @micropython.native
def _seat_cards(k, names, n, owner, t):
    """Raise for seat k's hand: a bad name first, then a card twice, then a card another hand
    holds (owner: card -> hand tag; this hand's cards may be tagged t already)."""
    ids = parse_cards(names, n, k, False)
    _dups(ids, names, k)
    for i in range(n):
        o = owner[ids[i]]
        if o and o != t:
            fail("held", k, names[i], "the dealer" if o == 7 else
                 "the all_six_card" if o == 8 else "seat %d" % o)
    fail("hand_dup", _what(k), "?")  # not reached: the caller found a bad, doubled or held card


# clause: 684a.7(d)(1), 678a.7(d)(1), 678a.7(d)(4), rules:1.3-optional-needs-ante
def check_wagers(game, wagers, seat=None, table=None):
    """One seat's wagers at round opening (rules.md 1.3, 2.2). Raises EngineError.

    table (a preset name, a document or a PayTable), if given: also refuse an optional wager the
    pay table does not offer. (evaluate_round checks the common case inline, then calls this.)"""
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


# clause: rules:1.3-offered
def _offered(game, table, w, seat):
    for key in OPTIONAL[game]:
        if key not in table.sections and w.get(key, 0):
            fail("not_offered", seat, key, (table.name,))


def check_raise(game, seat, cards, ante, raise_amount):
    """Raise or fold (rules.md 1.5, 2.2). Raises EngineError naming seat, hand, allowed amounts."""
    ids = parse_cards(cards, _game(game), "seat %s cards" % seat)
    _check_raise(game, seat, ids, ante, raise_amount, module(game))


_mods = [None, None]  # the last game's hand module and settlement module, loaded on first use


def forget_modules():
    """Let go of the kept game modules (host_tools/engine/evalrun.py, to free a small heap)."""
    _mods[0] = _mods[1] = None


def module(game, settlement=False):
    """fcf / hcf, or with `settlement` fcfround / hcfround, kept: an import costs ~0.25 ms."""
    i = 1 if settlement else 0
    m = _mods[i]
    if m is None or m.GAME != game:
        if game == FCF:
            if settlement:
                from shoe.games import fcfround as m
            else:
                from shoe.games import fcf as m
        elif settlement:
            from shoe.games import hcfround as m
        else:
            from shoe.games import hcf as m
        _mods[i] = m
    return m


# clause: 684a.11(b)(1), rules:2.2-raise-caps, rules:1.5-refused
def _check_raise(game, seat, ids, ante, amount, g):
    """-> the hand's value (fcf.value / hcf.flush_value), settlement uses it again."""
    try:
        if amount is True or amount is False:
            raise TypeError
        amount | 0  # only integers have |
    except TypeError:
        fail("raise_type", seat, (amount,))
    v = g.value(ids) if game == FCF else g.flush_value(ids)
    if amount != 0 and amount != ante:  # 0 (fold) and 1 x Ante are always allowed
        mult = g.raise_multiples(v)
        if amount % ante or amount // ante not in mult:
            from shoe.games import messages

            hand = messages.describe(game, ids, v)
            fail("raise_value", seat, amount, hand, ", ".join(str(ante * k) for k in mult))
    return v


# clause: rules:1.6-ties, rules:1.6-raise-not-open
def _rules(game, rules):
    spec = _RULES[game]
    out = {}
    for key in spec:
        out[key] = spec[key][0]
    if rules is None:
        return out
    if not isinstance(rules, dict):
        fail("rules_obj", (rules,))
    for k in rules:
        values = spec.get(k)
        if values is None:
            fail("rule_unknown", (k,), game)
        if rules[k] not in values:
            fail("rule_value", k, ", ".join(values), (rules[k],))
        out[k] = rules[k]
    return out


def evaluate_round(obj, emit=None):
    """Validate and settle one dealt round (interfaces.md 4) -> the round_result dict.

    emit (for the eval runner on a small heap): if given, it is called with the result dict
    (its "seats" still empty) once everything is validated, then with (key, seat) for each
    seat in order; those seats are not kept in the returned dict."""
    return settle(validate(obj), emit)


# frozen: @micropython.native
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
        raise EngineError(str(e), "paytable")
    for k in ("round", "deck"):
        v = obj.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                              or not 0 <= v < 1 << 30):
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
    secs = table.sections
    opt = OPTIONAL[game]
    offers_all = True  # most tables offer every optional wager: then no per-seat check
    for key in opt:
        if key not in secs:
            offers_all = False
    known = _KNOWN[game]
    g = module(game)
    value = g.value if game == FCF else g.flush_value
    ids_of = _IDS
    numbers = _SEAT_NUMBERS
    seats = []
    raises = []
    values = []
    # One pass over the seats. The errors keep their order (every seat's fields and cards, then
    # every seat's wagers, then every seat's raise): a card error is raised at once; wagers or
    # a raise that are not the common case set `later`, and _later() checks them in order.
    later = False
    for k in keys:
        s = seats_in[k]
        if not isinstance(s, dict) or len(s) != 3 or "cards" not in s or "wagers" not in s \
                or "raise" not in s:
            _seat_fields(k, s)  # raises, unless only the wagers or the raise are missing
            later = True
        names = s["cards"]
        if not isinstance(names, list) or len(names) != n:
            parse_cards(names, n, k, False)  # raises
        t = numbers[k]
        ids = []
        try:
            for x in names:
                c = ids_of[x]
                if owner[c]:
                    raise KeyError
                owner[c] = t
                ids.append(c)
        except (KeyError, TypeError):  # TypeError: an unhashable name
            _seat_cards(k, names, n, owner, t)  # raises
        seats.append((k, ids, s))
        if later:
            continue
        w = s["wagers"]
        r = s["raise"]
        try:  # check_wagers' and _check_raise's common case (a | 0: TypeError if not an int)
            if not isinstance(w, dict):
                raise TypeError
            for key in w:
                a = w[key]
                if key not in known or a is True or a is False or not 0 <= (a | 0) <= MAX_AMOUNT:
                    raise TypeError
            ante = w.get("ante", 0)
            # clause: 684a.7(d)(1), 678a.7(d)(1), rules:1.3-optional-needs-ante
            if ante == 0 or (n == 5 and ante != w.get("odds", 0)) or (
                    six is None and w.get("all_six", 0)):
                raise TypeError
            if not offers_all:
                for key in opt:
                    if key not in secs and w.get(key, 0):
                        raise TypeError
            v = value(ids)
            if r is not ante:  # 1 x Ante (the validated int itself) and a fold: always allowed
                if r is True or r is False:
                    raise TypeError
                r | 0
                # clause: 684a.11(b)(1), rules:2.2-raise-caps
                if r != 0 and r != ante and (r % ante or r // ante not in g.raise_multiples(v)):
                    raise TypeError
        except TypeError:
            later = True
            continue
        raises.append(r)
        values.append(v)
    if later:
        return _later(game, table, rules, dealer, six, seats, obj, g)
    return (game, table, rules, dealer, six, seats, raises, values, obj)


def _later(game, table, rules, dealer, six, seats, obj, g):
    """The rest of validate() for a round whose wagers or raises are not the common case:
    every seat's wagers, then every seat's raise, in seat order; the first error raises."""
    for k, ids, s in seats:
        w = s.get("wagers")
        if w is None:
            fail("no_wagers", k)
        check_wagers(game, w, k)
        _offered(game, table, w, k)
        if six is None and w.get("all_six", 0):
            fail("six_null", k)
    raises = []
    values = []
    for k, ids, s in seats:
        if "raise" not in s:
            fail("no_raise", k)
        r = s["raise"]
        values.append(_check_raise(game, k, ids, s["wagers"]["ante"], r, g))
        raises.append(r)
    return (game, table, rules, dealer, six, seats, raises, values, obj)


def settle(v, emit=None):
    """A validate() result -> the round_result dict (see evaluate_round for emit)."""
    game, table, rules, dealer, six, seats, raises, values, obj = v
    head = {"type": "round_result", "game": game}
    for k in ("round", "deck"):
        if obj.get(k) is not None:
            head[k] = obj[k]
    if game == FCF:
        return module(game, True).settle(head, table, rules, dealer, six, seats, raises, values,
                                          obj["dealer"], obj.get("all_six_card"), emit)
    return module(game, True).settle(head, table, rules, dealer, seats, raises, values,
                                      obj["dealer"], emit)
