"""Lightweight simulated shoes: real signed, hash-chained event streams for hundreds of tables.

Each SimShoe runs the firmware's own shoe end of the link under CPython (shoe.link.endpoint
ShoeEndpoint with host_tools.sim.memstore.MemoryStore: every event sealed with the shoe key by
shoe.link.message, chained, kept in the outbox until the host acknowledges it, re-sent after a
reconnection) and the firmware's own engine (shoe.games.engine, packed by shoe.games.packing
exactly as the app sends a result), and keeps the cards secret as a shoe does: each card leaves
as its commitment under a fresh round secret (shoe.commitment.commit), and the round's
`reveal` precedes its result (docs/protocol.md, Secrecy). What it does not run is the card
reader and the table: the rounds are drawn from a seeded deck, so a floor of 500 fits on one
machine. For a whole shoe use the virtual board (host_tools/sim/simboard.py) — the gateway
takes either.

    shoe = SimShoe("T001", keys, seed=1)
    link = ShoeLink("sim://T001", keys["shoe"], audit=store, open_port=shoe.open_port,
                    read_timeout=0.2)
    shoe.step(now)        # emit the next event of its current round (phase, round_open, cards,
                          # deal_complete, reveal, round_result ...); returns (kind, eseq)

SimShoe(..., driven=True): a table system runs the rounds, as on a floor: `open_round` {"seats":
{"1": {"wagers": {"ante": 10, ...}}}} (reply {round, cards}; phase and round_open at once, then
one card per step(): the dealer's pace, deal_complete last), then `decisions` {"1": raise, ...}
(0 folds; reply {round}; the reveal, settling, round_result and idle at once). Bad or
out-of-turn commands get an error reply (malformed, round_open, not_dealt, raise_value).
"""

import os
import random
import threading
import time

from host_tools import events as E
from host_tools.sim.memstore import MemoryStore
from shoe.commitment import commit
from shoe.games import engine, packing
from shoe.games.vocab import FCF
from shoe.link.endpoint import Endpoint
from shoe.link.message import LinkError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = [r + s for r in RANKS for s in SUITS]


def make_keys(seed=None):
    rnd = random.Random(seed) if seed is not None else None
    gen = (
        (lambda: bytes(rnd.getrandbits(8) for _ in range(32))) if rnd else (lambda: os.urandom(32))
    )
    return {"shoe": gen(), "supervisor": gen(), "card": gen()}


def _now_ms():
    return int(time.monotonic() * 1000)


class SimPort:
    """A pyserial-shaped port whose other end is the SimShoe's endpoint (in memory)."""

    def __init__(self, shoe, timeout):
        self.shoe = shoe
        self.timeout = timeout
        self.is_open = True
        shoe._attach(self)

    @property
    def in_waiting(self):
        return len(self.shoe._rx)

    def read(self, n=1):
        sh = self.shoe
        deadline = time.monotonic() + (self.timeout or 0)
        with sh._cond:
            while True:
                if not self.is_open or sh._port is not self:
                    raise OSError("cable pulled")
                sh._pump_locked()
                if sh._rx:
                    out = bytes(sh._rx[:n])
                    del sh._rx[:n]
                    return out
                left = deadline - time.monotonic()
                if left <= 0:
                    return b""
                sh._cond.wait(min(left, 0.25))

    def write(self, data):
        sh = self.shoe
        with sh._cond:
            if not self.is_open or sh._port is not self:
                raise OSError("cable pulled")
            for kind, body, ctr, _ in sh.ep.receive(bytes(data), _now_ms()):
                sh._command(kind, body, ctr)
            sh._pump_locked()
        return len(data)

    def flush(self):
        pass

    def close(self):
        self.is_open = False


