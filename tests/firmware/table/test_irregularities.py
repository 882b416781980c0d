"""Every irregularity of rules.md 3 at several positions: the round is void with the right
reason before any settlement (the engine is never asked), the right deck action follows, and
after the supervisor steps the phases ask for, the next clean round settles normally."""

import pytest

from tests.firmware.table import fake_engine
from tests.firmware.table.helpers import (
    FCF,
    HCF,
    SER,
    SER2,
    kinds,
    make,
    of,
    run_pass,
    seats_body,
    shuffled,
)

PROCS = ("manual-shoe", "hand", "automated-shoe")


def recover(t, now=100, serial=0x5000):
    """Follow the phase the table reports until it can open a round (docs/round-lifecycle.md)."""
    for _ in range(10):
        p = t.current_phase()
        if p == "open_round":
            return
        if p == "blocked":
            t.command("ack", {"all": True}, now, "supervisor")
        elif p == "load_deck":
            lg = t.ledger
            backs = [lg.deck(s)[1] for s in (0, 1) if lg.deck(s) and lg.status(s) != 3]
            back = "B" if "R" in backs else "R"
            serial += 1
            t.command("load_deck", {"serial": serial, "back": back}, now)
        elif p == "deck_check":
            d = t.ledger.deck(t.ledger.p_slot)
            run_pass(t, d[0], d[1], shuffled(serial), now)
        else:
            raise AssertionError("unexpected phase %s" % p)
    raise AssertionError("no recovery")


def start(game=FCF, proc="manual-shoe", seats=(1, 3), **cfg):
    t = make(game, proc, **cfg)
    order = shuffled(42)
    t.command("open_round", seats_body(game, seats), 1)
    return t, order


def deal(t, order, n, serial=SER, back="R"):
    for c in order[:n]:
        t.card(serial, back, c, 1)


def check_void(t, reason, calls_before, action):
    ev = t.pop_events()
    voids = of(ev, "round_void")
    assert len(voids) == 1 and voids[0]["reason"] == reason, ev
    assert not of(ev, "round_result")
    assert len(fake_engine.CALLS) == calls_before  # never settled
    irq = of(ev, "irregularity")[-1]
    assert irq["reason"] == reason and irq["latched"] and irq["action"] == action
    assert irq["round"] == voids[0]["round"]
    assert t.rnd is None
    assert any(i["id"] == irq["id"] for i in t.latched)
    return ev


def settles_next(t, game=FCF, seats=(1, 3)):
    recover(t)
    t.pop_events()
    order = shuffled(77)
    lg = t.ledger
    d = lg.deck(lg.next)
    t.command("open_round", seats_body(game, seats), 200)
    n = t.tracker.total
    deal(t, order, n, d[0], d[1])
    t.command("decisions", {str(s): 0 for s in seats}, 200)
    if t.current_phase() == "stub":
        run_pass(t, d[0], d[1], order[n:], 200)
    ev = t.pop_events()
    assert len(of(ev, "round_result")) == 1, ev
    assert not of(ev, "round_void")


def engine_calls():
    return len(fake_engine.CALLS)


@pytest.mark.clause("rules:3-never-settle", "rules:3-card-foreign")
@pytest.mark.parametrize("proc", PROCS)
@pytest.mark.parametrize("pos", (0, 1, 7, 14))
def test_foreign_card(proc, pos):
    t, order = start(proc=proc)
    c0 = engine_calls()
    deal(t, order, pos)
    t.card(0x1234, "R", order[pos], 1)
    check_void(t, "card_foreign", c0, "void_quarantine")
    assert engine_calls() == c0
    assert t.current_phase() == "blocked"
    assert t.ledger.status(0) == 3  # out
    settles_next(t)


@pytest.mark.clause("rules:3-card-forged")
@pytest.mark.parametrize("pos", (0, 5, 14))
def test_forged_card(pos):
    t, order = start()
    c0 = engine_calls()
    deal(t, order, pos)
    t.reject("code_mac", 1)
    check_void(t, "card_forged", c0, "void_quarantine")
    assert engine_calls() == c0
    settles_next(t)


@pytest.mark.clause("rules:3-card-other-back")
@pytest.mark.parametrize("pos", (0, 4, 9))
def test_other_back_card_in_two_deck_mode(pos):
    t, order = start(two_deck=True)
    c0 = engine_calls()
    deal(t, order, pos)
    t.card(SER2, "B", order[pos], 1)
    check_void(t, "card_other_back", c0, "void_quarantine")
    assert t.ledger.status(0) == 3 and t.ledger.status(1) == 3  # both decks out
    settles_next(t)


