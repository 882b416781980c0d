"""MicroPython: many rounds in one table; prints the heap in use after each round (gc'd)."""

import gc
import json
import random
import sys

from shoe.table import Table
from shoe.dealing import setup  # noqa: F401 (the table imports it at its first configure: code,

#                                 not the table's data, which is what this measures)
if sys.argv[-1] == "real":
    from shoe.games import engine
else:
    import fake_engine as engine

ROUNDS = int(sys.argv[-2])
random.seed(20261201)  # explicit: the same shuffles on every run
S = 0x3A7F
seats = {
    "seats": {
        "1": {"wagers": {"ante": 10, "odds": 10, "all_six": 5}},
        "2": {"wagers": {"ante": 10, "odds": 10}},
        "3": {"wagers": {"ante": 10, "odds": 10, "prime": 5}},
        "4": {"wagers": {"ante": 10, "odds": 10}},
        "5": {"wagers": {"ante": 10, "odds": 10, "four_card_bonus": 5}},
        "6": {"wagers": {"ante": 10, "odds": 10}},
    }
}
deck = bytearray(range(52))
gc.collect()
before = gc.mem_free()
t = Table(engine=engine)
t.command(
    "configure", {"game": "four-card-frenzy", "procedure": "automated-shoe"}, 0, "supervisor"
)
t.command("load_deck", {"serial": S, "back": "R"}, 0)
for c in range(53):
    t.card(S, "R", c, 0)
t.pop_events()
used = [0] * ROUNDS  # preallocated: the measurement must not grow
outcomes = 0
for r in range(ROUNDS):
    for i in range(51, 0, -1):
        j = random.getrandbits(16) % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    t.command("open_round", seats, r)
    n = t.tracker.total
    for i in range(n):
        t.card(S, "R", deck[i], r)
    t.command("decisions", {"1": 10, "2": 0, "3": 10, "4": 0, "5": 10, "6": 0}, r)
    for i in range(n, 52):
        t.card(S, "R", deck[i], r)
    t.card(S, "R", 52, r)
    for k, _b in t.pop_events():
        if k == "round_result" or k == "round_void":
            outcomes += 1
        if k == "round_void":  # (an unlikely unshuffled flag): recheck and go on
            for c in range(53):
                t.card(S, "R", c, r)
    if hasattr(engine, "CALLS"):
        engine.CALLS[:] = []
    gc.collect()
    used[r] = before - gc.mem_free()
print(json.dumps({"used": used, "outcomes": outcomes, "state_bytes": len(json.dumps(t.state()))}))
