"""Whole rounds through the table: every procedure of both games with stacked decks.

Each card must land where rules.md 1.4 / 2.2 says; the hands handed to the engine are exactly
the dealt ones; with the real engine (shoe.games.engine) the round_result equals
engine.evaluate_round for the same hands.
"""

import json

import pytest

from shoe.cards import name
from shoe.table import CommandError
from tests.firmware.table import fake_engine
from tests.firmware.table.helpers import (
    FCF,
    HCF,
    SER,
    expected_targets,
    kinds,
    make,
    of,
    play,
    revealed,
    run_pass,
    shuffled,
)

PROCS = ("manual-shoe", "hand", "automated-shoe")
CASES = [
    (g, p, seats, a6)
    for g in (FCF, HCF)
    for p in PROCS
    for seats, a6 in (((1,), ()), ((2, 5), (5,)), ((1, 2, 3, 4, 5, 6), (1, 4)))
]


def hands_from(order, targets):
    h = {}
    for c, t in zip(order, targets):
        h.setdefault(t, []).append(name(c))
    return h


@pytest.mark.clause(
    "684a.11(e)", "rules:1.4-manual", "rules:1.4-hand", "rules:1.4-automated", "rules:2.2-dealing"
)
@pytest.mark.parametrize("game,proc,seats,a6", CASES)
def test_every_card_lands_where_the_rules_say(game, proc, seats, a6):
    t = make(game, proc)
    order = shuffled(len(game) * 100 + len(proc) * 10 + len(seats))
    a6 = a6 if game == FCF else ()
    ev = play(t, seats, order, a6_seats=a6)
    targets = expected_targets(game, proc, seats, bool(a6))
    cards = of(ev, "card")
    assert [c["target"] for c in cards] == targets
    assert [c["position"] for c in cards] == list(range(len(targets)))
    # the cards leave as commitments; the reveal opens every one of them, in dealing order
    assert revealed(ev) == [name(c) for c in order[: len(targets)]]
    assert of(ev, "deal_complete") == [{"round": 1, "cards": len(targets)}]
    # the reveal comes when the decisions close: after the deal, before the stub and result
    k = kinds(ev)
    assert k.index("deal_complete") < k.index("reveal") < k.index("stub") < k.index("round_result")
    exp = hands_from(order, targets)
    # what the engine got
    obj = fake_engine.CALLS[-1]
    assert obj["dealer"] == exp["dealer"]
    assert {k: v["cards"] for k, v in obj["seats"].items()} == {str(s): exp[str(s)] for s in seats}
    res = of(ev, "round_result")
    assert len(res) == 1 and res[0]["round"] == 1 and res[0]["deck"] == "%04X" % SER
    assert not of(ev, "round_void")
    st = of(ev, "stub")[0]
    assert st["ok"] and st["counts"]["total"] == 52
    assert kinds(ev).index("stub") < kinds(ev).index("round_result")
    assert [p["phase"] for p in of(ev, "phase")] == ["dealing", "decisions", "stub", "open_round"]


@pytest.mark.clause("rules:1.4-card-count")
@pytest.mark.parametrize("game", (FCF, HCF))
def test_card_counts_per_round(game):
    for proc in PROCS:
        for n in range(1, 7):
            t = make(game, proc)
            a6 = (1,) if game == FCF else ()
            r = t.command(
                "open_round",
                {
                    "seats": {
                        str(s): {
                            "wagers": {"ante": 5, "odds": 5, "all_six": 1}
                            if game == FCF
                            else {"ante": 5}
                        }
                        for s in range(1, n + 1)
                    }
                },
                0,
            )
            k = 7 if game == HCF else 5
            extra = (5 if proc == "automated-shoe" else 1) if a6 else 0
            assert r["cards"] == k * (n + 1) + extra


@pytest.mark.clause("rules:1.1-two-decks", "rules:1.4-stub-count")
def test_stub_every_n_rounds_and_alternating_decks():
    t = make(FCF, "automated-shoe", stub_every=3, two_deck=True)
    seen_stub = []
    for r in range(8):
        serial, back = (SER, "R") if r % 2 == 0 else (0x0B0B, "B")
        ev = play(t, (1, 2), shuffled(100 + r), serial=serial, back=back, now=r)
        assert len(of(ev, "round_result")) == 1, ev
        assert of(ev, "round_open")[0]["deck"] == "%04X" % serial
        seen_stub.append(bool(of(ev, "stub")))
    # per deck: stub on every 3rd use (decks alternate: uses 1,2,3 of each deck)
    assert seen_stub == [False, False, False, False, True, True, False, False]


@pytest.mark.clause("684a.11(b)")
def test_decisions_can_come_seat_by_seat():
    t = make(FCF, "hand")
    order = shuffled(5)
    t.command(
        "open_round",
        {
            "seats": {
                "2": {"wagers": {"ante": 5, "odds": 5}},
                "4": {"wagers": {"ante": 5, "odds": 5}},
            }
        },
        0,
    )
    for c in order[:15]:
        t.card(SER, "R", c, 0)
    assert t.command("decisions", {"4": 0}, 0)["waiting"] == ["2"]
    assert t.current_phase() == "decisions"
    assert t.command("decisions", {"2": 5}, 0)["waiting"] == []
    assert t.current_phase() == "stub"
    run_pass(t, SER, "R", order[15:])
    ev = t.pop_events()
    assert of(ev, "round_result")[0]["seats"]["2"]["raise"] == 5


