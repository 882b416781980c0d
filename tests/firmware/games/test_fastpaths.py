"""The engine's fast paths give what the general code gives (issue 10's chip speed work), and
evaluate_round settles as rules.md says, checked against a brute force written here (issue 22: not
against the engine's own settle(validate()))."""

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


# --- evaluate_round against a brute-force settlement written here from rules.md 1.6 and 2.2
# (hands by the naive oracle, tests/oracle/naive.py, and by counting suits; pay tables read as
# data), not against the engine's own settle() ------------------------------------------------


def _rank(c):
    return c >> 2


def _x(odds):
    """A pay table's odds (x to 1, kept in 1/10000: docs/engine.md) as the result it gives."""
    return odds // 10000 if odds % 10000 == 0 else odds / 10000


def _payouts(res, amounts):
    """rules.md 3: whole units, rounding down; a lost wager loses its amount."""
    out = {}
    for x, r in res.items():
        a = amounts["raise_" if x == "raise" else x]
        out[x] = -a if r == -1 else a * round(r * 10000) // 10000
    return out


def _ids(names):
    return ["23456789TJQKA".index(n[0]) * 4 + "cdhs".index(n[1]) for n in names]


def _poker5(hand):
    """Standard five-card poker category (rules.md 1.6, All-Six: ace low in A-2-3-4-5)."""
    ranks = sorted((_rank(c) for c in hand), reverse=True)
    counts = sorted((ranks.count(r) for r in set(ranks)), reverse=True)
    flush = len({c & 3 for c in hand}) == 1
    straight = len(set(ranks)) == 5 and (ranks[0] - ranks[4] == 4 or ranks == [12, 3, 2, 1, 0])
    if straight and flush:
        return "royal_flush" if ranks[4] == 8 else "straight_flush"
    if counts[0] == 4:
        return "four_of_a_kind"
    if counts[:2] == [3, 2]:
        return "full_house"
    return (
        "flush"
        if flush
        else "straight"
        if straight
        else "three_of_a_kind"
        if counts[0] == 3
        else None
    )


_ALL_SIX = (
    "six_card_royal_flush",
    "royal_flush",
    "straight_flush",
    "four_of_a_kind",
    "full_house",
    "flush",
    "straight",
    "three_of_a_kind",
)


def _all_six(six):
    import itertools

    if len({c & 3 for c in six}) == 1 and sorted(_rank(c) for c in six) == [7, 8, 9, 10, 11, 12]:
        return "six_card_royal_flush"
    found = {_poker5(h) for h in itertools.combinations(six, 5)}
    return next((c for c in _ALL_SIX if c in found), None)


def _fcf_expected(rnd, table):
    from tests.oracle import naive

    names = (
        "high_card",
        "pair",
        "two_pair",
        "straight",
        "flush",
        "three_of_a_kind",
        "straight_flush",
        "four_of_a_kind",
    )  # rules.md 1.2, low to high
    rules = rnd["rules"]
    sec = table.sections
    dealer = _ids(rnd["dealer"])
    d = naive.value(dealer)
    opens = d >> 26 >= 1 or max(_rank(c) for c in dealer) >= 11  # pair+, or K or A high
    out = {"dealer": (names[d >> 26], opens), "seats": {}}
    for k, seat in rnd["seats"].items():
        ids = _ids(seat["cards"])
        p = naive.value(ids)
        cat = names[p >> 26]
        tie = p == d
        win = p > d or (tie and rules["ties"] == "player")
        even = tie and rules["ties"] == "push"
        w = seat["wagers"]
        res = {}
        if seat["raise"] == 0:  # fold: Ante and Odds lost, the optional wagers stay
            res["ante"] = res["odds"] = -1
            res["raise"] = 0
        else:
            res["ante"] = 0 if not opens else (0 if even else 1 if win else -1)
            if not opens and rules["raise_when_dealer_not_open"] == "win":
                res["raise"] = 1
            else:
                res["raise"] = 0 if even else 1 if win else -1
            if p >> 26 >= 3:  # straight or better
                res["odds"] = _x(sec["odds.win" if p >= d else "odds.bad_beat"][cat])
            else:
                res["odds"] = 0 if p >= d else -1
        if w.get("prime"):
            red = sum(1 for c in ids if c & 3 in (1, 2))
            one = max(red, 5 - red)
            res["prime"] = (
                _x(sec["prime"]["five_one_colour" if one == 5 else "four_one_colour"])
                if one >= 4
                else -1
            )
        if w.get("four_card_bonus"):
            royal = any({(r << 2) | s for r in (9, 10, 11, 12)} <= set(ids) for s in range(4))
            fc = "royal_flush" if royal else cat
            res["four_card_bonus"] = _x(sec["four_card_bonus"][fc]) if p >> 26 >= 2 else -1
        if w.get("all_six"):
            c6 = _all_six(ids + [_ids([rnd["all_six_card"]])[0]])
            res["all_six"] = _x(sec["all_six"][c6]) if c6 else -1
        pay = _payouts(res, dict(w, raise_=seat["raise"]))
        out["seats"][k] = (cat, res, pay, sum(pay.values()))
    return out


