"""The settlement clauses of 684a.11(b)-(d), 678a.7(d) and rules.md 1.6 / 2.2, one explicit case
(or a seeded batch) per branch, each settled by the firmware's engine under MicroPython (the unix
port, a device-sized heap: what the shoe runs) and in CPython, which must agree byte for byte.

Each test names the clauses it proves (@pytest.mark.clause; docs/certification.md); every
expected value is written from the rule and the example pay tables of rules.md 4, not from the
engine."""

import json
import random

import pytest

from host_tools.engine.evaluate import Evaluator
from shoe import cards

FCF = "four-card-frenzy"
HCF = "high-card-flush"


@pytest.fixture(scope="module")
def device():
    with Evaluator("micropython") as ev:
        yield ev


def settle(device, rounds):
    """Every round through the engine on MicroPython and in CPython: the same bytes, parsed."""
    lines = [json.dumps(r) for r in rounds]
    for r in rounds:  # the cases themselves: valid, disjoint cards (an error line would hide why)
        held = list(r["dealer"]) + [c for s in r["seats"].values() for c in s["cards"]]
        if r.get("all_six_card"):
            held.append(r["all_six_card"])
        assert len(set(held)) == len(held), held
        assert all(c in ALL for c in held), held
    got = list(device.results(lines))
    with Evaluator("cpython") as ev:
        ref = list(ev.results(lines))
    assert got == ref
    out = [json.loads(x) for x in got]
    for r, o in zip(rounds, out):
        assert o["type"] == "round_result", (r, o)
    return out


ALL = [cards.name(c) for c in range(52)]


def fcf(dealer, seat, wagers, raise_, rules=None, six=None, table="fcf-public-1"):
    obj = {
        "game": FCF,
        "paytable": table,
        "dealer": dealer.split(),
        "all_six_card": six,
        "seats": {"1": {"cards": seat.split(), "wagers": wagers, "raise": raise_}},
    }
    if rules:
        obj["rules"] = rules
    return obj


def hcf(dealer, seat, wagers, raise_, table="hcf-public-1"):
    return {
        "game": HCF,
        "paytable": table,
        "dealer": dealer.split(),
        "seats": {"1": {"cards": seat.split(), "wagers": wagers, "raise": raise_}},
    }


def res(result, wager):
    w = result["seats"]["1"]["wagers"][wager]
    return w["result"], w["payout"]


MAIN = {"ante": 10, "odds": 10}
# dealer hands: OPENS = king high (opens, no pair); SHUT = queen high (does not open)
OPENS = "Kc 9d 7h 4s 2c"
SHUT = "Qc Jd 9h 4s 2c"


@pytest.mark.clause("684a.11(c)(2)(i)")
def test_ante_is_returned_when_the_dealer_is_not_king_high(device):
    win, lose, tie, king = settle(
        device,
        [
            fcf(SHUT, "Kd 8h 7c 5d 3s", MAIN, 10),  # the player beats the dealer
            fcf(SHUT, "Jc 8h 7c 5d 3s", MAIN, 10),  # the dealer beats the player
            fcf(SHUT, "Qd Jh 9c 4d 2d", MAIN, 10),  # equal hands
            fcf(OPENS, "Qd 8h 6c 5d 3s", MAIN, 10),
        ],
    )  # the boundary: king high is "or better"
    assert [res(r, "ante") for r in (win, lose, tie)] == [(0, 0)] * 3
    assert win["dealer"]["opens"] is False
    assert king["dealer"]["opens"] is True and res(king, "ante") == (-1, -10)


@pytest.mark.clause("684a.11(c)(2)(ii)(A)", "684a.11(c)(2)(ii)(B)")
def test_ante_when_the_dealer_opens(device):
    higher, equal, lower = settle(
        device,
        [
            fcf(OPENS, "Ad 8h 6c 5d 3s", MAIN, 10),
            fcf(OPENS, "Kd 9c 7c 4d 2d", MAIN, 10),
            fcf(OPENS, "Qd 8h 6c 5d 3s", MAIN, 10),
        ],
    )
    assert higher["dealer"]["opens"] is True
    assert res(higher, "ante") == (1, 10) and res(equal, "ante") == (1, 10)
    assert res(lower, "ante") == (-1, -10)


