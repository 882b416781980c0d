"""Play a session script (interfaces.md section 5) against a virtual board, as a table system
would.

    runner = TableRunner(board, link, world, on_event=print)
    runner.play(script)          # every round ends in exactly one round_result or round_void

The runner configures the table, loads and checks the deck, and for every round: opens it with
its seats and wagers, draws cards through the world simulator one at a time (waiting for the
shoe to account for each card: full speed, but never ahead of the shoe), injects the script's
faults, sends the decisions once the shoe reports the deal complete, runs the stub through the
reader when the shoe asks for it, and acknowledges latched irregularities with the supervisor key.
After a void it follows the phase the shoe reports (re-check the deck, load a new one).

Power cuts kill the board process (SIGKILL) and power it up again on the same state directory;
the link reconnects by itself. A card the shoe had not accounted for when the power went is
re-presented (the shoe's status tells how many cards it holds for the round).

Power returns: the board may also die at any instant from outside (a power failure; the board
is powered up again by whoever supervises it: SimBoard(power_returns=True), or a person). The
runner notices a new boot (board.boots, or, with no board object, a new link session), asks the
shoe's status and carries on from what the shoe holds: a command whose reply was lost is
checked against the status before it is sent again (never applied twice), a card is
re-presented only if the shoe does not hold it, a deck check or a stub is run again
(host_tools/sim/power_returns.py).
"""

import json
import random
import time

from host_tools import events as E
from host_tools.errors import ShoeError
from host_tools.events import decode
from host_tools.sim.power_returns import PowerReturns, Rebooted
from host_tools.sim.world import Deck, WorldError
from shoe import cards
from shoe.games.vocab import FCF, HCF, PROCEDURES

GAMES = (FCF, HCF)
FAULTS = (
    "misread",
    "double-read",
    "no-read",
    "foreign",
    "duplicate",
    "forged",
    "other-back",
    "extra-card",
    "power-cut",
    "link-drop",
)
DEFAULT_SERIALS = (0x3A7F, 0x51C2)
ROUND_END = E.OUTCOMES


def load_script(path_or_obj):
    """Read and check a session script; ShoeError names the first problem."""
    if isinstance(path_or_obj, dict):
        s = path_or_obj
    else:
        try:
            with open(path_or_obj) as f:
                s = json.load(f)
        except OSError as e:
            raise ShoeError("cannot read script %s: %s" % (path_or_obj, e.strerror)) from None
        except ValueError as e:
            raise ShoeError("script %s is not JSON: %s" % (path_or_obj, e)) from None
    if not isinstance(s, dict):
        raise ShoeError("script: the top level must be an object")
    if s.get("game") not in GAMES:
        raise ShoeError("script: game must be one of %s" % ", ".join(GAMES))
    if s.get("procedure", "manual-shoe") not in PROCEDURES:
        raise ShoeError("script: procedure must be one of %s" % ", ".join(PROCEDURES))
    rounds = s.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        raise ShoeError("script: rounds must be a non-empty list")
    for i, r in enumerate(rounds):
        where = "script: round %d" % i
        if not isinstance(r, dict) or not isinstance(r.get("seats"), dict) or not r["seats"]:
            raise ShoeError("%s: seats must be a non-empty object" % where)
        deck = r.get("deck")
        if deck is not None:
            try:
                ids = cards.parse_hand(deck, what="%s deck" % where)
            except cards.CardError as e:
                raise ShoeError(str(e)) from None
            if len(ids) != 52:
                raise ShoeError(
                    "%s: a stacked deck lists all 52 cards (got %d)" % (where, len(ids))
                )
        for f in r.get("faults", []):
            if not isinstance(f, dict) or f.get("kind") not in FAULTS:
                raise ShoeError("%s: fault kind must be one of %s" % (where, ", ".join(FAULTS)))
            if f["kind"] != "extra-card" and (not isinstance(f.get("at"), int) or f["at"] < 0):
                raise ShoeError("%s: fault %s needs `at` >= 0" % (where, f["kind"]))
            if f["kind"] == "duplicate" and f["at"] < 1:
                raise ShoeError("%s: a duplicate repeats a card already dealt: at >= 1" % where)
    return s


