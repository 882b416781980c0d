"""Every invalid input gives a clear error with a reason, never a result (rules.md 1.5)."""

import copy

import pytest

from shoe.games import engine, paytable

GOOD = {
    "game": "four-card-frenzy",
    "paytable": "fcf-public-1",
    "dealer": ["Ah", "Kd", "7c", "7s", "2h"],
    "all_six_card": "9h",
    "seats": {
        "1": {
            "cards": ["As", "Ks", "Qs", "Js", "2d"],
            "wagers": {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5},
            "raise": 30,
        },
        "3": {
            "cards": ["3c", "4d", "8h", "9s", "Tc"],
            "wagers": {"ante": 5, "odds": 5},
            "raise": 5,
        },
    },
}
GOOD_HCF = {
    "game": "high-card-flush",
    "paytable": "hcf-public-1",
    "dealer": ["9h", "5h", "2h", "Kc", "Qd", "7s", "3c"],
    "seats": {
        "2": {
            "cards": ["As", "Ks", "Qs", "Js", "Ts", "2d", "4c"],
            "wagers": {"ante": 10, "flush_bonus": 1},
            "raise": 20,
        }
    },
}


def test_good_rounds_settle():
    assert engine.evaluate_round(copy.deepcopy(GOOD))["type"] == "round_result"
    assert engine.evaluate_round(copy.deepcopy(GOOD_HCF))["type"] == "round_result"


def broken(path, value, base=GOOD):
    obj = copy.deepcopy(base)
    *head, last = path
    target = obj
    for k in head:
        target = target[k]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return obj


CASES = [
    # (path, value, reason, words the message must contain)
    (("seats", "1", "cards", 0), "Ax", "bad_card", ["seat 1 cards", '"Ax"']),
    (("seats", "1", "cards", 0), 51, "bad_card", ["not a card", "51"]),
    (("seats", "1", "cards", 0), "CV", "bad_card", ["not a card"]),
    (("seats", "1", "cards", 0), "2d", "duplicate_card", ["seat 1 cards", "2d twice"]),
    (("seats", "1", "cards", 0), "Ah", "duplicate_card", ["seat 1", "Ah", "dealer"]),
    (("seats", "3", "cards", 0), "As", "duplicate_card", ["seat 3", "As", "seat 1"]),
    (("seats", "1", "cards", 0), "9h", "duplicate_card", ["all_six_card"]),
    (("seats", "1", "cards"), ["As", "Ks", "Qs", "Js"], "card_count", ["5 cards", "got 4"]),
    (("dealer",), ["Ah", "Kd", "7c", "7s", "2h", "3h"], "card_count", ["dealer", "got 6"]),
    (("dealer",), KeyError, "card_count", ["dealer"]),
    (("seats", "1", "wagers", "odds"), 9, "ante_odds", ["seat 1", "ante 10, odds 9"]),
    (("seats", "3", "wagers"), {"prime": 5}, "optional_without_ante", ["seat 3", "Ante"]),
    (("seats", "3", "wagers"), {}, "ante_odds", ["seat 3"]),
    (("seats", "3", "wagers", "ante"), -5, "bad_wager", ["ante", "-5"]),
    (("seats", "3", "wagers", "ante"), 5.5, "bad_wager", ["ante"]),
    (("seats", "3", "wagers", "ante"), True, "bad_wager", ["ante", "true"]),
    (("seats", "3", "wagers", "side_bet"), 1, "bad_wager", ['"side_bet"']),
    (
        ("seats", "1", "raise"),
        25,
        "invalid_raise",
        ["seat 1", "straight_flush", "As Ks Qs Js", "10, 20, 30", "0 (fold)"],
    ),
    (("seats", "3", "raise"), 10, "invalid_raise", ["seat 3", "high_card", "allowed 5 or 0"]),
    (("seats", "3", "raise"), KeyError, "invalid_raise", ["seat 3", "raise"]),
    (("seats", "3", "raise"), "5", "invalid_raise", ["seat 3"]),
    (("all_six_card",), None, "all_six_card", ["seat 1", "All-Six"]),
    (("all_six_card",), "Ah", "duplicate_card", ["all_six_card", "dealer"]),
    (("paytable",), "no-such-table", "paytable", ['"no-such-table"', "fcf-public-1"]),
    (("paytable",), "hcf-public-1", "paytable", ["high-card-flush", "four-card-frenzy"]),
    (("paytable",), KeyError, "paytable", ["paytable"]),
    (("rules",), {"ties": "dealer"}, "bad_rules", ["ties", "player, push", '"dealer"']),
    (("rules",), {"colour": 1}, "bad_rules", ['"colour"']),
    (("seats",), {}, "bad_round", ["seats"]),
    (("seats", "7"), {"cards": [], "wagers": {}, "raise": 0}, "bad_round", ['"7"']),
    (("seats", "1", "hand"), 1, "bad_round", ['"hand"']),
    (("game",), "poker", "bad_round", ['"poker"']),
    (("colour",), 1, "bad_round", ['"colour"']),
    (("round",), -1, "bad_round", ["round"]),
]


