"""Tie-break and settlement tables from rules.md 1 and 2, written out case by case."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe.cards import parse
from shoe.games import allsix, engine, fcf, hcf


def v(text):
    return fcf.value([parse(c) for c in text.split()])


def cat(text):
    return fcf.CATEGORIES[fcf.category(v(text))]


# (better hand, worse hand) — each must compare strictly
BETTER = [
    ("2c 3d 4h 5s 9c", "Ac 2d 3h 4s 9d"),  # trap: 5-4-3-2 beats A-2-3-4 (top card 4)
    ("9c 9d 3h 2s 7c", "5c 5d Ah Ks 7d"),  # trap: 9-9-3-2 beats 5-5-A-K (pair rank first)
    ("Ac Kc Qc Jc 2d", "Kd Qd Jd Td 2h"),  # A-K-Q-J suited is the top straight flush
    ("2c 3c 4c 5c 9d", "Ah 2h 3h 4h 9s"),  # wheel straight flush is the lowest
    ("3c 3d 3h 3s 2c", "Ah Kh Qh Jh 2d"),  # quads beat straight flush
    ("Ah Kh Qh Jh 2d", "Ac Ad As 5c 2h"),  # straight flush beats trips
    ("2c 2d 2h 5c 3h", "Ac Kc 9c 4c 2d"),  # trips beat a flush
    ("Ac Kc 9c 4c 2d", "Ah Kd Qs Jc 2c"),  # flush beats a straight
    ("5c 6d 7h 8s Kc", "Ac Ad Kh Ks 2c"),  # straight beats two pair
    ("Ac Ad Kh Ks 2c", "Ac Ad Kh Qs 2c".replace("Ac Ad", "Ah As")),  # two pair beat a pair
    ("7c 7d 5h 5s 2c", "7h 7s 4h 4s Ac"),  # lower pair decides
    ("Ac Ad 9h 8s 2c", "Ah As 9c 7s 6c"),  # pair kickers high to low
    ("Ac Kd 9h 8s 2c", "Ah Kc 9c 7s 6d"),  # high card card by card
    ("Ac Kc 9c 5c 2d", "Ah Kh 9h 4h 3d"),  # flush card by card (4th card)
    ("8c 8d 8h Ac 2d", "8c 8d 8h Kc Qd".replace("8c 8d 8h", "8s 8c 8d")),  # trips, kicker
    ("Jc Qd Kh As 2d", "Tc Jd Qh Ks 2h"),  # higher straight
    ("Qc Kd 5h Ah 2s", "Qc Kd 4h 3h 2s"),  # Q-K-A-2 is no straight: A-K-Q-5 high beats K-Q
]
TIES = [
    ("Ac Ad Kh Ks 2c", "Ah As Kc Kd Qc"),  # two pair: the odd card never counts
    ("Ac Kc 9c 5c 2d", "Ad Kd 9d 5d 3h"),  # flush: fifth card and suits never count
    ("5c 6d 7h 8s 8c", "5h 6h 7c 8d Ks"),  # same straight, the pair inside does not count
    ("8c 8d 8h Ac Ad", "8s 8c 8d As Kh"),  # full house: trips + one kicker
    ("Ac 2d 3h 4s 4c", "Ad 2c 3s 4h Kc"),  # A-2-3-4 straight ties A-2-3-4
]


@pytest.mark.clause("rules:1.2-ace", "rules:1.2-categories", "rules:1.2-tiebreak")
@pytest.mark.parametrize("hi,lo", BETTER)
def test_better_hand_compares_higher(hi, lo):
    assert v(hi) > v(lo)


@pytest.mark.clause("rules:1.2-tiebreak")
@pytest.mark.parametrize("a,b", TIES)
def test_ties(a, b):
    assert v(a) == v(b)


@pytest.mark.clause("684a.11(c)", "rules:1.2-ace", "rules:1.2-best-four")
@pytest.mark.parametrize(
    "hand,category,best",
    [
        ("As Ks Qs Js 2d", "straight_flush", "As Ks Qs Js"),
        ("Ah 2c 3d 4s 9h", "straight", "4s 3d 2c Ah"),
        ("5h 5c Ad Ks 2h", "pair", "5h 5c Ad Ks"),
        ("9h 9c 3d 2s 2h", "two_pair", "9h 9c 2h 2s"),
        ("8c 8d 8h Ac Ad", "three_of_a_kind", "8h 8d 8c Ad"),
        ("7c 7d 7h 7s 2d", "four_of_a_kind", "7s 7h 7d 7c"),
        ("Qc Kd Ah 2s 5c", "high_card", "Ah Kd Qc 5c"),
        ("Kh Qh 7h 3h 2c", "flush", "Kh Qh 7h 3h"),
    ],
)
def test_category_and_best_four(hand, category, best):
    ids = [parse(c) for c in hand.split()]
    val = fcf.value(ids)
    assert fcf.CATEGORIES[fcf.category(val)] == category
    got = fcf.best_cards(ids, val)
    assert sorted(got) == sorted(parse(c) for c in best.split())


@pytest.mark.clause("rules:1.6-dealer-opens", "684a.11(c)(2)(i)")
@pytest.mark.parametrize(
    "hand,opens",
    [
        ("Kc 9d 7h 4s 2c", True),  # king high opens
        ("Qc Jd 9h 4s 2c", False),  # queen high does not
        ("2c 2d 7h 4s 9c", True),  # any pair
        ("Ac 2d 3h 4s 9c", True),  # straight
        ("Ac Qd 9h 4s 2c", True),
    ],
)
def test_dealer_opens(hand, opens):
    assert fcf.dealer_opens(v(hand)) is opens


@pytest.mark.clause("684a.11(b)(1)")
@pytest.mark.parametrize(
    "hand,mult",
    [
        ("Kc Kd 7h 4s 2c", (1,)),  # pair of kings: exactly the Ante
        ("Ac Ad 7h 4s 2c", (1, 2, 3)),  # pair of aces: 1x, 2x, 3x
        ("Qc Jd 9h 4s 2c", (1,)),
        ("3c 3d 2h 2s 9c", (1, 2, 3)),  # two pair is above a pair of aces
    ],
)
def test_raise_multiples(hand, mult):
    assert fcf.raise_multiples(v(hand)) == mult


def rnd(dealer, cards, wagers, raise_, rules=None, six=None, table="fcf-public-1"):
    obj = {
        "game": "four-card-frenzy",
        "paytable": table,
        "dealer": dealer.split(),
        "all_six_card": six,
        "seats": {"1": {"cards": cards.split(), "wagers": wagers, "raise": raise_}},
    }
    if rules:
        obj["rules"] = rules
    return engine.evaluate_round(obj)


def results(r, seat="1"):
    return {k: (w["result"], w["payout"]) for k, w in r["seats"][seat]["wagers"].items()}


@pytest.mark.clause(
    "684a.7(d)(3)",
    "684a.11(c)",
    "684a.11(c)(2)(ii)(A)",
    "684a.11(c)(4)(i)(A)",
    "684a.11(d)(1)",
    "684a.11(d)(2)",
    "rules:1.6-four-card-bonus",
)
def test_interface_example_round():
    r = rnd(
        "Ah Kd 7c 7s 2h",
        "As Ks Qs Js 2d",
        {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5},
        30,
        six="9h",
    )
    s = r["seats"]["1"]
    assert s["category"] == "straight_flush"
    assert r["dealer"] == {
        "cards": ["Ah", "Kd", "7c", "7s", "2h"],
        "best": ["7s", "7c", "Ah", "Kd"],
        "category": "pair",
        "opens": True,
    }
    w = s["wagers"]
    assert w["ante"] == {"amount": 10, "result": 1, "payout": 10}
    assert w["odds"] == {"amount": 10, "result": 15, "payout": 150}
    assert w["raise"] == {"amount": 30, "result": 1, "payout": 30}
    assert w["four_card_bonus"] == {
        "amount": 5,
        "category": "royal_flush",
        "result": 50,
        "payout": 250,
    }
    assert w["prime"] == {"amount": 5, "result": 1, "payout": 5}  # 4 black of 5
    assert w["all_six"]["result"] == -1 and w["all_six"]["category"] is None
    assert s["net"] == 10 + 150 + 30 + 250 + 5 - 5 and s["capped"] is False


@pytest.mark.clause("684a.11(c)(2)(ii)(A)", "684a.11(c)(3)(i)", "684a.11(c)(4)(ii)(A)")
def test_king_high_dealer_that_does_not_beat_the_player():
    # dealer opens with K high; the player's A high beats it: Ante and Raise win
    r = rnd("Kc 9d 7h 4s 2c", "Ad Qh 8c 5d 3s", {"ante": 10, "odds": 10}, 10)
    assert r["dealer"]["opens"] is True
    assert results(r) == {"ante": (1, 10), "odds": (0, 0), "raise": (1, 10)}


@pytest.mark.clause(
    "684a.11(c)(2)(i)",
    "684a.11(c)(3)(i)",
    "684a.11(c)(3)(ii)",
    "684a.11(c)(4)(ii)(B)",
    "rules:1.6-raise-not-open",
)
def test_dealer_not_open_variants():
    args = ("Qc Jd 9h 4s 2c", "Kd 8h 7c 5d 3s", {"ante": 10, "odds": 10}, 10)
    assert results(rnd(*args)) == {"ante": (0, 0), "odds": (0, 0), "raise": (1, 10)}
    lose = ("Qc Jd 9h 4s 2c", "Jc 8h 7c 5d 3s", {"ante": 10, "odds": 10}, 10)
    assert results(rnd(*lose)) == {"ante": (0, 0), "odds": (-1, -10), "raise": (-1, -10)}
    got = results(rnd(*lose, rules={"raise_when_dealer_not_open": "win"}))
    assert got == {"ante": (0, 0), "odds": (-1, -10), "raise": (1, 10)}


@pytest.mark.clause(
    "684a.11(c)(2)(ii)(A)", "684a.11(c)(3)(i)", "684a.11(c)(4)(ii)(A)", "rules:1.6-ties"
)
def test_ties_variant():
    tie = ("Ac Kd 9h 8s 2c", "Ah Kc 9c 8d 3c", {"ante": 10, "odds": 10}, 10)
    assert results(rnd(*tie)) == {"ante": (1, 10), "odds": (0, 0), "raise": (1, 10)}
    assert results(rnd(*tie, rules={"ties": "push"})) == {
        "ante": (0, 0),
        "odds": (0, 0),
        "raise": (0, 0),
    }


@pytest.mark.clause(
    "684a.11(b)(2)",
    "684a.11(c)(2)(ii)(B)",
    "684a.11(c)(3)(ii)",
    "684a.11(c)(4)(i)(B)",
    "684a.11(d)(2)",
)
def test_bad_beat_and_fold():
    # player flush loses to dealer trips: Odds pays the bad beat 3 to 1
    r = rnd("9c 9d 9h 4s 2c", "Ah Kh 8h 5h 3s", {"ante": 10, "odds": 10}, 10)
    assert results(r) == {"ante": (-1, -10), "odds": (3, 30), "raise": (-1, -10)}
    # fold: Ante and Odds lost, even with a straight flush; bonus wagers still act
    r = rnd("9c 9d 9h 4s 2c", "As Ks Qs Js 2d", {"ante": 10, "odds": 10, "four_card_bonus": 1}, 0)
    assert results(r) == {
        "ante": (-1, -10),
        "odds": (-1, -10),
        "raise": (0, 0),
        "four_card_bonus": (50, 50),
    }


@pytest.mark.clause("rules:4-round-down")
def test_fractional_odds_round_down_and_say_so():
    r = rnd("9c 9d 4h 4s 2c", "Ah Kh 8h 5h 3s", {"ante": 5, "odds": 5}, 5)
    w = r["seats"]["1"]["wagers"]["odds"]
    assert w == {"amount": 5, "result": 1.5, "payout": 7, "rounded": True}


@pytest.mark.clause("rules:1.6-payout-limit")
def test_payout_limit_caps_wins_not_losses():
    table = {
        "name": "capped",
        "game": "four-card-frenzy",
        "example": True,
        "odds": {"straight_flush": {"win": 15, "bad_beat": 50}},
        "four_card_bonus": {"royal_flush": 50},
        "prime": {},
        "payout_limit": 100,
    }
    r = rnd(
        "9c 9d 4h 4s 2c",
        "As Ks Qs Js 2d",
        {"ante": 10, "odds": 10, "four_card_bonus": 5, "prime": 7},
        10,
        table=table,
    )
    s = r["seats"]["1"]
    # wins 10 + 150 + 10 + 250 = 420 -> 100; the Prime loss (-7) is not capped
    assert s["capped"] is True and s["net"] == 100 - 7 and s["uncapped_net"] == 420 - 7


@pytest.mark.clause("684a.7(d)(4)", "684a.11(d)(3)", "rules:1.6-all-six")
@pytest.mark.parametrize(
    "cards,category",
    [
        ("Ah Kh Qh Jh Th 9h", "six_card_royal_flush"),
        ("Ah Kh Qh Jh Th 2c", "royal_flush"),
        ("Ah 2h 3h 4h 5h Kc", "straight_flush"),  # the wheel is allowed
        ("9h 9c 9d 9s 2c 3c", "four_of_a_kind"),
        ("9h 9c 9d 2s 2c 3c", "full_house"),
        ("9h 9c 9d 2s 2c 2d", "full_house"),  # two trips
        ("Ah 9h 7h 4h 2h 2c", "flush"),
        ("Ac 2d 3h 4s 5c Kd", "straight"),
        ("Qc Kd Ah 2s 3c 4d", None),  # no wrap
        ("9h 9c 9d 2s 5c 7d", "three_of_a_kind"),
        ("9h 9c 8d 8s 5c 5d", None),
    ],
)
def test_all_six_categories(cards, category):
    ids = [parse(c) for c in cards.split()]
    assert allsix.category(ids) == category
    assert allsix.category(ids[:5], ids[5]) == category  # the All-Six card given apart


def h7(text):
    return [parse(c) for c in text.split()]


@pytest.mark.clause("rules:2.1-flush")
def test_hcf_flush_and_tie_between_suits():
    hand = h7("Ah 9h 3h Kc Qc 2c 5d")
    v = hcf.flush_value(hand)
    assert hcf.length(v) == 3
    assert hcf.flush_cards(hand, v) == h7("Ah 9h 3h")  # A-9-3 beats K-Q-2
    hand = h7("Kh 9h 3h Kc Qc 2c 5d")
    assert hcf.flush_cards(hand, hcf.flush_value(hand)) == h7("Kc Qc 2c")
    # two suits with the same ranks: the lowest suit's cards (suits c d h s), as flush_suit
    hand = h7("As Ks Qs Ah Kh Qh 2c")
    assert hcf.flush_suit(hand) == 2
    assert hcf.flush_cards(hand, hcf.flush_value(hand)) == h7("Ah Kh Qh")
    assert hcf.flush_and_straight(hand, hcf.flush_value(hand)) == (h7("Ah Kh Qh"), 3)


@settings(max_examples=300, deadline=None)
@given(st.permutations(range(52)).map(lambda d: d[:7]))
def test_hcf_flush_cards_are_the_flush_suits_cards_high_to_low(hand):
    """flush_cards reads the flush suit's rank mask from the ace down: the same ids as the
    hand's cards of that suit, sorted high to low (an id is rank << 2 | suit)."""
    suit = hcf.flush_suit(hand)
    want = sorted((c for c in hand if c & 3 == suit), reverse=True)
    got = hcf.flush_cards(hand, hcf.flush_value(hand))
    assert got == want and len(got) == hcf.length(hcf.flush_value(hand))
    # the settlement's one-pass form: the same cards and the same straight flush
    assert hcf.flush_and_straight(hand, hcf.flush_value(hand)) == (want, hcf.straight_flush(hand))