@pytest.mark.clause("684a.11(c)(3)(i)", "684a.11(c)(3)(ii)")
def test_raise_by_comparison_whether_or_not_the_dealer_opens(device):
    rs = settle(
        device,
        [
            fcf(OPENS, "Ad 8h 6c 5d 3s", MAIN, 10),  # higher, dealer opens
            fcf(OPENS, "Kd 9c 7c 4d 2d", MAIN, 10),  # equal
            fcf(OPENS, "Qd 8h 6c 5d 3s", MAIN, 10),  # lower
            fcf(SHUT, "Kd 8h 7c 5d 3s", MAIN, 10),  # higher, dealer does not open
            fcf(SHUT, "Jc 8h 7c 5d 3s", MAIN, 10),  # lower, dealer does not open
            fcf(OPENS, "Ac Ad 6c 5d 3s", MAIN, 30),
        ],
    )  # pair of aces raised 3x, higher
    assert [res(r, "raise") for r in rs] == [
        (1, 10),
        (1, 10),
        (-1, -10),
        (1, 10),
        (-1, -10),
        (1, 30),
    ]


@pytest.mark.clause("684a.11(c)(4)(i)(A)", "684a.11(c)(4)(i)(B)")
def test_odds_on_a_straight_or_better_win_or_bad_beat(device):
    # odds.win / odds.bad_beat of fcf-public-1: straight 1/2, flush 1.5/3, trips 2/4,
    # straight flush 15/50, quads 30/100
    rs = settle(
        device,
        [
            fcf(OPENS, "5c 6d 7c 8s Ad", MAIN, 10),  # straight beats K high: win 1
            fcf("9c 9d 9h 4s 2c", "Ah Kh 8h 5h 3s", MAIN, 10),  # flush loses to trips: bad beat 3
            fcf("Ac Ad Ah As 2c", "Kh Qh Jh Th 3s", MAIN, 10),  # straight flush loses to quads: 50
            fcf(OPENS, "3c 3d 3h 3s 5d", MAIN, 10),  # quads win: 30
            fcf("Qc Qd Qh 4s 2c", "3c 3d 3h 8s 5d", MAIN, 10),
        ],
    )  # trips lose to trips: bad beat 4
    assert [res(r, "odds") for r in rs] == [(1, 10), (3, 30), (50, 500), (30, 300), (4, 40)]


@pytest.mark.clause("684a.11(c)(4)(ii)(A)", "684a.11(c)(4)(ii)(B)")
def test_odds_on_two_pair_or_lower_push_or_lose(device):
    rs = settle(
        device,
        [
            fcf(OPENS, "Ad Ac 6c 6d 3s", MAIN, 10),  # two pair beats K high: push
            fcf(OPENS, "Kd 9c 7c 4d 2d", MAIN, 10),  # equal high cards: push
            fcf(OPENS, "Qd 8h 6c 5d 3s", MAIN, 10),  # lower: lost
            fcf("Ac Ad Kh Ks 2c", "Qd Qh 6c 6d 3s", MAIN, 10),
        ],
    )  # two pair under two pair: lost
    assert [res(r, "odds") for r in rs] == [(0, 0), (0, 0), (-1, -10), (-1, -10)]


@pytest.mark.clause("rules:1.6-odds-by-hands", "rules:1.6-ties")
def test_odds_follow_the_hands_under_both_tie_rules_and_whether_the_dealer_opens(device):
    tie = ("5c 6d 7h 8s 2c", "5d 6h 7c 8c 3s")  # the same straight: a tie
    player, push, shut = settle(
        device,
        [
            fcf(*tie, MAIN, 10),
            fcf(*tie, MAIN, 10, rules={"ties": "push"}),
            fcf(SHUT, "5d 6h 7c 8s 3d", MAIN, 10),
        ],
    )  # straight, the dealer does not open
    assert [res(player, w) for w in ("ante", "odds", "raise")] == [(1, 10), (1, 10), (1, 10)]
    assert [res(push, w) for w in ("ante", "odds", "raise")] == [(0, 0), (1, 10), (0, 0)]
    assert res(shut, "odds") == (1, 10) and res(shut, "ante") == (0, 0)


