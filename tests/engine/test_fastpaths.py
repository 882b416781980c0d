"""The engine's fast paths give what the general code gives (issue 10's chip speed work)."""
import copy

import pytest

from shoe.games import engine
from tests.engine.test_invalid import GOOD


@pytest.mark.parametrize("hand,words", [
    # twice in the hand, and a card the dealer holds before it: "twice" is reported
    (["As", "Ah", "Qs", "Js", "As"], ["seat 1 cards", "As twice"]),
    (["As", "Ks", "Qs", "Js", "Ks"], ["seat 1 cards", "Ks twice"]),
])
def test_a_card_twice_in_a_hand_is_reported_before_one_held_elsewhere(hand, words):
    obj = copy.deepcopy(GOOD)
    obj["seats"]["1"]["cards"] = hand
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(obj)
    assert e.value.reason == "duplicate_card"
    for w in words:
        assert w in str(e.value)


def test_the_dealer_twice_is_reported_as_twice():
    obj = copy.deepcopy(GOOD)
    obj["dealer"] = ["Ah", "Kd", "7c", "Kd", "2h"]
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(obj)
    assert e.value.reason == "duplicate_card" and "dealer has Kd twice" in str(e.value)


def test_validate_then_settle_is_evaluate_round():
    obj = copy.deepcopy(GOOD)
    assert engine.settle(engine.validate(obj)) == engine.evaluate_round(copy.deepcopy(GOOD))


@pytest.mark.parametrize("ante,raise_amount", [(5, 5.0), (1, True), (5, "5")])
def test_a_raise_equal_to_the_ante_but_not_an_integer_is_refused(ante, raise_amount):
    obj = copy.deepcopy(GOOD)
    obj["seats"]["3"]["wagers"].update(ante=ante, odds=ante)
    obj["seats"]["3"]["raise"] = raise_amount
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(obj)
    assert e.value.reason == "invalid_raise"


@pytest.mark.parametrize("amount", [5.0, True, "5", -5, 10 ** 10, None])
def test_the_inline_wager_check_refuses_what_check_wagers_refuses(amount):
    obj = copy.deepcopy(GOOD)
    obj["seats"]["1"]["wagers"]["prime"] = amount
    with pytest.raises(engine.EngineError) as e:
        engine.evaluate_round(obj)
    assert e.value.reason == "bad_wager"


def test_best_names_equal_best_cards_in_any_card_order():
    import random

    from shoe import cards
    from shoe.games import fcf, fcfround
    from shoe.games.settle import pick

    rng = random.Random(31)
    seen = set()
    for _ in range(30000):
        ids = rng.sample(range(52), 5)
        names = cards.names(ids)
        v = fcf.value(ids)
        seen.add(fcf.category(v))
        assert fcfround.best_names(names, ids, v) == pick(names, ids, fcf.best_cards(ids, v))
    assert seen == set(range(8))