@pytest.mark.clause("rules:3-duplicate")
@pytest.mark.parametrize("proc", PROCS)
@pytest.mark.parametrize("pos", (1, 6, 14))
def test_duplicate_card(proc, pos):
    t, order = start(proc=proc)
    c0 = engine_calls()
    deal(t, order, pos)
    t.card(SER, "R", order[pos - 1], 1)
    check_void(t, "card_duplicate", c0, "void_quarantine")
    assert engine_calls() == c0
    settles_next(t)


@pytest.mark.clause("rules:1.1-cover-last", "rules:3-cover-card")
@pytest.mark.parametrize("pos", (0, 3, 14))
def test_cover_card_during_a_deal(pos):
    t, order = start()
    c0 = engine_calls()
    deal(t, order, pos)
    t.card(SER, "R", 52, 1)
    check_void(t, "cover_card", c0, "void_recheck")
    assert t.current_phase() == "deck_check"  # reshuffle: run the whole deck again
    settles_next(t)


@pytest.mark.clause("rules:3-misdeal-too-many")
@pytest.mark.parametrize("proc", PROCS)
def test_too_many_cards(proc):
    t, order = start(proc=proc)
    c0 = engine_calls()
    deal(t, order, 16)  # 15 needed (2 seats + dealer)
    check_void(t, "misdeal_too_many", c0, "void_recheck")
    settles_next(t)


@pytest.mark.clause("rules:3-misdeal-too-many")
def test_unreadable_card_after_the_deal_is_too_many():
    t, order = start()
    c0 = engine_calls()
    deal(t, order, 15)
    t.reject("no_read", 1)
    check_void(t, "misdeal_too_many", c0, "void_recheck")


@pytest.mark.clause("rules:3-misdeal-too-few")
@pytest.mark.parametrize("pos", (0, 7, 14))
def test_round_closed_early_is_too_few(pos):
    t, order = start()
    c0 = engine_calls()
    deal(t, order, pos)
    t.command("close_round", {}, 1, "supervisor" if pos else "table")
    check_void(t, "misdeal_too_few", c0, "void_recheck")
    settles_next(t)


@pytest.mark.clause("rules:3-unreadable")
@pytest.mark.parametrize("pos", (0, 8, 14))
@pytest.mark.parametrize("represent", (0, 2))
def test_unreadable_card(pos, represent):
    t, order = start(represent_max=represent)
    c0 = engine_calls()
    deal(t, order, pos)
    for i in range(represent):
        t.reject("no_read" if i % 2 else "code_format", 1)
        ev = t.pop_events()
        assert of(ev, "unreadable")[0]["represent_left"] == represent - i
        assert t.rnd is not None
    t.reject("no_read", 1)
    check_void(t, "misdeal_unreadable", c0, "void_recheck")
    settles_next(t)


@pytest.mark.clause("rules:3-unreadable")
def test_re_presented_card_is_accepted():
    t, order = start(represent_max=2)
    deal(t, order, 3)
    t.reject("no_read", 1)
    t.reject("no_read", 1)
    deal(t, order[3:], 12)
    t.command("decisions", {"1": 0, "3": 0}, 1)
    run_pass(t, SER, "R", order[15:], 1)
    ev = t.pop_events()
    assert len(of(ev, "round_result")) == 1


def _to_stub(t, order):
    deal(t, order, 15)
    t.command("decisions", {"1": 0, "3": 0}, 1)
    assert t.current_phase() == "stub"


@pytest.mark.clause("rules:3-stub-misdealt")
def test_stub_misdealt_all_cards_present():
    t, order = start()
    c0 = engine_calls()
    _to_stub(t, order)
    run_pass(t, SER, "R", order[15:30] + [order[2]] + order[30:])  # a dealt card read again
    ev = check_void(t, "stub_misdealt", c0, "void_recheck")
    st = of(ev, "stub")[0]
    assert not st["ok"] and st["counts"]["total"] == 53 and st["missing"] == []
    assert engine_calls() == c0
    assert t.current_phase() == "deck_check"
    settles_next(t)


