"""Real rounds on the virtual board: the firmware under MicroPython (64 KB data heap) deals,
tracks, settles; the host checks every card's place against rules.md, every hand against an
independent oracle (tests/oracle/naive.py, a suit count) and every result against the host's own
evaluation of the same hands."""

import random

import pytest

from shoe import cards
from shoe.games import engine, fcf
from tests.oracle import naive

ALL = [cards.name(i) for i in range(52)]


def stacked(seed):
    d = ALL[:]
    random.Random(seed).shuffle(d)
    return d


def expected_targets(game, procedure, seats, all_six):
    """Where each card goes, written straight from rules.md 1.4 / 2.2 (independent of firmware)."""
    n = 5 if game == "four-card-frenzy" else 7
    order = [str(s) for s in seats] + ["dealer"]
    out = []
    if procedure in ("manual-shoe", "hand"):
        if all_six:
            out.append("all_six")
        for _ in range(n):
            out += order
    else:
        for who in order:
            out += [who] * n
        if all_six:
            out += ["all_six"] + ["discard"] * 4
    return out


def script(game, procedure, seats, deck, raises=None):
    return {
        "game": game,
        "procedure": procedure,
        "seed": 1,
        "rounds": [
            {
                "deck": deck,
                "seats": {
                    s: {"wagers": w, "raise": (raises or {}).get(s, w["ante"])}
                    for s, w in seats.items()
                },
            }
        ],
    }


FCF_SEATS = {
    "1": {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5},
    "4": {"ante": 5, "odds": 5},
    "6": {"ante": 25, "odds": 25, "four_card_bonus": 10},
}
HCF_SEATS = {
    "2": {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 5},
    "5": {"ante": 10, "progressive": 1},
}


@pytest.mark.clause(
    "684a.11(c)",
    "rules:1.2-best-four",
    "rules:1.4-manual",
    "rules:1.4-hand",
    "rules:1.4-automated",
    "rules:2.2-dealing",
)
@pytest.mark.parametrize(
    "game,procedure,seats,seed",
    [
        ("four-card-frenzy", "manual-shoe", FCF_SEATS, 101),
        ("four-card-frenzy", "hand", FCF_SEATS, 102),
        ("four-card-frenzy", "automated-shoe", FCF_SEATS, 103),
        ("high-card-flush", "manual-shoe", HCF_SEATS, 104),
        ("high-card-flush", "automated-shoe", HCF_SEATS, 105),
    ],
)
def test_stacked_round_lands_and_settles_as_the_rules_say(table, game, procedure, seats, seed):
    deck = stacked(seed)
    table.runner.play(script(game, procedure, seats, deck))
    rec = table.recorder
    a6 = any("all_six" in w for w in seats.values())
    want = expected_targets(game, procedure, sorted(seats, key=int), a6)
    got = [(c["position"], str(c["target"])) for c in rec.of("card")]
    assert [g[0] for g in got] == list(range(len(want)))
    assert [g[1] for g in got] == want
    # each card went out as a commitment; the reveal opens them all (the host checked each)
    [rev] = rec.of("reveal")
    assert rev["cards"] == deck[: len(want)]
    assert all("card" not in c for c in rec.of("card")) and not rec.of("reveal_mismatch")
    [result] = rec.of("round_result")
    assert not rec.of("round_void")
    # The same hands evaluated on the host by the engine give the same result.
    hands = {s: [c for c, t in zip(deck, want) if t == s] for s in seats}
    obj = {
        "game": game,
        "paytable": "fcf-public-1" if game == "four-card-frenzy" else "hcf-public-1",
        "rules": {},
        "dealer": [c for c, t in zip(deck, want) if t == "dealer"],
        "seats": {
            s: {"cards": hands[s], "wagers": seats[s], "raise": seats[s]["ante"]} for s in seats
        },
    }
    if game == "four-card-frenzy":
        obj["all_six_card"] = next((c for c, t in zip(deck, want) if t == "all_six"), None)
    # Independent of the engine: each hand's category by the naive all-subsets evaluator (FCF),
    # each hand's flush length by counting suits (HCF), and every net the sum of its payouts.
    for who, mine in [("dealer", result["dealer"])] + [(s, result["seats"][s]) for s in seats]:
        hand = obj["dealer"] if who == "dealer" else hands[who]
        assert mine["cards"] == hand
        ids = [cards.parse(c) for c in hand]
        if game == "four-card-frenzy":
            assert mine["category"] == fcf.CATEGORIES[naive.value(ids) >> 26], (who, hand)
        else:
            assert mine["flush"]["length"] == max(
                sum(1 for c in ids if cards.suit(c) == u) for u in range(4)
            ), (who, hand)
        if who != "dealer":
            assert mine["uncapped_net"] == sum(w["payout"] for w in mine["wagers"].values())
    # and the host's re-evaluation with the engine (what the audit does) gives the same result
    expect = engine.evaluate_round(obj)
    for key in ("dealer", "seats"):
        assert result[key] == expect[key]
    assert result["round"] == 1
    [stub] = rec.of("stub")
    assert stub["ok"] and stub["counts"]["total"] == 52


def test_six_seat_round_result_fits_the_frame_budget(table):
    from host_tools.engine import unpacking
    from shoe.games import packing

    seats = {
        str(s): {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5}
        for s in range(1, 7)
    }
    table.runner.play(script("four-card-frenzy", "manual-shoe", seats, stacked(99)))
    [result] = table.recorder.of("round_result")
    assert len(result["seats"]) == 6
    wire = packing.pack(dict(result, deck=int(result["deck"], 16)))  # as the shoe sent it
    assert len(wire) <= 400  # + envelope, MAC and framing stays within 512 bytes
    assert unpacking.unpack(wire)["seats"] == result["seats"]
