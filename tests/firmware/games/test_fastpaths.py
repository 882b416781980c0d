"""The engine's fast paths give what the general code gives (issue 10's chip speed work)."""

import copy

import pytest

from shoe.games import engine
from tests.firmware.games.test_invalid import GOOD


@pytest.mark.parametrize(
    "hand,words",
    [
        # twice in the hand, and a card the dealer holds before it: "twice" is reported
        (["As", "Ah", "Qs", "Js", "As"], ["seat 1 cards", "As twice"]),
        (["As", "Ks", "Qs", "Js", "Ks"], ["seat 1 cards", "Ks twice"]),
    ],
)
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


@pytest.mark.parametrize("amount", [5.0, True, "5", -5, 10**10, None])
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


# --- the one-pass validate, the best cards of grouped hands, the All-Six card given apart, the
# net of a seat with every wager: each compared with the general code it replaces ----------------

_JUNK = [None, True, 0, -1, 5.5, "x", "As", "Zz", [], ["As"], {}, {"a": 1}, 10**10, 7]


def _mutate(rng, obj, faults):
    """obj with `faults` random changes anywhere (values replaced, keys dropped or added)."""
    for _ in range(faults):
        paths = []

        def walk(x, p, paths=paths):
            if isinstance(x, dict):
                for k in x:
                    paths.append(p + (k,))
                    walk(x[k], p + (k,))
            elif isinstance(x, list):
                for i in range(len(x)):
                    paths.append(p + (i,))
                    walk(x[i], p + (i,))

        walk(obj, ())
        path = rng.choice(paths)
        target = obj
        for k in path[:-1]:
            target = target[k]
        what = rng.random()
        if what < 0.15 and isinstance(target, dict):
            del target[path[-1]]
        elif what < 0.25 and isinstance(target, dict):
            target[rng.choice(["bogus", "raise", "wagers", "7", "prime", "all_six"])] = rng.choice(
                _JUNK
            )
        elif what < 0.45 and isinstance(target, list) and all(isinstance(c, str) for c in target):
            target[path[-1]] = rng.choice(target)  # a card twice, or another hand's card
        else:
            target[path[-1]] = rng.choice(_JUNK)
    return obj


def _outcome(f, obj):
    try:
        return ("ok", f(copy.deepcopy(obj)))
    except engine.EngineError as e:
        return ("error", e.reason, str(e))


def _rounds(seed, count):
    import json
    import random

    from tests.firmware.games.rounds import fcf_round, hcf_round

    rng = random.Random(seed)
    for i in range(count):
        r = (fcf_round if i % 2 else hcf_round)(rng, rng.randint(1, 6))
        if isinstance(r["paytable"], dict):
            r["paytable"] = "fcf-public-1" if r["game"] == engine.FCF else "hcf-public-1"
        yield _mutate(rng, json.loads(json.dumps(r)), rng.choice((0, 0, 1, 2, 3)))


def test_one_pass_validate_equals_the_three_pass_reference():
    # results equal for good rounds; for broken ones (up to 3 faults, anywhere) the same first
    # error: the order of the checks is part of the interface (the message a dealer sees)
    from tests.firmware.games import validate_reference

    seen = set()
    for obj in _rounds(44, 6000):
        got = _outcome(engine.validate, obj)
        want = _outcome(validate_reference.validate, obj)
        if got[0] == "ok" and want[0] == "ok":
            got = ("ok", engine.settle(got[1]))
            want = ("ok", engine.settle(want[1]))
        assert got == want, obj
        seen.add(got[1] if got[0] == "error" else "ok")
    assert {
        "ok",
        "bad_card",
        "duplicate_card",
        "bad_wager",
        "invalid_raise",
        "ante_odds",
        "card_count",
        "bad_round",
    } <= seen, seen


def _best_hands():
    import itertools
    import random

    rng = random.Random(5)
    sub = [c for c in range(52) if c % 13 < 5 or c >= 44][:22]  # every category occurs
    for h in itertools.combinations(sub, 5):
        h = list(h)
        rng.shuffle(h)
        yield h
    for _ in range(20000):
        yield rng.sample(range(52), 5)


def test_best_names_of_every_category_equal_best_cards():
    from shoe import cards
    from shoe.games import fcf, fcfround
    from shoe.games.settle import pick

    seen = set()
    for ids in _best_hands():
        names = cards.names(ids)
        v = fcf.value(ids)
        seen.add(v >> 26)
        assert fcfround.best_names(names, ids, v) == pick(names, ids, fcf.best_cards(ids, v))
    assert seen == set(range(8))


@pytest.mark.clause("684a.11(d)(3)")
def test_all_six_card_given_apart_equals_six_cards():
    import random

    from shoe.games import allsix

    rng = random.Random(6)
    seen = set()
    for _ in range(60000):
        h = rng.sample(range(52), 6)
        if rng.random() < 0.3:  # more flushes and straights than random deals give
            s = rng.randrange(4)
            h = [r * 4 + s for r in rng.sample(range(13), 5)] + [rng.randrange(52)]
            if len(set(h)) < 6:
                continue
        c = allsix.category(h)
        assert allsix.category(h[:5], h[5]) == c, h
        seen.add(c)
    assert len(seen) == 9, seen  # the 8 categories and None


def test_seat_net_equals_net_of_its_wagers():
    import random

    from shoe.games.settle import net_of
    from tests.firmware.games.rounds import FRACTIONAL_FCF, fcf_round

    rng = random.Random(8)
    for i in range(400):
        r = fcf_round(rng, 6, "fcf-public-1" if i % 2 else FRACTIONAL_FCF)
        if i % 3 and r["all_six_card"] is not None:
            for s in r["seats"].values():  # every side wager: the explicit sum of six payouts
                a = s["wagers"]["ante"]
                s["wagers"].update(prime=a, four_card_bonus=a, all_six=a)
        limit = None if i % 2 else FRACTIONAL_FCF["payout_limit"]
        for seat in engine.evaluate_round(r)["seats"].values():
            assert (seat["net"], seat["capped"], seat["uncapped_net"]) == net_of(
                seat["wagers"].values(), limit
            )
