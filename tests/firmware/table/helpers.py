"""Shared helpers for the deck/dealing/table tests: a table with a checked deck, passes, deals."""

import hashlib
import json
import random

from shoe.table import Table
from tests.firmware.table import fake_engine

SER = 0x3A7F
SER2 = 0x0B0B
FCF = "four-card-frenzy"
HCF = "high-card-flush"


def expected_targets(game, procedure, seats, a6):
    """The dealing order of rules.md 1.4 / 2.2, written out independently of the tracker."""
    k = 7 if game == HCF else 5
    hands = [str(s) for s in sorted(seats)] + ["dealer"]
    out = []
    if procedure == "automated-shoe":
        for h in hands:
            out += [h] * k
        if a6 and game == FCF:
            out += ["all_six"] + ["discard"] * 4
    else:
        if a6 and game == FCF:
            out.append("all_six")
        for _ in range(k):
            out += hands
    return out


def secrets(n):
    """Deterministic round secrets (f(round) -> 16 bytes), so that two runs (two runtimes, a
    table and one resumed from its snapshot) emit the same commitments; the shoe uses
    os.urandom."""
    return hashlib.sha256(("test round %d" % n).encode()).digest()[:16]


def jsonable(x):
    """An event or state as JSON holds it: bytes (a commitment, a revealed secret) as hex."""
    return json.loads(json.dumps(x, default=lambda b: bytes(b).hex()))


def revealed(events, rnd=None):
    """The cards the round's `reveal` event names, in dealing order (checked against every
    card event's commitment first)."""
    from shoe.commitment import commit

    rev = [b for k, b in events if k == "reveal" and (rnd is None or b["round"] == rnd)]
    assert len(rev) == 1, rev
    rev = rev[0]
    cards = [b for k, b in events if k == "card" and b["round"] == rev["round"]]
    assert len(cards) == len(rev["cards"])
    for c in cards:
        assert "card" not in c
        assert c["commit"] == commit(
            rev["secret"], rev["round"], c["position"], c["target"], rev["cards"][c["position"]]
        )
    return rev["cards"]


def shuffled(seed, n=52):
    d = list(range(52))
    random.Random(seed).shuffle(d)
    return d[:n]


def make(
    game=FCF,
    procedure="manual-shoe",
    engine=fake_engine,
    check=True,
    now=0,
    secret_source=secrets,
    **cfg,
):
    body = {"game": game, "procedure": procedure}
    body.update(cfg)
    t = Table(engine=engine, secrets=secret_source)
    t.command("configure", body, now, "supervisor")  # the supervisor sets the table up
    if check:
        load(t, SER, "R", now)
        if cfg.get("two_deck"):
            load(t, SER2, "B", now)
    t.pop_events()
    return t


def load(t, serial, back, now=0):
    t.command("load_deck", {"serial": serial, "back": back}, now)
    run_pass(t, serial, back, shuffled(serial), now)


def run_pass(t, serial, back, ids, now=0, cover=True):
    for c in ids:
        t.card(serial, back, c, now)
    if cover:
        t.card(serial, back, 52, now)


def kinds(events):
    return [k for k, _ in events]


def of(events, kind):
    return [b for k, b in events if k == kind]


def wagers(game, a6=False, ante=10):
    if game == HCF:
        return {"ante": ante}
    w = {"ante": ante, "odds": ante}
    if a6:
        w["all_six"] = 5
    return w


def seats_body(game, seats, a6_seats=()):
    return {"seats": {str(s): {"wagers": wagers(game, s in a6_seats)} for s in seats}}


def play(t, seats, order, raises=None, serial=SER, back="R", a6_seats=(), now=10, stub=True):
    """Open, deal from `order` (shoe order, top first), decide, run the stub. -> events."""
    game = t.cfg["game"]
    t.command("open_round", seats_body(game, seats, a6_seats), now)
    n = t.tracker.total
    for c in order[:n]:
        t.card(serial, back, c, now)
    if t.rnd is not None and t.rnd.stage == "decisions":
        if raises is None:
            raises = {str(s): 0 for s in seats}
        t.command("decisions", raises, now)
    if stub and t.rnd is not None and t.rnd.stage == "stub":
        run_pass(t, serial, back, order[n:], now)
    return t.pop_events()


def snap(t):
    return json.dumps(t.state(), sort_keys=True, default=lambda b: bytes(b).hex())