@pytest.mark.parametrize("game,proc,seats,a6", CASES)
def test_results_equal_the_real_engine(game, proc, seats, a6):
    from shoe.games import engine

    t = make(game, proc, engine=engine)
    a6 = a6 if game == FCF else ()
    order = shuffled(7 + len(seats))
    targets = expected_targets(game, proc, seats, bool(a6))
    exp = hands_from(order, targets)
    raises = {str(s): 10 for s in seats}  # 1x Ante is always allowed
    ev = play(t, seats, order, raises=raises, a6_seats=a6)
    res = of(ev, "round_result")
    assert len(res) == 1, kinds(ev)
    res = res[0]
    obj = {
        "game": game,
        "paytable": "fcf-public-1" if game == FCF else "hcf-public-1",
        "rules": {},
        "dealer": exp["dealer"],
        "seats": {
            str(s): {
                "cards": exp[str(s)],
                "wagers": dict(
                    {"ante": 10},
                    **({"odds": 10} if game == FCF else {}),
                    **({"all_six": 5} if s in a6 else {}),
                ),
                "raise": 10,
            }
            for s in seats
        },
    }
    if game == FCF:
        obj["all_six_card"] = exp["all_six"][0] if a6 else None
    want = engine.evaluate_round(json.loads(json.dumps(obj)))
    want["round"], want["deck"] = 1, "%04X" % SER
    assert res == want


@pytest.mark.clause("684a.11(b)(1)", "rules:1.5-refused")
def test_real_engine_refuses_a_bad_raise_naming_seat_hand_and_amounts():
    from shoe.games import engine
    from shoe.table import CommandError

    t = make(FCF, "manual-shoe", engine=engine)
    t.command("open_round", {"seats": {"3": {"wagers": {"ante": 10, "odds": 10}}}}, 0)
    for c in shuffled(11)[:10]:
        t.card(SER, "R", c, 0)
    before = t.state()
    with pytest.raises(CommandError) as e:
        t.command("decisions", {"3": 25}, 0)
    assert "seat 3" in str(e.value) and "allowed" in str(e.value)
    assert e.value.reason == "invalid_raise"
    assert t.state() == before


def _cards_named(text, ids):
    return [name(c) for c in ids if name(c) in text]


@pytest.mark.parametrize(
    "game,seed,amount,hand,allowed",
    [
        (FCF, 11, 25, "below a pair of aces", "allowed 10 or 0"),
        (HCF, 3, 20, "a flush of 2 to 4 cards", "allowed 10 or 0"),
    ],
)
def test_a_refused_raise_names_the_hand_class_never_the_cards(game, seed, amount, hand, allowed):
    """rules.md 1.5: the error names the seat, the hand and the allowed amounts. The round is
    open and the seat's cards are face down (the error goes to the table system, its log, the
    floor): the project reads "the hand" as the class of hand the rule depends on, which says
    no more than the allowed amounts do; never the cards (docs/round-lifecycle.md)."""
    from shoe.games import engine

    t = make(game, "manual-shoe", engine=engine)
    t.command(
        "open_round",
        {"seats": {"3": {"wagers": {"ante": 10, "odds": 10} if game == FCF else {"ante": 10}}}},
        0,
    )
    order = shuffled(seed)
    for c in order[: t.tracker.total]:
        t.card(SER, "R", c, 0)
    seat = t.tracker.hand(3)
    with pytest.raises(CommandError) as e:
        t.command("decisions", {"3": amount}, 0)
    msg = str(e.value)
    assert e.value.reason == "invalid_raise"
    assert "seat 3" in msg and hand in msg and allowed in msg, msg
    assert _cards_named(msg, order[: t.tracker.total]) == [], msg
    # the engine's own message (shoectl eval: every card known) names the seat's hand
    with pytest.raises(ValueError) as e2:
        engine.check_raise(game, "3", [name(c) for c in seat], 10, amount)
    assert _cards_named(str(e2.value), seat), str(e2.value)


def test_a_refused_raise_with_a_pair_of_aces_names_the_class_and_the_three_amounts():
    from shoe.cards import parse
    from shoe.games import engine

    t = make(FCF, "manual-shoe", engine=engine)
    t.command("open_round", {"seats": {"1": {"wagers": {"ante": 10, "odds": 10}}}}, 0)
    # seat 1 gets As Ah 7c 4d 2h; the dealer the rest
    for c in "As Kd Ah Qd 7c Jd 4d 9d 2h 8s".split():
        t.card(SER, "R", parse(c), 0)
    with pytest.raises(CommandError) as e:
        t.command("decisions", {"1": 40}, 0)
    msg = str(e.value)
    assert "a pair of aces or better" in msg and "allowed 10, 20, 30 or 0" in msg, msg
    assert not any(c in msg for c in "As Ah 7c 4d 2h".split()), msg
