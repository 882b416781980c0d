"""The demo's table: its players and the script they play (what `shoectl demo` deals).

script = demo_script(rounds=6, seed=7, faults=0.1)   # a session script (interfaces.md 5)
runner.strategy = strategy                            # the players' raise decisions
"""

import random

from shoe import cards
from shoe.games import engine
from shoe.games.vocab import FCF

FAULT_KINDS = ("foreign", "forged", "duplicate", "extra-card", "no-read-x3", "other-back")


def strategy(rnd, hands, seats):
    """A simple player: 3x with a pair of aces or better, 1x with any pair, else fold. `hands`
    are the cards on the table (the runner's layout of what the dealer placed where), each
    player looking at their own: the shoe names no card before the decisions close."""
    out = {}
    for seat, spec in seats.items():
        ante = spec["wagers"]["ante"]
        hand = hands.get(seat) or hands.get(int(seat)) or []
        try:
            engine.check_raise(FCF, int(seat), hand, ante, 3 * ante)
            out[seat] = 3 * ante
            continue
        except ValueError:
            pass
        ranks = [cards.rank(cards.parse(c)) for c in hand]
        out[seat] = ante if len(set(ranks)) < len(ranks) else 0
    return out


def _wagers(rng):
    ante = rng.choice((5, 10, 25))
    w = {"ante": ante, "odds": ante}
    for k in ("prime", "four_card_bonus", "all_six"):
        if rng.random() < 0.5:
            w[k] = rng.choice((5, 10))
    return w


def demo_script(rounds, seed, faults):
    """Six seats of random wagers per round; about `faults` of the rounds (at least one of three
    or more) get one injected fault."""
    rng = random.Random(seed)
    n = rounds
    rounds = []
    faulty = 0
    for i in range(n):
        seats = {str(s): {"wagers": _wagers(rng)} for s in range(1, 7)}
        injected = []
        if faults > 0 and (rng.random() < faults or (i == n - 1 and faulty == 0 and n >= 3)):
            faulty += 1
            kind = rng.choice(FAULT_KINDS)
            at = rng.randrange(1, 30)
            if kind == "extra-card":
                injected.append({"kind": kind})
            elif kind == "no-read-x3":
                injected.append({"kind": "no-read", "at": at, "times": 3})
            else:
                injected.append({"kind": kind, "at": at})
        rounds.append({"seats": seats, "faults": injected})
    return {
        "game": FCF,
        "procedure": "manual-shoe",
        "paytable": "fcf-public-1",
        "rules": {"ties": "player", "raise_when_dealer_not_open": "compare"},
        "seed": seed,
        "rounds": rounds,
    }
