"""The round lifecycle: a sans-I/O state machine between the host, the card reader and the engine.

    t = Table(engine=None)          # engine: shoe.games.engine (imported when first needed)
                                    # secrets: f(round) -> 16 bytes (default os.urandom)
    t.command(kind, body, now)      # host command -> reply dict, or CommandError (nothing changed)
    t.card(serial, back, card, now) # an authenticated read from the reader (card id 0..52)
    t.reject(reason, now)           # a read that failed: no_read, code_format, code_mac, ...
    t.tag_read(serial, back, card, ctr)   # an RFID read against its deck's tag counters (first)
    t.tick(now)                     # timers: reader jam, deck age
    t.pop_events()                  # [(kind, body), ...] to report, in order
    t.state() / Table.from_state(snapshot)   # JSON-able snapshot; resumes exactly
    t.take_delta()                  # what changed in state() since the last call, as journal
                                    # delta ops (shoe.journal.delta), or None: not known, diff it

No I/O, no clock: `now` (seconds) is passed in. The parts: round.py (the configuration, the
open round), passes.py (decks, deck and stub checks), irregularities.py (latch, void),
secret.py (a dealt card leaves only as a commitment until the reveal), snapshot.py (state() and
the dealt card's delta). Commands, events, phases and what the table
must do after every outcome: docs/round-lifecycle.md; irregularities: docs/irregularities.md.
"""
from shoe import reasons as R
from shoe.cards import name
from shoe.deck import tags
from shoe.deck.ledger import Ledger, READY, CHECKING, OUT, EMPTY, code_name, hexs
from shoe.deck.shuffle_check import ShuffleCheck
from shoe.dealing.tracker import Tracker, target_name
from shoe.errors import CommandError, ShoeError
from shoe.commitment import commit
from shoe import roles
from shoe.table.snapshot import CARDS, JAM, PHASE, SEEN, STAGE, T_LAST, TRIES
from shoe.table import irregularities as irq, passes, round as rounds, secret, snapshot

_STATUS_NAMES = ("empty", "checking", "ready", "out")