@pytest.mark.parametrize("path,value,reason,words", CASES)
def test_invalid_fcf_input(path, value, reason, words):
    obj = broken(path, value)
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(obj)
    assert e.value.reason == reason
    assert isinstance(e.value, ValueError)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


HCF_CASES = [
    (("seats", "2", "cards"), ["As", "Ks", "Qs", "Js", "Ts"], "card_count", ["7 cards"]),
    (("seats", "2", "wagers"), {"flush_bonus": 1}, "optional_without_ante", ["Ante"]),
    (("seats", "2", "wagers"), {"ante": 0}, "ante_missing", ["Ante"]),
    (("seats", "2", "raise"), 30, "invalid_raise", ["flush of 5", "10, 20", "seat 2"]),
    (("seats", "2", "wagers", "odds"), 10, "bad_wager", ['"odds"']),
    (("all_six_card",), "9c", "bad_round", ["all_six_card"]),
]


@pytest.mark.parametrize("path,value,reason,words", HCF_CASES)
def test_invalid_hcf_input(path, value, reason, words):
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(broken(path, value, GOOD_HCF))
    assert e.value.reason == reason
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.clause("rules:1.3-offered")
def test_wager_not_offered_by_table():
    table = paytable.preset("fcf-public-1")
    del table["all_six"]
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(broken(("paytable",), table))
    assert e.value.reason == "wager_not_offered" and "all_six" in str(e.value)


@pytest.mark.clause(
    "684a.7(d)(1)",
    "684a.11(b)(1)",
    "678a.7(d)(1)",
    "678a.7(d)(4)",
    "rules:1.3-optional-needs-ante",
    "rules:1.5-refused",
)
def test_check_wagers_and_check_raise_api():
    engine.check_wagers("four-card-frenzy", {"ante": 5, "odds": 5, "prime": 1})
    engine.check_wagers("high-card-flush", {"ante": 5, "progressive": 1})
    for game, w, reason in [
        ("four-card-frenzy", {"ante": 5, "odds": 6}, "ante_odds"),
        ("four-card-frenzy", {"all_six": 5}, "optional_without_ante"),
        ("high-card-flush", {"progressive": 1}, "optional_without_ante"),
        ("high-card-flush", {"ante": -1}, "bad_wager"),
        ("blackjack", {"ante": 1}, "bad_round"),
    ]:
        with pytest.raises(engine.EngineError) as e:
            engine.check_wagers(game, w)
        assert e.value.reason == reason
    table = paytable.preset("fcf-public-1")
    del table["prime"]
    engine.check_wagers("four-card-frenzy", {"ante": 5, "odds": 5, "all_six": 1}, 2, table)
    with pytest.raises(engine.EngineError) as e:
        engine.check_wagers("four-card-frenzy", {"ante": 5, "odds": 5, "prime": 1}, 2, table)
    assert e.value.reason == "wager_not_offered" and "seat 2" in str(e.value)
    engine.check_raise("four-card-frenzy", 4, ["Ac", "Ad", "7h", "4s", "2c"], 10, 30)
    with pytest.raises(engine.EngineError) as e:
        engine.check_raise("four-card-frenzy", 4, ["Kc", "Kd", "7h", "4s", "2c"], 10, 30)
    msg = str(e.value)
    assert e.value.reason == "invalid_raise"
    assert "seat 4" in msg and "pair (Kd Kc 7h 4s)" in msg and "allowed 10 or 0 (fold)" in msg
    with pytest.raises(engine.EngineError) as e:
        engine.check_raise("four-card-frenzy", 4, ["Kc", "Kd", "7h", "4s"], 10, 10)
    assert e.value.reason == "card_count"


