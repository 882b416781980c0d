"""An independent reference for the engine's round validation, which
tests/firmware/games/test_fastpaths.py compares engine.validate with (the same result, or the same
first error in the same words, on every round).

The checks are written again here from the rules (rules.md 1.3-1.5 and 2.2: notation, wagers,
raise caps; the round's fields as engine.validate documents them), in the order of the engine's
earlier three-pass version (every seat's fields and cards, then every seat's wagers, then every
seat's raise), and take nothing of shoe.games.engine but its error type. Shared with the engine:
the pay table loader (shoe.games.paytable, tested on its own), the message texts
(shoe.games.messages: the words, not the checks, including the hand named in a refused raise).
Hand values come from the naive oracle (tests/oracle/naive.py) for Four Card Frenzy and from a
suit count written here for High Card Flush.
"""

from shoe.games import messages, paytable
from shoe.games.engine import EngineError
from tests.oracle import naive

FCF = "four-card-frenzy"
HCF = "high-card-flush"
MAX_AMOUNT = 10**9  # per wager, in the smallest currency unit (the engine's limit)
HAND = {FCF: 5, HCF: 7}
# every wager a seat may place, main ones first (rules.md 1.3, 2.2)
WAGERS = {
    FCF: ("ante", "odds", "prime", "four_card_bonus", "all_six"),
    HCF: ("ante", "flush_bonus", "straight_flush_bonus", "progressive"),
}
MAIN = {FCF: ("ante", "odds"), HCF: ("ante",)}
# rules.md 1.6 variants: allowed values, the first is the default
RULES = {
    FCF: {"ties": ("player", "push"), "raise_when_dealer_not_open": ("compare", "win")},
    HCF: {},
}
ROUND_FIELDS = ("game", "paytable", "rules", "dealer", "all_six_card", "seats", "round", "deck")
SEAT_FIELDS = ("cards", "wagers", "raise")
SEATS = ("1", "2", "3", "4", "5", "6")
RANKS = "23456789TJQKA"
SUITS = "cdhs"
CARD = {r + s: i * 4 + j for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)}
DEALER, ALL_SIX = 7, 8  # owner tags of the dealer's hand and the All-Six card (seats: 1..6)


def fail(code, *args):
    reason, text = messages.text(code, args)
    raise EngineError(text, reason)


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def hand_name(what):
    return what if len(what) > 1 else "seat %s cards" % what


def card(name, what):
    if isinstance(name, str) and name in CARD:
        return CARD[name]
    fail("card", hand_name(what), (name,))


def hand(names, count, what):
    """Names -> ids: a list of `count` card names, the first bad name reported."""
    if not isinstance(names, list):
        fail("hand_list", hand_name(what), count, (names,))
    if len(names) != count:
        fail("hand_count", hand_name(what), count, len(names))
    return [card(n, what) for n in names]


def twice(ids, names, what):
    """The first card met again in the same hand."""
    for i, c in enumerate(ids):
        if c in ids[:i]:
            fail("hand_dup", hand_name(what), names[i])


def rules_of(game, rules):
    spec = RULES[game]
    out = {k: v[0] for k, v in spec.items()}
    if rules is None:
        return out
    if not isinstance(rules, dict):
        fail("rules_obj", (rules,))
    for k, v in rules.items():
        if k not in spec:
            fail("rule_unknown", (k,), game)
        if v not in spec[k]:
            fail("rule_value", k, ", ".join(spec[k]), (v,))
        out[k] = v
    return out


def wagers_ok(game, w, seat):
    """rules.md 1.3 / 2.2: known wagers, integer amounts, the main wagers (FCF: Ante = Odds)."""
    where = "seat %s: " % seat
    if not isinstance(w, dict):
        fail("wagers_obj", where, (w,))
    for k in w:
        if k not in WAGERS[game]:
            fail("wager_unknown", where, (k,), game, ", ".join(WAGERS[game]))
    for k in WAGERS[game]:
        a = w.get(k, 0)
        if not is_int(a) or not 0 <= a <= MAX_AMOUNT:
            fail("wager_amount", where, k, MAX_AMOUNT, (a,))
    optional = any(w.get(k, 0) for k in WAGERS[game] if k not in MAIN[game])
    if game == FCF:
        ante, odds = w.get("ante", 0), w.get("odds", 0)
        if ante == 0 and odds == 0:
            fail("optional_fcf" if optional else "ante_odds_missing", where)
        if ante != odds:
            fail("ante_odds", where, ante, odds)
    elif w.get("ante", 0) == 0:
        fail("optional_hcf" if optional else "ante_missing", where)