class Table:
    # the parts (round, passes, irregularities, snapshot) are modules of functions of the
    # table, bound here as its methods: a mixin class per part would cost RAM for nothing
    state = snapshot.state
    from_state = classmethod(snapshot.from_state)
    take_delta = snapshot.take_delta
    tag_read = snapshot.tag_read
    delta_failed = snapshot.delta_failed
    _dirty = snapshot.delta_failed
    make_paths = snapshot.make_paths
    _op = snapshot.op
    config_summary = rounds.config_summary
    _need_idle = rounds.need_idle
    _sequence = rounds.sequence
    _settle = rounds.settle
    _open_check = passes.open_check
    _end_pass = passes.end_pass
    _check_age = passes.check_age
    _latch = irq.latch
    _blocked = irq.blocked
    latched_fitting = irq.latched_fitting
    _void = irq.void
    void_in_progress = irq.void_in_progress
    journal_damaged = irq.journal_damaged
    _new_secret = secret.new_secret
    _reveal = secret.reveal
    hidden_position = secret.hidden_position

    def __init__(self, config=None, engine=None, secrets=None):
        self._engine = engine
        self._secrets = secrets   # None: os.urandom (tests pass a deterministic f(round))
        self.cfg = None
        self.ledger = Ledger()
        self.tracker = Tracker()
        self.shuffle = ShuffleCheck()
        self.rnd = None  # the open round (a Round) or None
        self.latched = []  # irregularity dicts, oldest first
        self.n_round = 0
        self.n_irq = 0
        self.t_last = None  # last reader activity while a deal or a pass waits for cards
        self.jammed = False
        self.phase = None  # last phase reported
        self.out = []
        # the state() change since take_delta() as delta ops, kept only on the dealt-card path
        # (the hot one: ~36 a round); None = something else changed (the caller diffs state())
        self._delta = None
        self._paths = None   # the delta paths of the fields a dealt card changes (make_paths)
        if config is not None:
            self.command("configure", config, 0, roles.SUPERVISOR)   # the code's own set-up

    @property
    def engine(self):
        if self._engine is None:
            from shoe.games import engine

            self._engine = engine
        return self._engine

    # -- outputs ------------------------------------------------------------------------------
    def _emit(self, kind, body):
        self.out.append((kind, body))

    def pop_events(self):
        out = self.out
        self.out = []
        return out

    def _waiting(self, now):
        """A deal or a pass starts waiting for cards: the jam timer runs from now."""
        self.t_last = now
        self.jammed = False

    def current_phase(self):
        if self.cfg is None:
            return "configure"
        if self.rnd is not None:
            return self.rnd.stage
        lg = self.ledger
        if lg.p_kind == "check":
            return "deck_check"
        if self._blocked():
            return "blocked"
        for s in ((lg.next, 1 - lg.next) if lg.two_deck else (0,)):
            st = lg.status(s)
            if st == EMPTY or st == OUT:
                return "load_deck"
        return "open_round"

    def _after(self, now):
        lg = self.ledger
        if self.rnd is None and lg.p_kind is None and self.cfg is not None:
            self._open_check(now)
        p = self.current_phase()
        if p != self.phase:
            self._op(PHASE, p)
            self.phase = p
            body = {"phase": p, "round": self.rnd.n if self.rnd else None}
            if p == "deck_check":
                body["deck"], body["back"] = lg.deck_id(lg.p_slot), lg.back(lg.p_slot)
            elif p == "load_deck" and lg.two_deck:
                body["back"] = lg.back_wanted()
            self._emit("phase", body)

    # -- host commands ------------------------------------------------------------------------
    def command(self, kind, body, now, role=roles.TABLE):
        """A host command of `role` (the key that MAC'd it: shoe.roles; the allowlist decides
        what it may do) -> reply dict, or CommandError (nothing changed)."""
        if body is None:
            body = {}
        fn = _COMMANDS.get(kind)
        if fn is None:
            raise CommandError("unknown command %r (%s)" % (kind, ", ".join(sorted(_COMMANDS))),
                               "bad_command")
        if not isinstance(body, dict):
            raise CommandError("%s: the body must be an object" % kind, "bad_command")
        roles.check(self, kind, body, role)
        if kind != "status":
            self._dirty()   # a command may change anything (the phase a status finds: _after)
        try:
            if roles.rule(kind) == "fields":   # configure: each changed field's role
                reply = fn(self, body, now, role)
            else:
                reply = fn(self, body, now)
        except CommandError:
            raise
        except ShoeError as e:   # SetupError, LedgerError: each carries its reason
            raise CommandError(str(e), e.reason)
        self._after(now)
        return reply

    def _status(self, body, now):
        lg = self.ledger
        decks = []
        for s in (0, 1):
            if lg.deck(s) is not None:
                decks.append({"slot": s, "deck": lg.deck_id(s), "back": lg.back(s),
                              "status": _STATUS_NAMES[lg.status(s)], "age_s": lg.age(s, now)})
        rnd = self.rnd
        st = {"ok": True, "phase": self.current_phase(), "config": self.config_summary(),
              "decks": decks,
              "latched": self.latched_fitting(), "latched_count": len(self.latched),
              "rounds": self.n_round, "next_slot": lg.next,
              "cloneable": tags.cloneable(lg)}   # no authenticated tags in play (shoe.sun)
        if rnd is not None:
            t = self.tracker.next_target()
            st["round"] = {"round": rnd.n, "stage": rnd.stage, "dealt": self.tracker.n,
                           "cards": self.tracker.total, "deck": rnd.deck,
                           "next": target_name(t) if t else None,
                           "decided": sorted(rnd.raises)}
        return st

    # -- reads --------------------------------------------------------------------------------
    # clause: rules:3-misdeal-too-many, irr:card-out-of-round
    def card(self, serial, back, card, now):
        if (not isinstance(serial, int) or not isinstance(card, int) or not 0 <= card <= 52
                or back not in ("R", "B") or not 0 <= serial <= 0xFFFF):
            raise CommandError("card: bad read %r %r %r" % (serial, back, card), "bad_field")
        rnd = self.rnd
        lg = self.ledger
        if rnd is not None and rnd.stage != "stub":
            bad = lg.classify(serial, back, card, rnd.slot)
            if bad is None and rnd.stage == "decisions":
                bad = "misdeal_too_many"
            if bad is not None:
                where = "position %d: %s" % (self.tracker.n, code_name(serial, back, card))
                self._void(bad, where, now)
            else:
                self._dealt(rnd, card, now)
        elif lg.p_kind is not None:
            self._dirty()
            self.t_last = now
            if lg.pass_read(serial, back, card):
                self._end_pass(now, True)
        else:
            self._dirty()
            s = lg.slot_for(serial, back)
            if s >= 0 and lg.status(s) == READY:
                lg.mark(s, CHECKING)
            self._latch("card_out_of_round", code_name(serial, back, card))
        self._after(now)

    # clause: 684a.11(e)
    def _dealt(self, rnd, card, now):
        """A good card of the deal (classify said so): placed and reported, and the state
        change recorded as delta ops (the whole state is not diffed for the hot path)."""
        lg = self.ledger
        tr = self.tracker
        i = lg.accept(card)
        self._op(SEEN, [2 * i, hexs(lg.seen[i:i + 1])], 2)
        t = tr.place(card)
        self._op(CARDS, hexs(tr.cards[tr.n - 1:tr.n]), 1)
        if rnd.tries:
            rnd.tries = 0
            self._op(TRIES, 0)
        self.t_last = now
        self._op(T_LAST, now)
        if self.jammed:
            self.jammed = False
            self._op(JAM, False)
        # the card itself stays in the shoe until the reveal: only its commitment goes out
        # (position and target are public: the dealing order is)
        p = tr.n - 1
        tn = target_name(t)
        self._emit("card", {"round": rnd.n, "position": p, "target": tn,
                            "commit": commit(rnd.secret, rnd.n, p, tn, name(card))})
        if tr.complete():
            rnd.stage = "decisions"
            self.t_last = None
            self._op(STAGE, "decisions")
            self._op(T_LAST, None)
            self._emit("deal_complete", {"round": rnd.n, "cards": tr.n})

    def reject(self, reason, now):
        if not isinstance(reason, str) or not reason:
            reason = "no_read"
        reason = reason[:24]  # it goes into events
        self._dirty()
        rnd = self.rnd
        forged = reason in R.READ_FORGED
        if rnd is not None and rnd.stage != "stub":
            pos = self.tracker.n
            # clause: rules:3-card-forged
            if forged:
                self._void("card_forged", "position %d: %s" % (pos, reason), now)
            elif rnd.stage == "decisions":
                self._void("misdeal_too_many", "position %d: unreadable (%s)" % (pos, reason),
                           now)
            else:
                # clause: rules:3-unreadable
                rnd.tries += 1
                self.t_last = now
                left = self.cfg["represent_max"] - rnd.tries + 1
                if left <= 0:
                    self._void("misdeal_unreadable", "position %d: %s x%d" % (
                        pos, reason, rnd.tries), now)
                else:
                    self._emit("unreadable", {"round": rnd.n, "position": pos,
                                              "reason": reason, "tries": rnd.tries,
                                              "represent_left": left})
        elif self.ledger.p_kind is not None:
            self.t_last = now
            self.ledger.pass_reject(reason)
        else:
            self._latch("card_out_of_round", "unreadable card (%s)" % reason)
        self._after(now)

    # clause: rules:3-jam
    def tick(self, now):
        if self.cfg is None:
            return
        rnd = self.rnd
        passing = self.ledger.p_kind is not None
        waiting = (rnd is not None and rnd.stage == "dealing") or passing
        if self.t_last is not None and now < self.t_last:
            self._dirty()
            self.t_last = now  # the clock went back (reset): restart the jam timer
        if waiting and self.t_last is not None and now - self.t_last > self.cfg["jam_timeout_s"]:
            if passing:
                self._latch("reader_jam", "pass stalled: no cover card",
                            rnd.n if rnd else None)
                self._end_pass(now, False)
            elif not self.jammed:
                self.jammed = True
                self._latch("reader_jam", "no card for %ss at position %d" % (
                    self.cfg["jam_timeout_s"], self.tracker.n), rnd.n)
        self._check_age(now)
        self._after(now)


_COMMANDS = {
    "configure": rounds.configure, "configure_supervised": rounds.configure_supervised,
    "load_deck": passes.load_deck, "open_round": rounds.open_round,
    "decisions": rounds.decisions, "ack": irq.ack, "status": Table._status,
    "close_round": rounds.close_round, "void_round": irq.void_round,
}