class SimShoe:
    def __init__(self, shoe_id, keys, seed=0, game=FCF, seats=(1, 6), driven=False):
        self.shoe_id = shoe_id
        self.keys = keys
        self.store = MemoryStore(limit=100000)
        self.ep = Endpoint(
            "shoe",
            keys["shoe"],
            store=self.store,
            shoe_id=shoe_id,
            supervisor_key=keys.get("supervisor"),
        )
        self.rng = random.Random(seed)
        self.game = game
        self.seats = seats
        self.n_round = 0
        self._plan = []
        self._rx = bytearray()
        self._cond = threading.Condition()
        self._port = None
        self.sent = []  # (eseq, kind, emitted at time.time()) for the bench
        self.driven = driven  # rounds opened and decided by a table system (commands)
        self._open = None  # driven: the open round's cards and secret until settled

    # ---- transport --------------------------------------------------------------------------
    def open_port(self, url=None, timeout=0.2):
        return SimPort(self, timeout)

    def _attach(self, port):
        with self._cond:
            self._port = port
            self._rx = bytearray()
            self._cond.notify_all()

    def _pump_locked(self):
        out = self.ep.transmit(_now_ms())
        if out:
            self._rx += out
            self._cond.notify_all()

    def _command(self, kind, body, ctr):
        if kind == "status":
            self.ep.reply(
                ctr,
                {
                    "shoe_id": self.shoe_id,
                    "round": self.n_round,
                    "eseq": self.store.eseq,
                    "sim": True,
                },
            )
        elif self.driven and kind == "open_round":
            self._open_round(body, ctr)
        elif self.driven and kind == "decisions":
            self._decide(body, ctr)
        else:
            self.ep.error(ctr, "unknown")

    # ---- the table --------------------------------------------------------------------------
    def _round(self):
        """The events of one round, drawn from a shuffled deck and settled by the engine."""
        self.n_round += 1
        seats = sorted(self.rng.sample(range(1, 7), self.rng.randint(*self.seats)))
        wagers = {}
        for s in seats:
            a = self.rng.choice((5, 10, 25))
            w = {"ante": a, "odds": a}
            if self.rng.random() < 0.3:
                w["prime"] = 5
            wagers[str(s)] = w
        evs, rnd = self._deal(self.n_round, wagers)
        return evs + self._settle(rnd, {s: w["ante"] for s, w in wagers.items()})

    def _deal(self, n, wagers):
        """A round's events up to deal_complete, and what settling it needs (kept here only:
        the cards leave as commitments until the reveal)."""
        deck = DECK[:]
        self.rng.shuffle(deck)
        serial = "%04X" % self.rng.randrange(1, 0xFFFF)
        seats = sorted(wagers, key=int)
        evs = [
            (E.PHASE, {"phase": "betting", "round": n}),
            (
                E.ROUND_OPEN,
                {
                    "round": n,
                    "deck": serial,
                    "back": "R",
                    "seats": wagers,
                    "cards": 5 * len(seats) + 6,
                    "stub": True,
                },
            ),
        ]
        hands = {s: [] for s in seats}
        hands["dealer"] = []
        pos = 0
        order = seats + ["dealer"]
        secret = os.urandom(16)  # the round's secret: never sent before the reveal

        def card(pos, c, t):
            return (
                E.CARD,
                {"round": n, "position": pos, "target": t, "commit": commit(secret, n, pos, t, c)},
            )

        for _ in range(5):
            for t in order:
                c = deck[pos]
                hands[t].append(c)
                evs.append(card(pos, c, t))
                pos += 1
        six = deck[pos]
        evs.append(card(pos, six, "all_six"))
        evs.append((E.DEAL_COMPLETE, {"round": n, "cards": pos + 1}))
        return evs, {
            "n": n,
            "deck": deck[: pos + 1],
            "serial": serial,
            "secret": secret,
            "hands": hands,
            "six": six,
            "wagers": wagers,
        }

    def _settle(self, rnd, raises):
        """The reveal and the result of a dealt round, each seat raising `raises[seat]` (0
        folds); EngineError for a raise the game does not allow."""
        n, wagers, hands = rnd["n"], rnd["wagers"], rnd["hands"]
        obj = {
            "game": self.game,
            "paytable": "fcf-public-1",
            "rules": {},
            "dealer": hands["dealer"],
            "all_six_card": rnd["six"],
            "seats": {
                s: {"cards": hands[s], "wagers": wagers[s], "raise": raises[s]} for s in wagers
            },
        }
        res = engine.evaluate_round(obj)
        res["round"] = n
        res["deck"] = int(rnd["serial"], 16)
        res["paytable"] = "fcf-public-1"
        return [
            (E.REVEAL, {"round": n, "secret": rnd["secret"], "cards": rnd["deck"]}),
            (E.PHASE, {"phase": "settling", "round": n}),
            (E.ROUND_RESULT, {"round": n, "packed": packing.pack(res)}),
            (E.PHASE, {"phase": "idle", "round": n}),
        ]

    # ---- driven by a table system (driven=True): open_round and decisions come as commands ---
    def _open_round(self, body, ctr):
        """open_round {"seats": {"1": {"wagers": {"ante": 10, "odds": 10}}, ...}}: the round's
        phase and round_open now; its cards then come one per step() (the dealer's pace)."""
        if self._open is not None:
            return self.ep.error(ctr, "round_open", "round %d is open" % self._open["n"])
        seats = body.get("seats") if isinstance(body, dict) else None
        wagers = {}
        if isinstance(seats, dict) and 1 <= len(seats) <= 6:
            for s, v in seats.items():
                w = v.get("wagers") if isinstance(v, dict) else None
                if not (
                    isinstance(s, str)
                    and s in ("1", "2", "3", "4", "5", "6")
                    and isinstance(w, dict)
                    and w
                    and all(isinstance(k, str) and type(a) is int and a > 0 for k, a in w.items())
                    and "ante" in w
                ):
                    wagers = {}
                    break
                wagers[s] = dict(w)
        if not wagers:
            return self.ep.error(ctr, "malformed", "seats: {seat 1-6: {wagers: {ante: N, ...}}}")
        self.n_round += 1
        evs, rnd = self._deal(self.n_round, wagers)
        self._open = rnd
        self.ep.reply(ctr, {"round": rnd["n"], "cards": len(rnd["deck"])})
        for kind, b in evs[:2]:
            self.emit(kind, b)
        self._plan = evs[2:]

    def _decide(self, body, ctr):
        """decisions {"1": raise, ...} for every seat once the deal is complete: the reveal and
        the result follow at once."""
        rnd = self._open
        if rnd is None or self._plan:
            return self.ep.error(ctr, "not_dealt", "no round waits for decisions")
        if (
            not isinstance(body, dict)
            or set(body) != set(rnd["wagers"])
            or not all(type(v) is int and v >= 0 for v in body.values())
        ):
            return self.ep.error(
                ctr, "malformed", "a raise (0 folds) for each seat of round %d" % rnd["n"]
            )
        try:
            evs = self._settle(rnd, dict(body))
        except engine.EngineError as e:
            return self.ep.error(ctr, "raise_value", str(e))
        self._open = None
        self.ep.reply(ctr, {"round": rnd["n"]})
        for kind, b in evs:
            self.emit(kind, b)

    def unacknowledged(self):
        """(the eseqs its outbox still holds, the last eseq it sealed), read together."""
        with self._cond:
            return {e for e, _ in self.store.outbox()}, self.store.eseq

    def next_event(self):
        if not self._plan:
            if self.driven:
                return None  # the table system opens the next round
            self._plan = self._round()
        return self._plan.pop(0)

    def emit(self, kind, body):
        """Send one durable event (journalled in the outbox first, then transmitted)."""
        with self._cond:
            try:
                eseq = self.ep.send(kind, body)
            except LinkError:  # outbox full: the event waits in the plan (never dropped)
                self._plan.insert(0, (kind, body))
                return None
            self.sent.append((eseq, kind, time.time()))
            if self._port is not None:
                self._pump_locked()
        return eseq

    def step(self):
        with self._cond:
            ev = self.next_event()
            if ev is None:
                return None, None
            return ev[0], self.emit(*ev)


class FloorDriver:
    """Drives many SimShoes from one thread: each emits `rate` events/s (jittered)."""

    def __init__(self, shoes, rate=1.0, seed=0):
        self.shoes = list(shoes)
        self.rate = rate
        self.rng = random.Random(seed)
        self._stop = threading.Event()
        self._thread = None
        self.emitted = 0

    def start(self):
        self._thread = threading.Thread(target=self._run, name="floor-driver", daemon=True)
        self._thread.start()
        return self

    def _run(self):
        period = 1.0 / self.rate
        now = time.monotonic()
        due = [(now + self.rng.random() * period, i) for i in range(len(self.shoes))]
        import heapq

        heapq.heapify(due)
        while not self._stop.is_set():
            t, i = due[0]
            wait = t - time.monotonic()
            if wait > 0:
                self._stop.wait(min(wait, 0.1))
                continue
            heapq.heapreplace(due, (t + period, i))
            if self.shoes[i].step()[1]:
                self.emitted += 1

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)