@pytest.mark.clause("rules:1.1-cover-last", "rules:3-never-settle", "rules:3-stub-deck-wrong")
@pytest.mark.parametrize("fault", ("missing", "foreign", "forged", "no_cover", "unreadable"))
def test_stub_deck_wrong(fault):
    t, order = start()
    c0 = engine_calls()
    _to_stub(t, order)
    stub = order[15:]
    if fault == "missing":
        run_pass(t, SER, "R", stub[:-1])
    elif fault == "foreign":
        run_pass(t, SER, "R", stub[:5] + stub[6:], cover=False)
        t.card(0x7777, "R", stub[5], 1)
        t.card(SER, "R", 52, 1)
    elif fault == "forged":
        run_pass(t, SER, "R", stub[:5] + stub[6:], cover=False)
        t.reject("code_mac", 1)
        t.card(SER, "R", 52, 1)
    elif fault == "unreadable":
        run_pass(t, SER, "R", stub[:5] + stub[6:], cover=False)
        t.reject("no_read", 1)
        t.card(SER, "R", 52, 1)
    else:
        run_pass(t, SER, "R", stub, cover=False)
        t.tick(1 + t.cfg["jam_timeout_s"] + 1)
    ev = check_void(t, "stub_deck_wrong", c0, "void_remove")
    assert not of(ev, "stub")[0]["ok"]
    assert engine_calls() == c0
    assert t.current_phase() == "blocked"
    settles_next(t)


@pytest.mark.clause("rules:3-unshuffled")
@pytest.mark.parametrize("proc", PROCS)
def test_new_deck_order_is_unshuffled(proc):
    t, order = start(proc=proc)
    c0 = engine_calls()
    order = list(range(52))  # 2c 2d 2h 2s 3c ...: rank order
    _to_stub(t, order)
    run_pass(t, SER, "R", order[15:])
    ev = check_void(t, "deck_unshuffled", c0, "void_recheck")
    w = of(ev, "warning")[0]
    assert w["warning"] == "unshuffled" and w["length"] == 52
    assert kinds(ev).index("warning") < kinds(ev).index("round_void")
    assert engine_calls() == c0
    settles_next(t)


@pytest.mark.clause("rules:3-unshuffled")
def test_suit_order_without_stub_is_unshuffled():
    t = make(FCF, "manual-shoe", stub_every=5)
    order = [s + 4 * r for s in range(4) for r in range(13)]  # 2c 3c 4c ... suit order
    t.command("open_round", seats_body(FCF, (1, 3)), 1)
    c0 = engine_calls()
    deal(t, order, 15)
    t.command("decisions", {"1": 0, "3": 0}, 1)
    check_void(t, "deck_unshuffled", c0, "void_recheck")


@pytest.mark.clause("rules:1.1-shuffle", "rules:3-unshuffled")
def test_repeated_deck_order_is_unshuffled():
    t, order = start()
    _to_stub(t, order)
    run_pass(t, SER, "R", order[15:])
    assert len(of(t.pop_events(), "round_result")) == 1
    c0 = engine_calls()
    cut = order[20:] + order[:20]  # the same order, cut
    t.command("open_round", seats_body(FCF, (1, 3)), 1)
    _to_stub(t, cut)
    run_pass(t, SER, "R", cut[15:])
    ev = check_void(t, "deck_unshuffled", c0, "void_recheck")
    assert of(ev, "warning")[0]["stat"] == "repeat"


@pytest.mark.clause("rules:1.1-deck-age", "rules:3-deck-expired")
def test_deck_expired_is_a_warning_and_the_round_settles():
    t = make(FCF, "manual-shoe", deck_age_shoe_s=100)
    t.tick(50)
    assert not t.pop_events()
    t.tick(101)
    ev = t.pop_events()
    assert of(ev, "warning")[0]["warning"] == "deck_expired"
    irq = of(ev, "irregularity")[0]
    assert irq["reason"] == "deck_expired" and irq["action"] == "warning" and not irq["blocks"]
    t.tick(500)
    assert not of(t.pop_events(), "irregularity")  # once per deck
    settles_next(t)


@pytest.mark.clause("rules:1.1-deck-age", "rules:3-deck-expired")
def test_hand_dealt_deck_age_limit_is_the_hand_one():
    t = make(FCF, "hand", deck_age_hand_s=10, deck_age_shoe_s=1000)
    t.tick(11)
    assert of(t.pop_events(), "warning")


@pytest.mark.clause("rules:3-jam")
def test_reader_jam_is_an_event_and_the_deal_goes_on():
    t, order = start(jam_timeout_s=5)
    deal(t, order, 4)
    t.pop_events()
    t.tick(3)
    assert not t.pop_events()
    t.tick(7)
    ev = t.pop_events()
    irq = of(ev, "irregularity")[0]
    assert irq["reason"] == "reader_jam" and irq["action"] == "event" and irq["round"] == 1
    t.tick(20)
    assert not t.pop_events()  # latched once per stall
    deal(t, order[4:], 11)
    t.command("decisions", {"1": 0, "3": 0}, 30)
    run_pass(t, SER, "R", order[15:], 30)
    assert len(of(t.pop_events(), "round_result")) == 1