@pytest.mark.clause("684a.11(b)(2)", "684a.11(d)(1)", "684a.7(d)(2)")
def test_a_fold_loses_ante_and_odds_and_keeps_the_optional_wagers_in_action(device):
    w = {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5}
    # a straight flush, four red cards, three nines with the All-Six card; folded
    folded, played, mixed = settle(
        device,
        [
            fcf("Ac Ad Kh Ks 2c", "9h 9c Th Jh Qh", w, 0, six="9s"),
            fcf("Ac Ad Kh Ks 2c", "9h 9c Th Jh Qh", w, 10, six="9s"),
            fcf("Ac Ad Kh Ks 2c", "9h 9c Th Js Qh", w, 0, six="9s"),
        ],
    )  # three red, two black
    assert res(folded, "ante") == (-1, -10) and res(folded, "odds") == (-1, -10)
    assert folded["seats"]["1"]["wagers"]["raise"] == {"amount": 0, "result": 0, "payout": 0}
    for k in ("prime", "four_card_bonus", "all_six"):  # the same as when the seat played
        assert res(folded, k) == res(played, k)
    # Prime: 4 of 5 red pays four_one_colour 1; five of one colour 5; 3-2 loses
    assert res(folded, "prime") == (1, 5)
    assert res(mixed, "prime") == (-1, -5)
    assert res(folded, "four_card_bonus") == (30, 150)  # straight flush 9-T-J-Q
    assert res(folded, "all_six") == (3, 15)  # three nines with the 9s


@pytest.mark.clause("684a.7(d)(3)", "684a.11(d)(2)", "rules:1.6-four-card-bonus")
def test_four_card_bonus_pays_two_pair_or_better_by_category(device):
    dealer = "Tc Td 6h 6c 3d"
    hands = [
        ("9c 9d 9h 9s 2c", "four_of_a_kind", 100),
        ("As Ks Qs Js 2d", "royal_flush", 50),
        ("Ks Qs Js Ts 2d", "straight_flush", 30),
        ("8c 8d 8h 3s 2d", "three_of_a_kind", 8),
        ("Kh Th 7h 4h 2c", "flush", 4),
        ("5c 6d 7h 8s Kc", "straight", 3),
        ("Jc Jd 4h 4s 2c", "two_pair", 2),
        ("Qc Qd 7h 4s 2c", None, -1),
        ("Ac Kd 9h 5s 3c", None, -1),
    ]
    rs = settle(
        device,
        [fcf(dealer, h, {"ante": 10, "odds": 10, "four_card_bonus": 10}, 10) for h, _, _ in hands],
    )
    for (h, cat, odds), r in zip(hands, rs):
        w = r["seats"]["1"]["wagers"]["four_card_bonus"]
        assert (w["category"], w["result"], w["payout"]) == (cat, odds, 10 * odds), h


@pytest.mark.clause("684a.7(d)(4)", "684a.11(d)(3)")
def test_all_six_combines_the_all_six_card_with_the_five(device):
    w = {"ante": 10, "odds": 10, "all_six": 10}
    dealer = "Ac Kd 7d 5d 3d"
    cases = [
        ("9c 9d 4h 7s 2c", "9h", "three_of_a_kind", 3),  # the sixth card makes trips
        ("9c 9d 4h 7s 2c", "Kh", None, -1),  # only a pair
        ("9c 9d 4h 4s 2c", "9h", "full_house", 10),
        ("As Ks Qs Js Ts", "9s", "six_card_royal_flush", 1000),
        ("As Ks Qs Js Ts", "2h", "royal_flush", 200),
        ("4c 5h 6s 7c Kh", "8h", "straight", 4),
    ]
    rs = settle(device, [fcf(dealer, h, w, 10, six=six) for h, six, _, _ in cases])
    for (h, six, cat, odds), r in zip(cases, rs):
        e = r["seats"]["1"]["wagers"]["all_six"]
        assert (e["category"], e["result"], e["payout"]) == (cat, odds, 10 * odds), (h, six)
        assert r["all_six_card"] == six


@pytest.mark.clause("rules:1.6-payout-limit")
def test_the_payout_limit_caps_the_wins_of_a_seat_in_both_games(device):
    fcf_table = {
        "name": "capped",
        "game": FCF,
        "example": True,
        "odds": {"straight_flush": {"win": 15, "bad_beat": 50}},
        "four_card_bonus": {"royal_flush": 50},
        "prime": {"five_one_colour": 5},
        "payout_limit": 100,
    }
    hcf_table = {
        "name": "capped-hcf",
        "game": HCF,
        "example": True,
        "flush_bonus": {"6": 100},
        "straight_flush_bonus": {"3": 7},
        "payout_limit": 50,
    }
    a, b = settle(
        device,
        [
            fcf(
                "9c 9d 4h 4s 2c",
                "As Ks Qs Js 2d",
                {"ante": 10, "odds": 10, "four_card_bonus": 5, "prime": 7},
                10,
                table=fcf_table,
            ),
            hcf(
                "9h 5h 2h Kc Qd 7s 3c",
                "2s 4s 6s 8s Ts Qs 3d",
                {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 1},
                10,
                table=hcf_table,
            ),
        ],
    )
    s = a["seats"]["1"]
    assert s["capped"] is True and s["net"] == 100 - 7 and s["uncapped_net"] == 420 - 7
    s = b["seats"]["1"]
    # ante 10 + raise 10 + flush bonus 500 = 520 won, capped at 50; the SF bonus (none) lost
    assert s["capped"] is True and s["net"] == 50 - 1 and s["uncapped_net"] == 520 - 1