def hcf_value(ids):
    """length << 13 | ranks of the hand's flush: the longest suit, the higher cards on a tie
    (rules.md 2.1), by counting suits."""
    best = 0
    for s in range(4):
        ranks = [c >> 2 for c in ids if c & 3 == s]
        v = len(ranks) << 13
        for r in ranks:
            v |= 1 << r
        best = max(best, v)
    return best


def hand_value(game, ids):
    return naive.value(ids) if game == FCF else hcf_value(ids)


def raise_multiples(game, v):
    """rules.md 1.5: a pair of aces or better raises 1-3 x, anything less exactly 1 x; rules.md
    2.2: a flush of 2-4 cards 1 x, 5 cards 1-2 x, 6-7 cards 1-3 x."""
    if game == FCF:
        category = v >> 26
        aces = category == 1 and (v >> 13) & 0x1FFF == 1 << 12  # naive's pair: rank bit << 13
        return (1, 2, 3) if category > 1 or aces else (1,)
    length = v >> 13
    return (1,) if length <= 4 else (1, 2) if length == 5 else (1, 2, 3)


def raise_ok(game, seat, ids, ante, amount):
    """-> the hand's value; a fold (0) and 1 x Ante are always allowed."""
    if not is_int(amount):
        fail("raise_type", seat, (amount,))
    v = hand_value(game, ids)
    allowed = raise_multiples(game, v)
    if amount != 0 and not (amount % ante == 0 and amount // ante in allowed):
        fail(
            "raise_value",
            seat,
            amount,
            messages.describe(game, ids, v),
            ", ".join(str(ante * k) for k in allowed),
        )
    return v


def validate(obj):
    """Every check of evaluate_round (raises EngineError) -> the validated round for settle()."""
    if not isinstance(obj, dict):
        fail("round_obj", (obj,))
    game = obj.get("game")
    if game not in (FCF, HCF):
        fail("game", (game,))
    n = HAND[game]
    for k in obj:
        if k not in ROUND_FIELDS or (game == HCF and k == "all_six_card" and obj[k] is not None):
            fail("field", (k,), game)
    if "paytable" not in obj:
        fail("no_table")
    try:
        table = paytable.load(obj["paytable"], game)
    except paytable.PaytableError as e:
        raise EngineError(str(e), "paytable") from e
    for k in ("round", "deck"):
        v = obj.get(k)
        if v is not None and not (is_int(v) and 0 <= v < 1 << 30):
            fail("int_field", k, (v,))
    rules = rules_of(game, obj.get("rules"))
    if "dealer" not in obj:
        fail("no_dealer")
    dealer = hand(obj["dealer"], n, "dealer")
    twice(dealer, obj["dealer"], "dealer")
    owner = {c: DEALER for c in dealer}  # card -> the hand holding it
    seats_in = obj.get("seats")
    if not isinstance(seats_in, dict) or not seats_in:
        fail("seats", (seats_in,))
    for k in seats_in:
        if k not in SEATS:
            fail("seat_key", (k,))
    six = None
    if game == FCF and obj.get("all_six_card") is not None:
        six = card(obj["all_six_card"], "all_six_card")
        if six in owner:
            fail("six_dealer", obj["all_six_card"])
        owner[six] = ALL_SIX
    # pass 1: each seat's fields and cards, in seat order
    seats = []
    for k in sorted(seats_in):
        s = seats_in[k]
        if not isinstance(s, dict):
            fail("seat_obj", k, (s,))
        for f in s:
            if f not in SEAT_FIELDS:
                fail("seat_field", k, (f,))
        if "cards" not in s:
            fail("no_cards", k)
        ids = hand(s["cards"], n, k)
        twice(ids, s["cards"], k)
        for name, c in zip(s["cards"], ids):
            if c in owner:
                o = owner[c]
                fail(
                    "held",
                    k,
                    name,
                    "the dealer"
                    if o == DEALER
                    else "the all_six_card"
                    if o == ALL_SIX
                    else "seat %d" % o,
                )
            owner[c] = int(k)
        seats.append((k, ids, s))
    # pass 2: each seat's wagers (rules.md 1.3: optional wagers only if the table offers them;
    # the All-Six Bonus needs the All-Six card)
    for k, _ids, s in seats:
        w = s.get("wagers")
        if w is None:
            fail("no_wagers", k)
        wagers_ok(game, w, k)
        for key in WAGERS[game]:
            if key not in MAIN[game] and key not in table.sections and w.get(key, 0):
                fail("not_offered", k, key, (table.name,))
        if six is None and w.get("all_six", 0):
            fail("six_null", k)
    # pass 3: each seat's raise
    raises, values = [], []
    for k, ids, s in seats:
        if "raise" not in s:
            fail("no_raise", k)
        values.append(raise_ok(game, k, ids, s["wagers"]["ante"], s["raise"]))
        raises.append(s["raise"])
    return (game, table, rules, dealer, six, seats, raises, values, obj)
