"""Checks of the table with the real engine, run under MicroPython (tests.mpy.run_checks) and
imported by test_no_more_bets.py to run the same checks in CPython.

- wagers_fixed(game): after open_round ("no more bets") no wager can be placed, increased,
  withdrawn or added at another seat; the only later input is each seat's Raise, once; the
  round settles exactly the opening wagers (684a.7(c), 678a.7(c)).
- deck_age_defaults(): without deck_age_* in the configuration, a deck is flagged after 8 h in
  a shoe and 4 h by hand (684a.3(c)), not before.
"""

import json

from shoe.errors import CommandError
from shoe.table import Table

SER = 0x3A7F
# a fixed shuffle (random.Random(684) in CPython): unremarkable for the unshuffled detector
ORDER = [
    20,
    22,
    31,
    2,
    47,
    23,
    43,
    14,
    18,
    15,
    37,
    32,
    17,
    3,
    46,
    36,
    26,
    4,
    1,
    10,
    7,
    11,
    29,
    21,
    25,
    35,
    8,
    5,
    51,
    0,
    39,
    6,
    48,
    49,
    50,
    9,
    44,
    19,
    13,
    12,
    30,
    40,
    45,
    41,
    16,
    28,
    34,
    33,
    27,
    38,
    42,
    24,
]
WAGERS = {
    "four-card-frenzy": ({"ante": 10, "odds": 10, "prime": 5}, {"ante": 5, "odds": 5}),
    "high-card-flush": ({"ante": 10, "flush_bonus": 5}, {"ante": 5}),
}


def _table(game, procedure="manual-shoe"):
    from shoe import roles
    from shoe.games import engine

    t = Table(engine=engine)
    t.command("configure_supervised", {"game": game, "procedure": procedure}, 0, roles.SUPERVISOR)
    t.command("load_deck", {"serial": SER, "back": "R"}, 0)
    for c in ORDER:
        t.card(SER, "R", c, 0)
    t.card(SER, "R", 52, 0)
    t.pop_events()
    return t


def _hexed(x):
    """The state for JSON on either runtime: the round's secret (bytes) as hex."""
    if isinstance(x, (bytes, bytearray)):
        return "".join("%02x" % b for b in x)
    if isinstance(x, dict):
        return dict((k, _hexed(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return [_hexed(v) for v in x]
    return x


def _refused(t, kind, body, reason):
    before = json.dumps(_hexed(t.state()))
    try:
        t.command(kind, body, 1)
    except CommandError as e:
        if e.reason != reason:
            raise AssertionError("%s %r: %s, expected %s" % (kind, body, e.reason, reason)) from e
        if json.dumps(_hexed(t.state())) != before:
            raise AssertionError("%s %r was refused but changed the state" % (kind, body)) from e
        return
    raise AssertionError("%s %r was accepted after no more bets" % (kind, body))


def wagers_fixed(game):
    t = _table(game)
    w1, w3 = WAGERS[game]
    t.command("open_round", {"seats": {"1": {"wagers": w1}, "3": {"wagers": w3}}}, 1)
    more = dict(w1)
    more["ante"] = 50
    if "odds" in more:
        more["odds"] = 50
    # while dealing: no new round (other or larger wagers), no reconfiguration, no new deck
    _refused(
        t, "open_round", {"seats": {"1": {"wagers": more}, "3": {"wagers": w3}}}, "round_open"
    )
    _refused(
        t,
        "open_round",
        {"seats": {"1": {"wagers": w1}, "2": {"wagers": w3}, "3": {"wagers": w3}}},
        "round_open",
    )
    _refused(t, "configure", {"game": game, "procedure": "manual-shoe"}, "round_open")
    _refused(t, "load_deck", {"serial": 0x1111, "back": "R"}, "round_open")
    _refused(t, "decisions", {"1": 10}, "out_of_sequence")
    n = t.tracker.total
    for c in ORDER[:n]:
        t.card(SER, "R", c, 1)
    # decisions carry a Raise only: no wager object, no seat that placed no wager, once
    _refused(t, "decisions", {"1": more}, "bad_raise")
    _refused(t, "decisions", {"2": 5}, "bad_seat")
    t.command("decisions", {"1": 10}, 1)
    _refused(t, "decisions", {"1": 20}, "decision_repeat")
    _refused(t, "decisions", {"1": 0}, "decision_repeat")
    t.command("decisions", {"3": 0}, 1)
    for c in ORDER[n:]:
        t.card(SER, "R", c, 1)
    t.card(SER, "R", 52, 1)
    res = [b for k, b in t.pop_events() if k == "round_result"]
    if len(res) != 1:
        raise AssertionError("no round result")
    seats = res[0]["seats"]
    if sorted(seats) != ["1", "3"]:
        raise AssertionError("seats %r" % sorted(seats))
    for key, want in (("1", w1), ("3", w3)):
        got = {k: e["amount"] for k, e in seats[key]["wagers"].items() if k != "raise"}
        if got != want:
            raise AssertionError("seat %s settled %r, opened with %r" % (key, got, want))
    if seats["1"]["wagers"]["raise"]["amount"] != 10 or seats["3"]["wagers"]["raise"]["amount"]:
        raise AssertionError("raises %r" % ({k: s["wagers"]["raise"] for k, s in seats.items()},))
    print(json.dumps({"check": "wagers_fixed_" + game[:3], "cards": n}))


def check_fcf_wagers_fixed():
    wagers_fixed("four-card-frenzy")


def check_hcf_wagers_fixed():
    wagers_fixed("high-card-flush")


def check_deck_age_defaults():
    for procedure, limit in (
        ("manual-shoe", 8 * 3600),
        ("automated-shoe", 8 * 3600),
        ("hand", 4 * 3600),
    ):
        t = _table("four-card-frenzy", procedure)
        if t.cfg["deck_age_hand_s"] != 4 * 3600 or t.cfg["deck_age_shoe_s"] != 8 * 3600:
            raise AssertionError("default limits %r" % (t.cfg,))
        t.tick(limit)
        if [b for k, b in t.pop_events() if k == "warning"]:
            raise AssertionError("%s: warned at exactly %d s" % (procedure, limit))
        t.tick(limit + 1)
        w = [b for k, b in t.pop_events() if k == "warning"]
        if len(w) != 1 or w[0]["warning"] != "deck_expired" or w[0]["limit_s"] != limit:
            raise AssertionError("%s: %r after %d s" % (procedure, w, limit + 1))
    print(json.dumps({"check": "deck_age_defaults"}))


CHECKS = [check_fcf_wagers_fixed, check_hcf_wagers_fixed, check_deck_age_defaults]

if __name__ == "__main__":
    from mpycheck import run

    run(CHECKS)
