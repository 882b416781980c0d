"""Error message texts of the engine and the pay tables, loaded only when an error is raised.

Keeping the texts here (and dropping the module again after use) keeps them out of the RAM the
engine holds while it settles rounds. `text(code, args)` formats one message: an argument
wrapped in a 1-tuple is an input value and is rendered with `show()`, the same on CPython and
MicroPython.
"""

# code|reason|template, one per line, in a few short strings (a dict would cost 3x the RAM)
_TEXT = (
    '\nround_obj|bad_round|a round must be an object, got %s'
    '\ngame|bad_round|game must be four-card-frenzy or high-card-flush, got %s'
    '\nfield|bad_round|unknown field %s in a %s round'
    '\nno_table|paytable|paytable is missing (a document or a preset name)'
    '\nint_field|bad_round|%s must be a non-negative integer, got %s'
    '\nrules_obj|bad_rules|rules must be an object, got %s'
    '\nrule_value|bad_rules|rules %s must be one of %s, got %s',
    '\nrule_unknown|bad_rules|unknown rule %s for %s'
    '\nno_dealer|card_count|dealer cards are missing'
    '\nhand_list|bad_card|%s must be a list of %d cards, got %s'
    '\nhand_count|card_count|%s must have %d cards, got %d'
    '\nhand_dup|duplicate_card|%s has %s twice'
    '\ncard|bad_card|%s: not a card: %s (rank 23456789TJQKA + suit cdhs, e.g. "As")'
    '\nseats|bad_round|seats must be an object with 1..6 seats, got %s',
    '\nseat_key|bad_round|seat %s: seats are numbered "1".."6"'
    "\nsix_dealer|duplicate_card|all_six_card %s is also in the dealer's hand"
    '\nseat_obj|bad_round|seat %s must be an object, got %s'
    '\nseat_field|bad_round|seat %s: unknown field %s'
    '\nno_cards|card_count|seat %s: cards are missing'
    '\nheld|duplicate_card|seat %s has %s, also held by %s'
    '\nno_wagers|bad_wager|seat %s: wagers are missing',
    '\nwagers_obj|bad_wager|%swagers must be an object, got %s'
    '\nwager_unknown|bad_wager|%sunknown wager %s for %s (known: %s)'
    '\nwager_amount|bad_wager|%swager %s must be an integer 0..%d, got %s'
    '\noptional_fcf|optional_without_ante|%soptional wagers need Ante and Odds'
    '\nante_odds_missing|ante_odds|%sAnte and Odds are required'
    '\nante_odds|ante_odds|%sAnte and Odds must be equal, got ante %d, odds %d',
    '\noptional_hcf|optional_without_ante|%soptional wagers need an Ante'
    '\nante_missing|ante_missing|%sthe Ante is required'
    '\nnot_offered|wager_not_offered|seat %s: wager %s is not offered by pay table %s'
    '\nsix_null|all_six_card|seat %s has an All-Six Bonus wager but all_six_card is null'
    '\nno_raise|invalid_raise|seat %s: raise is missing (0 = fold)'
    '\nraise_type|invalid_raise|seat %s: raise must be an integer (0 = fold), got %s',
    '\nraise_value|invalid_raise|seat %s: raise %d not allowed with %s: allowed %s or 0 (fold)'
    '\npt_number|paytable|pay table %s: odds must be a number, got %s'
    '\npt_range|paytable|pay table %s: odds must be 0..%d, got %s'
    '\npt_decimals|paytable|pay table %s: odds may have at most 4 decimal places'
    '\npt_object|paytable|pay table %s: must be an object, got %s'
    '\npt_unknown|paytable|pay table %s: unknown %s %s (known: %s)',
    '\npt_name|paytable|pay table %s: must be a string of 1-64 characters'
    '\npt_game|paytable|pay table %s: must be four-card-frenzy or high-card-flush, got %s'
    '\npt_other_game|paytable|pay table %s: %s is for %s, the round is %s'
    '\npt_example|paytable|pay table %s: must be true or false'
    '\npt_limit|paytable|pay table %s: must be null or a non-negative integer'
    '\npt_illustrative|paytable|pay table %s: must be a list of section names',
    '\npt_tier|paytable|pay table %s: tier must be a name of 1-32 characters, got %s'
    '\npt_preset|paytable|pay table %s: no such preset (known: %s)',
)


def show(x):
    """A short, runtime-independent rendering of an input value for an error message."""
    from shoe.games.jsonout import dumps

    if isinstance(x, str):
        return dumps(x if len(x) <= 24 else x[:24] + "...")
    if x is None or isinstance(x, bool):
        return dumps(x)
    if isinstance(x, int):
        s = str(x)
        return s if len(s) <= 24 else s[:12] + "...(%d digits)" % len(s)
    if isinstance(x, float):
        return "a fractional number"
    if isinstance(x, (list, tuple)):
        return "a list"
    if isinstance(x, dict):
        return "an object"
    return "a value"


def text(code, args):
    """(reason, message) for an error code and its arguments."""
    key = "\n" + code + "|"
    for chunk in _TEXT:
        i = chunk.find(key)
        if i >= 0:
            break
    j = chunk.find("\n", i + 1)
    reason, template = chunk[i + len(key):j if j > 0 else len(chunk)].split("|", 1)
    vals = tuple(show(a[0]) if isinstance(a, tuple) else a for a in args)
    return reason, template % vals if vals else template


def describe(game, ids, v):
    """'pair (Kd Kh 9s 4c)' / 'flush of 5 (Ah Kh 9h 4h 2h)' for messages."""
    def names(ids):
        return " ".join("23456789TJQKA"[c >> 2] + "cdhs"[c & 3] for c in ids)

    from shoe.games.vocab import FCF

    if game == FCF:
        from shoe.games import fcf

        return "%s (%s)" % (fcf.CATEGORIES[fcf.category(v)],
                            names(fcf.best_cards(ids, v)))
    from shoe.games import hcf

    return "flush of %d (%s)" % (hcf.length(v), names(hcf.flush_cards(ids, v)))


def unload():
    """Forget this module again (its texts are only needed while an error is built)."""
    from shoe import forget

    forget("shoe.games.messages")