@pytest.mark.clause("rules:2.2-fold", "678a.7(d)(2)")
def test_hcf_fold_loses_the_ante_and_keeps_the_bonus_wagers(device):
    w = {"ante": 10, "flush_bonus": 10, "straight_flush_bonus": 10}
    dealer = "Ah Kh 9h 4d 6c 7c Jd"
    folded, played = settle(
        device,
        [hcf(dealer, "2s 5s 8s Ts Qs 3d 4c", w, 0), hcf(dealer, "2s 5s 8s Ts Qs 3d 4c", w, 10)],
    )
    assert res(folded, "ante") == (-1, -10)
    assert folded["seats"]["1"]["wagers"]["raise"] == {"amount": 0, "result": 0, "payout": 0}
    assert res(folded, "flush_bonus") == res(played, "flush_bonus") == (10, 100)  # 5-card flush
    assert res(folded, "straight_flush_bonus") == (-1, -10)


@pytest.mark.clause("678a.7(d)(2)", "678a.7(d)(3)", "678a.7(d)(4)")
def test_hcf_bonus_wagers_have_no_bearing_on_the_ante_and_raise(device):
    rng = random.Random(678)
    plain, bonus = [], []
    for _ in range(150):
        d = rng.sample(ALL, 14)
        raise_ = rng.choice([0, 10])
        plain.append(hcf(" ".join(d[:7]), " ".join(d[7:]), {"ante": 10}, raise_))
        bonus.append(
            hcf(
                " ".join(d[:7]),
                " ".join(d[7:]),
                {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 5, "progressive": 1},
                raise_,
            )
        )
    a, b = settle(device, plain), settle(device, bonus)
    for x, y in zip(a, b):
        for k in ("ante", "raise"):
            assert res(x, k) == res(y, k)
    # and the bonuses themselves were settled, some won
    assert any(res(y, "flush_bonus")[0] > 0 for y in b)
    assert any(res(y, "straight_flush_bonus")[0] > 0 for y in b)


@pytest.mark.clause("678a.7(d)(3)", "678a.7(d)(4)")
def test_hcf_straight_flush_bonus_and_progressive_pay_what_the_table_lists(device):
    own = {
        "name": "sf-from-4",
        "game": HCF,
        "example": True,
        "flush_bonus": {"4": 1},
        "straight_flush_bonus": {"4": 60, "5": 100},
        "progressive": {"3": "mini"},
        "payout_limit": None,
    }
    w = {"ante": 10, "straight_flush_bonus": 10, "progressive": 1}
    dealer = "Ac Kc Jc 8d 7s 3s 2s"
    three = "4h 5h 6h Ks Qd 9c 2d"  # a three-card straight flush
    four = "4h 5h 6h 7h Ks Qd 9c"  # a four-card straight flush
    a, b, c, d = settle(
        device,
        [
            hcf(dealer, three, w, 10),
            hcf(dealer, four, w, 10),
            hcf(dealer, three, w, 10, table=own),
            hcf(dealer, four, w, 10, table=own),
        ],
    )
    # hcf-public-1: SF bonus 3 -> 7, 4 -> 60; progressive tiers from 4 cards only
    assert res(a, "straight_flush_bonus") == (7, 70)
    assert res(b, "straight_flush_bonus") == (60, 600)
    pa, pb = a["seats"]["1"]["wagers"]["progressive"], b["seats"]["1"]["wagers"]["progressive"]
    assert (pa["tier"], pa["result"]) == (None, -1) and (pb["tier"], pb["result"]) == ("tier-4", 0)
    # a table without the 3-card SF bonus line loses it; its progressive has only a 3-card tier
    assert res(c, "straight_flush_bonus") == (-1, -10)
    assert res(d, "straight_flush_bonus") == (60, 600)
    pc, pd = c["seats"]["1"]["wagers"]["progressive"], d["seats"]["1"]["wagers"]["progressive"]
    assert (pc["tier"], pc["result"]) == ("mini", 0) and (pd["tier"], pd["result"]) == (None, -1)
