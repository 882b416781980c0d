"""The par sheets' cross-check: a seeded simulation that deals rounds and settles them with the
firmware's own engine (shoe.games.engine.evaluate_round, under CPython), so the exact figures
are checked against code that shares nothing with them (docs/par.md, "Simulation").

Each round deals six seats and the dealer from a freshly shuffled deck (random.Random(seed));
every seat bets one unit (10000 in the smallest currency unit, so that every fixed-point
payout is exact) on every wager the table offers, and raises as the exact strategy says. A
seat's (hand, dealer) pair has the distribution of a heads-up game, so the mean per seat is
the heads-up expectation; seats of one round share the dealer, so the standard error is taken
over rounds (each round's sum over its seats). The figures are the engine's per-wager payouts,
which it reports before any payout limit (the limit caps only a seat's net).
"""

import math
import random
import time

import numpy as np

from shoe.games import engine
from shoe.games.vocab import FCF, ONE, OPTIONAL

SEATS = 6
UNIT = ONE  # one unit of every wager: payouts of fixed-point odds are then exact
NAMES = [r + s for r in "23456789TJQKA" for s in "cdhs"]  # card id = rank * 4 + suit


class Tally:
    """Per-round sums of one quantity; mean per seat-hand and its standard error."""

    def __init__(self):
        self.n = 0
        self.s = 0.0
        self.ss = 0.0

    def add(self, x):
        self.n += 1
        self.s += x
        self.ss += x * x

    def mean(self, seats):
        return self.s / self.n / seats

    def se(self, seats):
        if self.n < 2:
            return float("nan")
        var = (self.ss - self.s * self.s / self.n) / (self.n - 1)
        return math.sqrt(max(var, 0.0) / self.n) / seats


def run(game, table, rules, decide, rounds, seed, seats=SEATS):
    """Deal and settle `rounds` rounds. decide(cards) -> raise multiples (0 = fold) for an
    int array of seat hands (shape (N, 5 or 7)). Returns {"rounds", "seats", "seed",
    "seconds", "wagers": {name: (mean per hand in units, standard error)},
    "raise_amount": (mean, se), "main": (mean, se), "dealer": fraction opening/qualifying}."""
    t0 = time.perf_counter()
    hand = 5 if game == FCF else 7
    offered = [w for w in OPTIONAL[game] if w in table.sections]
    six = game == FCF and "all_six" in offered
    need = hand * (seats + 1) + (1 if six else 0)
    rng = random.Random(seed)
    deals = np.array([rng.sample(range(52), need) for _ in range(rounds)], dtype=np.int64)
    mult = decide(deals[:, : hand * seats].reshape(rounds * seats, hand)).reshape(rounds, seats)
    main = ("ante", "odds", "raise") if game == FCF else ("ante", "raise")
    names = list(main) + offered
    tallies = {w: Tally() for w in names + ["main", "raise_amount"]}
    dealer_yes = 0
    wagers = {"ante": UNIT}
    if game == FCF:
        wagers["odds"] = UNIT
    for w in offered:
        wagers[w] = UNIT
    for r in range(rounds):
        row = deals[r].tolist()
        seat_in = {}
        for k in range(seats):
            seat_in[str(k + 1)] = {
                "cards": [NAMES[c] for c in row[hand * k : hand * (k + 1)]],
                "wagers": wagers,
                "raise": int(mult[r, k]) * UNIT,
            }
        obj = {
            "game": game,
            "paytable": table,
            "rules": rules,
            "dealer": [NAMES[c] for c in row[hand * seats : hand * (seats + 1)]],
            "seats": seat_in,
        }
        if game == FCF:
            obj["all_six_card"] = NAMES[row[-1]] if six else None
        res = engine.evaluate_round(obj)
        d = res["dealer"]
        dealer_yes += 1 if d.get("opens", d.get("qualifies")) else 0
        sums = dict.fromkeys(names, 0)
        for seat in res["seats"].values():
            for w, e in seat["wagers"].items():
                sums[w] += e["payout"]
        for w in names:
            tallies[w].add(sums[w] / UNIT)
        tallies["main"].add(sum(sums[w] for w in main) / UNIT)
        tallies["raise_amount"].add(float(mult[r].sum()))
    out = {
        "rounds": rounds,
        "seats": seats,
        "hands": rounds * seats,
        "seed": seed,
        "engine": "shoe.games.engine.evaluate_round (CPython)",
        "wagers": {w: (tallies[w].mean(seats), tallies[w].se(seats)) for w in names},
        "main": (tallies["main"].mean(seats), tallies["main"].se(seats)),
        "raise_amount": (tallies["raise_amount"].mean(seats), tallies["raise_amount"].se(seats)),
        "dealer": dealer_yes / rounds if rounds else float("nan"),
    }
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out