@pytest.mark.clause("rules:1.1-cover-last", "rules:3-jam")
def test_deck_check_stall_fails_the_check():
    t = make(FCF, "manual-shoe", check=False, jam_timeout_s=5)
    t.command("load_deck", {"serial": SER, "back": "R"}, 0)
    run_pass(t, SER, "R", shuffled(1), 1, cover=False)
    t.tick(10)
    ev = t.pop_events()
    chk = of(ev, "deck_check")[0]
    assert not chk["ok"] and not chk["cover"]
    assert t.current_phase() == "load_deck"


@pytest.mark.clause("irr:card-out-of-round")
def test_card_out_of_round_latches_and_asks_for_a_recheck():
    t = make()
    t.card(SER, "R", 7, 1)
    ev = t.pop_events()
    assert of(ev, "irregularity")[0]["reason"] == "card_out_of_round"
    assert t.current_phase() == "deck_check"
    settles_next(t)


@pytest.mark.clause("irr:void-supervisor", "irr:power-loss")
@pytest.mark.parametrize("pos", (0, 9))
def test_supervisor_void_and_power_loss_void(pos):
    t, order = start()
    deal(t, order, pos)
    t.command("void_round", {"detail": "dealer dropped a card"}, 1, "supervisor")
    check_void(t, "void_supervisor", engine_calls(), "void_recheck")
    settles_next(t)
    t.command("open_round", seats_body(FCF, (2,)), 300)
    assert t.void_in_progress("power_loss", 301) is True
    ev = t.pop_events()
    assert of(ev, "round_void")[0]["reason"] == "power_loss"
    assert t.void_in_progress("power_loss", 302) is False


@pytest.mark.clause("irr:settle-error")
def test_settle_error_voids():
    t, order = start()
    t.cfg["paytable"] = "boom"  # the fake engine refuses this pay table
    c0 = engine_calls()
    _to_stub(t, order)
    run_pass(t, SER, "R", order[15:])
    check_void(t, "settle_error", c0 + 1, "void_recheck")  # the engine was asked, refused


@pytest.mark.clause("rules:3-never-settle")
@pytest.mark.parametrize(
    "game,proc,cfg",
    [
        (FCF, "automated-shoe", {}),
        (FCF, "hand", {"two_deck": True}),
        (HCF, "manual-shoe", {"stub_every": 3}),
        (HCF, "automated-shoe", {"two_deck": True, "stub_every": 2}),
    ],
)
def test_exactly_one_outcome_per_round_over_many_faults(game, proc, cfg):
    import random

    rng = random.Random(9)
    t = make(game, proc, represent_max=1, **cfg)
    opened = 0
    outcomes = 0
    for r in range(60):
        recover(t, now=r, serial=0x6000 + 10 * r)
        t.pop_events()
        order = shuffled(1000 + r)
        lg = t.ledger
        d = lg.deck(lg.next)
        t.command("open_round", seats_body(game, (1, 2, 6), a6_seats=(2,)), r)
        opened += 1
        n = t.tracker.total
        fault = rng.choice(["none", "foreign", "dup", "cover", "noread", "extra", "close"])
        at = rng.randrange(1, n)
        for i in range(n):
            if i == at and t.rnd is not None:
                if fault == "foreign":
                    t.card(0x999, d[1], order[i], r)
                elif fault == "dup":
                    t.card(d[0], d[1], order[0], r)
                elif fault == "cover":
                    t.card(d[0], d[1], 52, r)
                elif fault == "noread":
                    t.reject("no_read", r)
                    t.reject("no_read", r)
                elif fault == "close":
                    t.command("close_round", {}, r, "supervisor")
            if t.rnd is None:
                break
            t.card(d[0], d[1], order[i], r)
        if t.rnd is not None and fault == "extra":
            t.card(d[0], d[1], order[n], r)
        if t.rnd is not None:
            t.command("decisions", {"1": 0, "2": 0, "6": 0}, r)
            if t.current_phase() == "stub":
                run_pass(t, d[0], d[1], order[n:], r)
        ev = t.pop_events()
        outcomes += len(of(ev, "round_result")) + len(of(ev, "round_void"))
        assert t.rnd is None
        assert t.current_phase() in ("open_round", "deck_check", "blocked", "load_deck")
    assert outcomes == opened


def test_shuffle_check_can_be_switched_off_for_stacked_test_decks():
    t = make(FCF, "manual-shoe", shuffle_check=False)
    for _r in range(2):  # new-deck order, and the same order twice
        ev = play_round(t, list(range(52)))
        assert len(of(ev, "round_result")) == 1, ev


def play_round(t, order):
    t.command("open_round", seats_body(FCF, (1, 3)), 1)
    deal(t, order, 15)
    t.command("decisions", {"1": 0, "3": 0}, 1)
    run_pass(t, SER, "R", order[15:], 1)
    return t.pop_events()