class TableRunner(PowerReturns):
    def __init__(self, board, link, world, on_event=None, event_timeout=20.0, cut_link=None):
        self.board = board
        self.link = link
        self.world = world
        self.on_event = on_event or (lambda kind, body: None)
        self.timeout = event_timeout
        self.cut_link = cut_link
        self.decks = {}
        self.serial_next = 0x6000
        self.outcomes = []
        self.ready = None  # the status that let the last round open (play)
        self.cards_read = 0
        self.power_cuts = 0
        self.link_drops = 0
        self.card_times = []
        self.reboots_seen = 0  # boots the runner noticed and recovered from
        self._rounds_before_open = 0
        self._mark = self.boot_mark()  # the boot the runner knows about (recover() moves it)
        self.strategy = None  # f(round, hands on the table, seats) -> {seat: raise}

    # ---- events --------------------------------------------------------------------------
    def _next(self, timeout):
        ev = self.link.next_event(timeout)
        if ev is None:
            return None
        kind, body = decode(ev[0], ev[1])
        self.on_event(kind, body)
        return kind, body

    def wait_for(self, kinds, timeout=None, pred=None, mark=None):
        """Consume events until one of `kinds` (matching pred) arrives; returns (kind, body).
        mark=True: raise Rebooted as soon as the board has booted again since the runner last
        recovered (a boot nobody has looked at yet, wherever it happened)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ShoeError(
                    "the shoe did not report %s within %.0f s"
                    % ("/".join(kinds), timeout or self.timeout)
                )
            if mark and self.boot_mark() != self._mark:
                raise Rebooted()
            ev = self._next(min(left, 0.1 if mark else 0.5))
            if ev is None:
                continue
            if ev[0] in kinds and (pred is None or pred(ev[1])):
                return ev[0], ev[1]

    def status(self):
        return self.command("status", {})

    # ---- deck handling -------------------------------------------------------------------
    def load_and_check(self, serial, back, slot_hint=None, order=None, seed=None):
        rep = self.command("load_deck", {"serial": "%04X" % serial, "back": back})
        slot = rep.get("slot", 0)
        deck = Deck(serial, back, order=order, seed=seed)
        self.decks[slot] = deck
        try:
            self._reader(lambda deck=deck: self.world.deck_check(deck))
            _, ev = self.wait_for((E.DECK_CHECK,), mark=True)
        except Rebooted:
            self.recover()
            return slot  # settle_phase checks the deck again from what the shoe says
        if not ev.get("ok"):
            if self.reboots_seen:
                return slot  # a check cut by a power failure: the shoe says what follows
            raise ShoeError("deck check of %04X failed: %s" % (serial, ev))
        return slot

    def settle_phase(self, rng, back_for_slot):
        """Bring the table to `open_round`: acknowledge, re-check or replace decks as asked."""
        for _ in range(8 + 4 * self.reboots_seen):
            st = self.status()
            for irq in st.get("latched", []):
                self.command("ack_error", {"id": irq["id"]})
            st = self.status() if st.get("latched") else st
            phase = st.get("phase")
            if phase == "open_round":
                return st
            if phase == "deck_check":
                slot = next(
                    (d["slot"] for d in st.get("decks", []) if d["status"] == "checking"), 0
                )
                deck = self.decks.get(slot)
                if deck is None:
                    raise ShoeError(
                        "the shoe wants deck slot %d checked but none was loaded" % slot
                    )
                deck.order = _shuffled_ids(rng)
                deck.pos = 0
                try:
                    self._reader(lambda deck=deck: self.world.deck_check(deck))
                    self.wait_for((E.DECK_CHECK,), mark=True)
                except Rebooted:
                    self.recover()
            elif phase == "load_deck":
                slots = {d["slot"]: d for d in st.get("decks", [])}
                todo = [
                    s for s in (0, 1) if s not in slots or slots[s]["status"] in ("empty", "out")
                ]
                two = st.get("config", {}).get("two_deck")
                slot = todo[0] if todo else 0
                if not two:
                    slot = 0
                self.serial_next += 1
                self.load_and_check(self.serial_next, back_for_slot(slot), seed=rng.random())
            elif phase == "blocked":
                continue
            elif phase in ("dealing", "decisions", "stub") and self.reboots_seen:
                self._finish_open_round(st)  # a round left open by a power failure
            else:
                raise ShoeError("the shoe is in phase %r between rounds" % phase)
        raise ShoeError("the table did not become ready for a round")

    def _finish_open_round(self, st):
        """Only after a power failure: a round the runner lost track of is voided by the
        supervisor (its outcome is the void event, with its reason)."""
        rnd = st["round"]["round"]
        self.command("void_round", {"detail": "table system lost the round (power failure)"})
        self.wait_for(ROUND_END, pred=lambda b: b.get("round") == rnd)

    # ---- one round -----------------------------------------------------------------------
    def play_round(self, spec, deck_order, rng):
        seats = spec["seats"]
        faults = {}
        extra = False
        for f in spec.get("faults", []):
            if f["kind"] == "extra-card":
                extra = True
            else:
                faults[f["at"]] = f
        body = {"seats": {k: {"wagers": v.get("wagers", {})} for k, v in seats.items()}}
        st = self.status()
        slot = _next_slot(st)
        deck = self.decks[slot]
        deck.order = deck_order
        deck.pos = 0
        other = self.decks.get(1 - slot)
        self._rounds_before_open = st.get("rounds", 0)
        reply = self.command("open_round", body)
        rnd = reply["round"]
        ours = lambda b: b.get("round") == rnd  # noqa: E731
        if reply.get("ended"):  # opened, then ended while the power was out
            return self._finish(rnd, self.wait_for(ROUND_END, pred=ours))
        total = reply["cards"]
        self.world.new_round()
        layout = {}  # the physical table: position -> (the card the dealer placed, target)
        pos = 0
        while True:
            fault = faults.get(pos)
            kind = fault["kind"] if fault else None
            t0 = time.monotonic()
            here = pos

            def this_card(b, here=here):
                return b.get("round") == rnd and b.get("position", here) == here

            if kind == "link-drop":
                self._link_drop(fault)  # the cable is out while this card is dealt
            try:
                card = self._reader(
                    lambda kind=kind, fault=fault: self.world.draw(
                        deck, None if kind in ("power-cut", "link-drop") else fault, other
                    )
                )
            except Rebooted:
                card = deck.order[deck.pos - 1]
                ev = self._card_after_boot(rnd, pos, deck, card, this_card)
            else:
                self.cards_read += 1
                if kind == "power-cut":
                    ev = self._power_cut(rnd, pos, deck, card, this_card, fault.get("delay_ms", 0))
                else:
                    timeout = self.timeout + float(fault.get("seconds", 1.0) if fault else 0)
                    try:
                        ev = self.wait_for(
                            (E.CARD, E.ROUND_VOID), pred=this_card, timeout=timeout, mark=True
                        )
                    except Rebooted:
                        ev = self._card_after_boot(rnd, pos, deck, card, this_card)
            self.card_times.append(time.monotonic() - t0)
            if ev[0] in ROUND_END:
                return self._finish(rnd, ev)
            layout[pos] = (card, ev[1].get("target"))
            pos += 1
            if pos >= total:
                break
        self._wait_through_boots((E.DEAL_COMPLETE,), ours)
        if extra:
            self.world.draw(deck, None, other)
            return self._finish(rnd, self.wait_for(ROUND_END, pred=ours))
        decisions = {
            k: v.get("raise", v.get("wagers", {}).get("ante", 0)) for k, v in seats.items()
        }
        if self.strategy is not None:
            # each player looks at their own cards on the table (the shoe's events name none
            # before the decisions close: a card event carries its commitment only)
            chosen = self.strategy(rnd, _hands_on_table(layout), seats)
            decisions = {k: seats[k]["raise"] if "raise" in seats[k] else chosen[k] for k in seats}
        self._decide(rnd, decisions, seats)
        stub_pos = deck.pos
        if st.get("config", {}).get("stub_every", 1) and self._stub_due(rnd):
            self._stub(deck, stub_pos)
        while True:
            try:
                return self._finish(rnd, self.wait_for(ROUND_END, pred=ours, mark=True))
            except Rebooted:
                st2 = self.recover()
                r2 = st2.get("round")
                if r2 is not None and r2.get("round") == rnd and r2.get("stage") == "stub":
                    self._stub(deck, stub_pos)

    def _stub(self, deck, pos):
        """Run the stub through the reader (again after a power failure: from `pos`)."""
        deck.pos = pos
        try:
            self._reader(lambda: self.world.stub(deck))
        except Rebooted:
            self.recover()  # the wait for the round's end looks at the stage again

    def _stub_due(self, rnd):
        st = self.status()
        return st.get("phase") == "stub"

    def _decide(self, rnd, decisions, seats):
        try:
            self.command("decisions", decisions)
        except ShoeError as e:
            # The shoe refused a decision (its reason is shown); the player is asked again and
            # takes the smallest valid raise (1x the Ante).
            self.on_event(E.DECISION_REFUSED, {"round": rnd, "message": str(e)})
            fixed = {k: seats[k].get("wagers", {}).get("ante", 0) for k in decisions}
            decided = self.status().get("round", {}).get("decided", [])
            self.command("decisions", {k: v for k, v in fixed.items() if k not in decided})

    def _finish(self, rnd, ev):
        self.outcomes.append((rnd, ev[0], ev[1]))
        return ev

    def _power_cut(self, rnd, pos, deck, card, this_card, delay_ms=0):
        """Kill the board `delay_ms` after card `pos` was drawn (0: at once, the card may not
        have been read yet; a few ms: while it is processed or journalled); power up again on
        the same flash; re-present the card if the shoe does not hold it."""
        self.power_cuts += 1
        if delay_ms:
            time.sleep(delay_ms / 1000.0)
        self.board.power_cut()
        self.board.start()
        return self._card_after_boot(rnd, pos, deck, card, this_card)

    def _link_drop(self, fault):
        """Pull the host cable for a while; the dealing goes on, the events arrive after."""
        self.link_drops += 1
        if self.cut_link is None:
            raise ShoeError("link-drop needs a link that can be cut (a virtual table)")
        self.cut_link(float(fault.get("seconds", 1.0)))

    # ---- a whole script ------------------------------------------------------------------
    def play(self, script, settle=True):
        """Configure, load and check the decks, play the rounds -> the outcomes. self.ready: the
        status that let the last round open. settle=False: stop when the last round ends (no
        deck replaced and checked after it)."""
        rng = random.Random(script.get("seed", 0))
        cfg = {
            "game": script["game"],
            "procedure": script.get("procedure", "manual-shoe"),
            "paytable": script.get("paytable") or _default_paytable(script["game"]),
        }
        for k in (
            "rules",
            "offered",
            "stub_every",
            "two_deck",
            "represent_max",
            "jam_timeout_s",
            "shuffle_check",
            "double_reads",
        ):
            if k in script:
                cfg[k] = script[k]
        # every field of the configuration is the supervisor's (shoe.roles): the link uses the
        # supervisor key if it holds one; without, only a shoe set up so already accepts it
        self.command("configure", cfg)
        two = bool(script.get("two_deck"))
        backs = ("R", "B")

        def back_for_slot(slot):
            return backs[slot] if two else "R"

        st = self.status()
        if st.get("phase") == "load_deck":
            for slot in (0, 1) if two else (0,):
                self.load_and_check(DEFAULT_SERIALS[slot], back_for_slot(slot), seed=rng.random())
        for i, spec in enumerate(script["rounds"]):
            self.ready = self.settle_phase(rng, back_for_slot)
            order = spec.get("deck")
            ids = [cards.parse(c) for c in order] if order else _shuffled_ids(rng)
            try:
                self.play_round(spec, ids, rng)
            except WorldError as e:
                raise ShoeError("round %d: %s" % (i, e)) from None
        if settle:
            self.settle_phase(rng, back_for_slot)
        return self.outcomes


def _hands_on_table(layout):
    """{target: [card names]} of the cards lying on the table (position -> (card id, target)),
    in dealing order: what each player sees of their own hand."""
    out = {}
    for p in sorted(layout):
        card, target = layout[p]
        out.setdefault(target, []).append(cards.name(card))
    return out


def _shuffled_ids(rng):
    ids = list(range(52))
    rng.shuffle(ids)
    return ids


def _next_slot(status):
    decks = status.get("decks", [])
    nxt = status.get("next_slot")
    if nxt is not None:
        return nxt
    ready = [d["slot"] for d in decks if d["status"] == "ready"]
    return ready[0] if ready else 0


def _default_paytable(game):
    return "fcf-public-1" if game == FCF else "hcf-public-1"


class TableParts:
    """What a table for the runner holds (VirtualTable, RemoteTable): its parts are opened in
    __enter__ and closed on exit in this order, whichever were opened."""

    port = link = proxy = store = board = runner = None

    def _open_store(self, db):
        """The audit store at `db` (every event stored once), or None."""
        if db:
            from host_tools.audit import AuditStore

            self.store = AuditStore(db)
        return self.store

    def __exit__(self, *exc):
        for part in (self.port, self.link, self.proxy, self.store):
            if part is not None:
                part.close()
        if self.board is not None:
            self.board.stop()