@pytest.mark.clause("rules:2.1-compare")
def test_hcf_comparison():
    fv = hcf.flush_value
    assert fv(h7("2h 3h 4h 5h Ac Kd Qs")) > fv(h7("Ah Kh Qh Jc Tc 9d 8s"))  # length first
    assert fv(h7("Ah Kh 2h Jc Tc 9d 8s")) > fv(h7("Ad Qd Jd Kc Tc 9h 8s"))  # then card by card
    assert fv(h7("Ah Kh 2h Jc Tc 9d 8s")) == fv(h7("Ad Kd 2d Jh Tc 9c 8s"))  # off-suit: no


@pytest.mark.clause("678a.7(d)(3)", "rules:2.1-straight-flush")
@pytest.mark.parametrize(
    "cards,run",
    [
        ("Ah 2h 3h 9c Tc 4d Kh", 3),  # A-2-3 counts
        ("Qh Kh Ah 2h 9c 5d 7s", 3),  # Q-K-A, not Q-K-A-2 (no wrap)
        ("9s Ts Js Qs Ks As 2c", 6),
        ("2s 3s 4s 5s 6s 7s 8s", 7),
        ("2s 3s 5s 6s 8s 9s Jc", 0),
    ],
)
def test_hcf_longest_straight_flush(cards, run):
    assert hcf.straight_flush(h7(cards)) == run


