"""Random dealt rounds for the engine tests (seeded): valid ones and deliberately broken ones."""

import json
import random

from shoe import cards

FCF = "four-card-frenzy"
HCF = "high-card-flush"

# a pay table with fractional odds and a payout limit, to exercise rounding and the cap
FRACTIONAL_FCF = {
    "name": "test-fractional",
    "game": FCF,
    "example": True,
    "odds": {
        "four_of_a_kind": {"win": 30, "bad_beat": 100},
        "straight_flush": {"win": 15.5, "bad_beat": 50},
        "three_of_a_kind": {"win": 2.25, "bad_beat": 4},
        "flush": {"win": 1.5, "bad_beat": 3.1},
        "straight": {"win": 1.2, "bad_beat": 2},
    },
    "prime": {"five_one_colour": 5.5, "four_one_colour": 1.25},
    "four_card_bonus": {
        "four_of_a_kind": 100,
        "royal_flush": 50,
        "straight_flush": 30.5,
        "three_of_a_kind": 8,
        "flush": 4.75,
        "straight": 3,
        "two_pair": 2.5,
    },
    "all_six": {
        "six_card_royal_flush": 1000,
        "royal_flush": 200,
        "straight_flush": 50,
        "four_of_a_kind": 20,
        "full_house": 10.5,
        "flush": 5,
        "straight": 4.5,
        "three_of_a_kind": 3.3333,
    },
    "payout_limit": 200,
}
FRACTIONAL_HCF = {
    "name": "test-hcf-fractional",
    "game": HCF,
    "example": True,
    "flush_bonus": {"7": 300, "6": 100.5, "5": 10.25, "4": 1.5},
    "straight_flush_bonus": {"7": 8000, "6": 1000, "5": 100, "4": 60.75, "3": 7.5},
    "progressive": {"7": "jackpot", "6": "tier-2", "5": "tier-3"},
    "payout_limit": 500,
}


def _copy(table):
    return json.loads(json.dumps(table)) if isinstance(table, dict) else table


def _amount(rng):
    return rng.choice((1, 2, 3, 5, 7, 10, 25, 99, 100, 1000, 12345))


def fcf_round(rng, seats=None, table=None):
    n = seats or rng.randint(1, 6)
    deck = list(range(52))
    rng.shuffle(deck)
    ids = rng.sample(range(1, 7), n)
    six = rng.random() < 0.7
    rnd = {
        "game": FCF,
        "paytable": _copy(table or rng.choice(["fcf-public-1", FRACTIONAL_FCF])),
        "rules": {
            "ties": rng.choice(["player", "push"]),
            "raise_when_dealer_not_open": rng.choice(["compare", "win"]),
        },
        "dealer": cards.names(deck[:5]),
        "all_six_card": cards.name(deck[5]) if six else None,
        "seats": {},
    }
    pos = 6
    from shoe.games import fcf

    for s in ids:
        hand = deck[pos : pos + 5]
        pos += 5
        ante = _amount(rng)
        w = {"ante": ante, "odds": ante}
        for k in ("prime", "four_card_bonus") + (("all_six",) if six else ()):
            if rng.random() < 0.6:
                w[k] = _amount(rng)
        mult = fcf.raise_multiples(fcf.value(hand))
        r = 0 if rng.random() < 0.15 else ante * rng.choice(mult)
        rnd["seats"][str(s)] = {"cards": cards.names(hand), "wagers": w, "raise": r}
    return rnd


def hcf_round(rng, seats=None, table=None):
    n = seats or rng.randint(1, 6)
    deck = list(range(52))
    rng.shuffle(deck)
    ids = rng.sample(range(1, 7), n)
    rnd = {
        "game": HCF,
        "paytable": _copy(table or rng.choice(["hcf-public-1", "hcf-public-2", FRACTIONAL_HCF])),
        "dealer": cards.names(deck[:7]),
        "seats": {},
    }
    pos = 7
    from shoe.games import hcf

    for s in ids:
        hand = deck[pos : pos + 7]
        pos += 7
        ante = _amount(rng)
        w = {"ante": ante}
        for k in ("flush_bonus", "straight_flush_bonus", "progressive"):
            if rng.random() < 0.6:
                w[k] = _amount(rng)
        mult = hcf.raise_multiples(hcf.flush_value(hand))
        r = 0 if rng.random() < 0.15 else ante * rng.choice(mult)
        rnd["seats"][str(s)] = {"cards": cards.names(hand), "wagers": w, "raise": r}
    return rnd


def broken(rng, rnd):
    """A copy of a round with one thing wrong (the kind of mistake a table system makes)."""
    r = json.loads(json.dumps(rnd))
    seat = r["seats"][sorted(r["seats"])[0]]
    kind = rng.randrange(9)
    if kind == 0:
        seat["cards"][0] = r["dealer"][0]
    elif kind == 1:
        seat["cards"] = seat["cards"][:-1]
    elif kind == 2:
        seat["raise"] = seat["wagers"]["ante"] * 7
    elif kind == 3 and r["game"] == FCF:
        seat["wagers"]["odds"] = seat["wagers"]["ante"] + 1
    elif kind == 4:
        seat["cards"][1] = rng.choice(["1s", "AS", "10h", "", "CV", 7, None])
    elif kind == 5:
        r["paytable"] = rng.choice(
            ["no-such-table", {"name": "x", "game": r["game"], "flush_bonus": {"4": -1}}]
        )
    elif kind == 6:
        seat["wagers"]["ante"] = rng.choice([-5, 2.5, "10", True])
    elif kind == 7:
        r["seats"]["9"] = seat
    else:
        del r["dealer"]
    return r


def stream(seed, count, bad_every=0):
    """`count` JSON lines; every `bad_every`-th one broken (0 = none)."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        rnd = fcf_round(rng) if rng.random() < 0.6 else hcf_round(rng)
        if bad_every and i % bad_every == bad_every - 1:
            rnd = broken(rng, rnd)
        lines.append(json.dumps(rnd))
    return lines
