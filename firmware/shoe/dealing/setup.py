"""Validation of the host's table set-up: the `configure` and `open_round` command bodies.

Both functions return a normalised copy or raise SetupError(message, reason) with a reason code
of shoe.reasons; they never change anything. Field meanings: docs/round-lifecycle.md.

Who may change which field of the configuration (KEYS, and what configure() returns) is not
decided here but in shoe.roles, against the normalised result: every value that changes counts,
the defaults a field takes when the body leaves it out (another game, say) included.
"""

from shoe.errors import ShoeError
from shoe.games.vocab import FCF, HCF, MAX_SEATS, OPTIONAL, PROCEDURES

DEFAULT_PAYTABLE = {FCF: "fcf-public-1", HCF: "hcf-public-1"}
_VARIANTS = {"ties": ("player", "push"), "raise_when_dealer_not_open": ("compare", "win")}


class SetupError(ShoeError):
    pass


def _int(body, key, default, lo, hi):
    v = body.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise SetupError("%s must be an integer %d..%d, got %r" % (key, lo, hi, v), "bad_field")
    return v


def _num(body, key, default):
    v = body.get(key, default)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
        raise SetupError("%s must be a positive number, got %r" % (key, v), "bad_field")
    return v


# the configuration's fields (shoe.roles gives each its role; docs/roles.md)
KEYS = ("game", "procedure", "paytable", "rules", "offered", "stub_every", "two_deck",
        "represent_max", "jam_timeout_s", "deck_age_hand_s", "deck_age_shoe_s",
        "shuffle_check", "double_reads")


# clause: rules:1.4-stub-count, rules:1.1-deck-age, rules:1.3-offered
# clause: rules:1.6-ties, rules:1.6-raise-not-open
def configure(body):
    if not isinstance(body, dict):
        raise SetupError("configure needs an object", "bad_command")
    for k in body:
        if k not in KEYS:
            raise SetupError("configure: unknown field %r" % (k,), "bad_field")
    game = body.get("game")
    if game not in (FCF, HCF):
        raise SetupError("game must be %r or %r, got %r" % (FCF, HCF, game), "unknown_game")
    proc = body.get("procedure")
    if proc not in PROCEDURES:
        raise SetupError("procedure must be one of %s, got %r" % (", ".join(PROCEDURES), proc),
                         "unknown_procedure")
    pt = body.get("paytable", DEFAULT_PAYTABLE[game])
    if not isinstance(pt, (str, dict)) or not pt:
        raise SetupError("paytable must be a name or a pay table object", "bad_field")
    if isinstance(pt, dict) and pt.get("game", game) != game:
        raise SetupError("pay table is for %r, not %r" % (pt.get("game"), game), "bad_field")
    rules = body.get("rules", {})
    if not isinstance(rules, dict):
        raise SetupError("rules must be an object", "bad_field")
    for k in rules:
        allowed = _VARIANTS.get(k)
        if game != FCF or allowed is None or rules[k] not in allowed:
            raise SetupError("rule variant %r=%r is not known for %s" % (k, rules[k], game),
                             "bad_field")
    offered = body.get("offered", list(OPTIONAL[game]))
    if not isinstance(offered, list):
        raise SetupError("offered must be a list of optional wagers", "bad_field")
    for w in offered:
        if w not in OPTIONAL[game]:
            raise SetupError("%r is not an optional wager of %s (%s)" % (
                w, game, ", ".join(OPTIONAL[game])), "bad_field")
    two = body.get("two_deck", False)
    check = body.get("shuffle_check", True)
    dbl = body.get("double_reads", False)
    if not isinstance(two, bool) or not isinstance(check, bool) or not isinstance(dbl, bool):
        raise SetupError("two_deck, shuffle_check and double_reads must be true or false",
                         "bad_field")
    return {
        "game": game, "procedure": proc, "paytable": pt, "rules": dict(rules),
        "offered": [w for w in OPTIONAL[game] if w in offered],
        "stub_every": _int(body, "stub_every", 1, 1, 5), "two_deck": two,
        "shuffle_check": check, "double_reads": dbl, "paytable_sha256": None,
        "represent_max": _int(body, "represent_max", 2, 0, 9),
        "jam_timeout_s": _num(body, "jam_timeout_s", 60),
        "deck_age_hand_s": _num(body, "deck_age_hand_s", 4 * 3600),
        "deck_age_shoe_s": _num(body, "deck_age_shoe_s", 8 * 3600),
    }


# clause: rules:1.1-seats
def _seat_no(key):
    if isinstance(key, int) and not isinstance(key, bool):
        n = key
    elif isinstance(key, str) and len(key) == 1 and "1" <= key <= "6":
        n = int(key)
    else:
        raise SetupError("seat %r: seats are numbered 1..6" % (key,), "bad_seat")
    if not 1 <= n <= MAX_SEATS:
        raise SetupError("seat %r: seats are numbered 1..6" % (key,), "bad_seat")
    return n


# clause: rules:1.3-offered
def _wagers(cfg, seat, wagers):
    """Shape and offer only: the wager rules themselves (Ante = Odds, optional wagers only with
    the Ante, amounts) are the engine's check_wagers, called next by the table."""
    if not isinstance(wagers, dict):
        raise SetupError("seat %d: wagers must be an object" % seat, "bad_wager")
    out = {}
    for k in wagers:
        if wagers[k] != 0 or isinstance(wagers[k], bool):
            if k in OPTIONAL[cfg["game"]] and k not in cfg["offered"]:
                raise SetupError("seat %d: %s is not offered at this table" % (seat, k),
                                 "wager_not_offered")
            out[k] = wagers[k]
    return out


# clause: rules:1.1-seats, rules:2.2-dealing
def seats(cfg, body):
    """open_round body -> sorted list of [seat, wagers]. Accepts {"seats": {"1": {"wagers":
    {...}}}} or {"seats": [{"seat": 1, "wagers": {...}}, ...]}."""
    if not isinstance(body, dict) or "seats" not in body:
        raise SetupError("open_round needs {\"seats\": {...}}", "bad_command")
    for k in body:
        if k != "seats":
            raise SetupError("open_round: unknown field %r" % (k,), "bad_field")
    raw = body["seats"]
    if isinstance(raw, dict):
        items = [(k, raw[k]) for k in raw]
    elif isinstance(raw, list):
        items = []
        for e in raw:
            if not isinstance(e, dict) or "seat" not in e:
                raise SetupError("each seat entry needs a \"seat\" number", "bad_seat")
            items.append((e["seat"], e))
    else:
        raise SetupError("seats must be an object or a list", "bad_command")
    if not items:
        raise SetupError("no seats: at least one seat with Ante must play", "no_seats")
    if len(items) > MAX_SEATS:
        raise SetupError("%d seats: at most %d" % (len(items), MAX_SEATS), "too_many_seats")
    out = []
    used = []
    for key, entry in items:
        n = _seat_no(key)
        if n in used:
            raise SetupError("seat %d is listed twice" % n, "seat_twice")
        used.append(n)
        if not isinstance(entry, dict) or "wagers" not in entry:
            raise SetupError("seat %d needs {\"wagers\": {...}}" % n, "bad_wager")
        out.append([n, _wagers(cfg, n, entry["wagers"])])
    out.sort()
    return out