@pytest.mark.clause("rules:2.2-dealer-qualifies")
@pytest.mark.parametrize(
    "cards,q",
    [
        ("9h 5h 2h Kc Qd 7s 3c", True),  # 3-card flush, 9 high
        ("8h 5h 2h Kc Qd 7s 3c", False),  # 8 high
        ("8h 5h 3h 2h Qd 7s 3c", True),  # any 4-card flush
        ("Ah Kc Qd Js 9h 8c 7d", False),  # two-card flushes only
    ],
)
def test_hcf_dealer_qualifies(cards, q):
    assert hcf.qualifies(hcf.flush_value(h7(cards))) is q


def hcf_round(dealer, cards, wagers, raise_, table="hcf-public-1"):
    return engine.evaluate_round(
        {
            "game": "high-card-flush",
            "paytable": table,
            "dealer": dealer.split(),
            "seats": {"1": {"cards": cards.split(), "wagers": wagers, "raise": raise_}},
        }
    )


@pytest.mark.clause(
    "678a.7(d)(2)",
    "678a.7(d)(3)",
    "678a.7(d)(4)",
    "rules:2.2-fold",
    "rules:2.2-not-qualified",
    "rules:2.2-qualified",
)
def test_hcf_settlement():
    # dealer does not qualify: Ante wins, Raise pushes
    r = hcf_round("8h 5h 2h Kc Qd 7s 3c", "As Ks 4s Jd Td 6c 9h", {"ante": 10}, 10)
    assert results(r) == {"ante": (1, 10), "raise": (0, 0)}
    # qualifies, player higher; 5-card flush may raise 2x; bonuses
    r = hcf_round(
        "9h 5h 2h Kc Qd 7s 3c",
        "As Ks Qs Js Ts 2d 4c",
        {"ante": 10, "flush_bonus": 2, "straight_flush_bonus": 1, "progressive": 1},
        20,
    )
    assert results(r) == {
        "ante": (1, 10),
        "raise": (1, 20),
        "flush_bonus": (10, 20),
        "straight_flush_bonus": (100, 100),
        "progressive": (0, 0),
    }
    assert r["seats"]["1"]["wagers"]["progressive"]["tier"] == "tier-3"
    assert r["seats"]["1"]["flush"] == {"length": 5, "cards": ["As", "Ks", "Qs", "Js", "Ts"]}
    assert r["dealer"]["qualifies"] is True
    # player lower: both lost; tie: both push
    r = hcf_round("9h 5h 2h Kc Qd 7s 3c", "8d 5d 2d Ks Qc 7h 3s", {"ante": 10}, 10)
    assert results(r) == {"ante": (-1, -10), "raise": (-1, -10)}
    r = hcf_round("9h 5h 2h Kc Qd 7s 3c", "9d 5d 2d Ks Qc 7h 3s", {"ante": 10}, 10)
    assert results(r) == {"ante": (0, 0), "raise": (0, 0)}
    # fold loses the Ante only
    r = hcf_round(
        "9h 5h 2h Kc Qd 7s 3c", "9d 5d 2d Ks Qc 7h 3s", {"ante": 10, "flush_bonus": 1}, 0
    )
    assert results(r) == {"ante": (-1, -10), "raise": (0, 0), "flush_bonus": (-1, -1)}