def _hcf_value(ids):
    best = 0
    for s in range(4):
        ranks = [_rank(c) for c in ids if c & 3 == s]
        best = max(best, len(ranks) << 13 | sum(1 << r for r in ranks))
    return best


def _straight_flush(ids):
    """The longest run of consecutive ranks in one suit, ace high or low (rules.md 2.1)."""
    best = 0
    for s in range(4):
        ranks = {_rank(c) for c in ids if c & 3 == s}
        if 12 in ranks:
            ranks.add(-1)
        run = 0
        for r in range(-1, 13):
            run = run + 1 if r in ranks else 0
            best = max(best, run)
    return best


def _hcf_expected(rnd, table):
    sec = table.sections
    d = _hcf_value(_ids(rnd["dealer"]))
    # rules.md 2.2: a 3-card flush whose highest card is 9 or more, or any 4+ card flush
    qualifies = d >> 13 >= 4 or (d >> 13 == 3 and d & 0x1FFF >= 1 << 7)
    out = {"dealer": (d >> 13, qualifies), "seats": {}}
    for k, seat in rnd["seats"].items():
        ids = _ids(seat["cards"])
        p = _hcf_value(ids)
        res = {}
        if seat["raise"] == 0:
            res["ante"], res["raise"] = -1, 0
        elif not qualifies:
            res["ante"], res["raise"] = 1, 0
        else:
            res["ante"] = res["raise"] = 1 if p > d else 0 if p == d else -1
        w = seat["wagers"]
        n = p >> 13
        if w.get("flush_bonus"):
            res["flush_bonus"] = _x(sec["flush_bonus"][str(n)]) if n >= 4 else -1
        sf = _straight_flush(ids)
        if w.get("straight_flush_bonus"):
            pays = sec["straight_flush_bonus"]
            res["straight_flush_bonus"] = _x(pays[str(sf)]) if str(sf) in pays else -1
        pay = _payouts(res, dict(w, raise_=seat["raise"]))
        out["seats"][k] = (n, res, pay, sum(pay.values()))
    return out


def test_evaluate_round_settles_as_the_rules_say():
    """Random valid rounds on the public pay tables (whole-number odds, no payout limit), every
    seat's category, each wager's result and payout, the net, and the dealer's open/qualify,
    against the brute force above. The progressive (a tier for the host's meter) is left out."""
    import random

    from shoe.games import paytable
    from tests.firmware.games.rounds import fcf_round, hcf_round

    rng = random.Random(22)
    seen = set()
    for i in range(600):
        fcf = i % 2 == 0
        rnd = (
            fcf_round(rng, rng.randint(1, 6), "fcf-public-1")
            if fcf
            else hcf_round(rng, rng.randint(1, 6), "hcf-public-1")
        )
        for seat in rnd["seats"].values():
            seat["wagers"].pop("progressive", None)
        got = engine.evaluate_round(copy.deepcopy(rnd))
        table = paytable.load(rnd["paytable"], rnd["game"])
        want = (_fcf_expected if fcf else _hcf_expected)(rnd, table)
        if fcf:
            assert (got["dealer"]["category"], got["dealer"]["opens"]) == want["dealer"], rnd
        else:
            assert (got["dealer"]["flush"]["length"], got["dealer"]["qualifies"]) == want[
                "dealer"
            ], rnd
        for k, (cat, res, pay, net) in want["seats"].items():
            seat = got["seats"][k]
            assert (seat["category"] if fcf else seat["flush"]["length"]) == cat, (rnd, k)
            assert {x: e["result"] for x, e in seat["wagers"].items()} == res, (rnd, k)
            assert {x: e["payout"] for x, e in seat["wagers"].items()} == pay, (rnd, k)
            assert seat["net"] == net and not seat["capped"], (rnd, k)
            seen.update((x, r > 0) for x, r in res.items())
    # every wager both won and lost somewhere (the brute force was exercised)
    assert {
        (x, b)
        for x in ("ante", "odds", "raise", "prime", "four_card_bonus", "all_six", "flush_bonus")
        for b in (True, False)
    } <= seen, seen


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