PAYTABLE_CASES = [
    ({"four_card_bonus": {"royal": 50}}, ["four_card_bonus", '"royal"']),
    ({"prime": {"five_one_colour": -5}}, ["prime.five_one_colour", "-5"]),
    ({"prime": {"five_one_colour": "5"}}, ["prime.five_one_colour", "number"]),
    ({"prime": {"five_one_colour": None}}, ["prime.five_one_colour", "null"]),
    ({"odds": {"flush": {"win": 1.23456}}}, ["odds.flush.win", "4 decimal places"]),
    ({"odds": {"flush": {"win": 1, "lose": 2}}}, ["odds.flush", '"lose"']),
    ({"odds": {"pair": {"win": 1}}}, ["odds", '"pair"']),
    ({"game": "high-card-flush"}, ["game"]),
    ({"game": "baccarat"}, ["game", '"baccarat"']),
    ({"name": ""}, ["name"]),
    ({"example": "yes"}, ["example"]),
    ({"payout_limit": -1}, ["payout_limit"]),
    ({"flush_bonus": {"4": 1}}, ['"flush_bonus"']),
    ({"all_six": []}, ["all_six", "object"]),
]


@pytest.mark.clause("rules:4-paytable-data")
@pytest.mark.parametrize("change,words", PAYTABLE_CASES)
def test_bad_pay_tables_name_the_field(change, words):
    doc = paytable.preset("fcf-public-1")
    doc.update(change)
    with pytest.raises(paytable.PaytableError) as e:
        paytable.load(doc, "four-card-frenzy")
    assert e.value.reason == "paytable"
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(broken(("paytable",), doc))
    assert e.value.reason == "paytable"


@pytest.mark.clause("rules:4-paytable-data")
def test_bad_hcf_pay_tables():
    for change, word in [
        ({"flush_bonus": {"3": 1}}, '"3"'),
        ({"progressive": {"7": ""}}, "progressive.7"),
        ({"straight_flush_bonus": {"8": 1}}, '"8"'),
    ]:
        doc = paytable.preset("hcf-public-1")
        doc.update(change)
        with pytest.raises(paytable.PaytableError) as e:
            paytable.load(doc)
        assert word in str(e.value)


def test_invalid_input_never_changes_later_results():
    before = engine.evaluate_round(copy.deepcopy(GOOD))
    for path, value, _reason, _words in CASES:
        with pytest.raises(engine.EngineError):
            engine.evaluate_round(broken(path, value))
    assert engine.evaluate_round(copy.deepcopy(GOOD)) == before


def test_engine_card_notation_is_shoe_cards():
    from shoe import cards

    for c in range(52):
        name = cards.name(c)
        assert engine.parse_card(name, "x") == cards.parse(name) == c
    for bad in ["CV", "AS", "as", "1s", "10h", "A", "Asx", "", 5, None, ["As"]]:
        with pytest.raises(engine.EngineError) as e:
            engine.parse_card(bad, "seat 1 cards")
        assert e.value.reason == "bad_card"