@pytest.mark.clause("rules:2.2-raise-caps")
@pytest.mark.parametrize(
    "cards,allowed",
    [
        ("As Ks 4s Jd Td 6c 9h", (10,)),  # 3-card flush
        ("As Ks 4s 2s Td 6c 9h", (10,)),  # 4
        ("As Ks 4s 2s 3s 6c 9h", (10, 20)),  # 5
        ("As Ks 4s 2s 3s 6s 9h", (10, 20, 30)),  # 6
    ],
)
def test_hcf_raise_caps(cards, allowed):
    for amount in (5, 10, 15, 20, 30, 40):
        if amount in allowed:
            engine.check_raise("high-card-flush", 1, cards.split(), 10, amount)
        else:
            with pytest.raises(engine.EngineError) as e:
                engine.check_raise("high-card-flush", 1, cards.split(), 10, amount)
            assert e.value.reason == "invalid_raise"
    engine.check_raise("high-card-flush", 1, cards.split(), 10, 0)


def test_the_settlement_modules_constants_are_vocabs():
    """settle and hcfround keep ONE and LOST as their own constants (immediates in their code):
    they must be vocab's."""
    from shoe.games import hcfround, settle, vocab

    for mod in (settle, hcfround):
        assert (mod._ONE, mod._LOST) == (vocab.ONE, vocab.LOST), mod.__name__
