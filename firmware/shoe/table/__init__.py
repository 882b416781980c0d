"""The round lifecycle: a sans-I/O state machine between the host, the card reader and the engine.

    t = Table(engine=None)          # engine: shoe.games.engine (imported when first needed)
    t.command(kind, body, now)      # host command -> reply dict, or CommandError (nothing changed)
    t.card(serial, back, card, now) # an authenticated read from the reader (card id 0..52)
    t.reject(reason, now)           # a read that failed: no_read, code_format, code_mac, ...
    t.tick(now)                     # timers: reader jam, deck age
    t.pop_events()                  # [(kind, body), ...] to report, in order
    t.state() / Table.from_state(snapshot)   # JSON-able snapshot; resumes exactly
    t.take_delta()                  # what changed in state() since the last call, as journal
                                    # delta ops (shoe.journal.delta), or None: not known, diff it

No I/O, no clock: `now` (seconds) is passed in. Commands, events, phases and what the table must
do after every outcome: docs/round-lifecycle.md; irregularities: docs/irregularities.md.
"""
from micropython import const
from shoe.errors import ShoeError

from shoe import reasons as R
from shoe.cards import name
from shoe.deck.ledger import Ledger, READY, CHECKING, OUT, EMPTY, code_name, hexs
from shoe.deck.shuffle_check import ShuffleCheck
from shoe.dealing.tracker import FCF, Tracker, target_name
from shoe.tablestate import Snapshot, CARDS, JAM, PHASE, SEEN, STAGE, T_LAST, TRIES

_MAX_LATCHED = 16
_LATCHED_BYTES = const(480)  # of the status reply (frame payload <= 1006 B) for latched entries


class CommandError(ShoeError):
    pass


def _serial(v):
    if isinstance(v, str) and len(v) == 4:
        try:
            return int(v, 16) if v.upper() == v else None
        except ValueError:
            return None
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return None


def _hex4(serial):
    return "%04X" % serial


def _seat_msg(seat, e, cards=None):
    """The engine's message, naming the seat (and hand) if it does not already."""
    m = str(e)
    if m.startswith("seat "):
        return m
    if cards:
        return "seat %s, hand %s: %s" % (seat, " ".join(cards), m)
    return "seat %s: %s" % (seat, m)


# a fixed round the engine settles at configure time to validate the pay table and rules
_PROBE = {"four-card-frenzy": ("2c 3d 4h 5s 7c", "9c Td Jh Qs Kc"),
          "high-card-flush": ("2c 3d 4h 5s 7c 8d 9h", "Tc Jd Qh Ks Ac 6d 6h")}


def _probe(cfg):
    """Every offered wager is in the probe, so a pay table that lacks one is refused at
    configure time, not at the first settlement."""
    dealer, seat = _PROBE[cfg["game"]]
    w = {"ante": 1}
    for k in cfg["offered"]:
        w[k] = 1
    obj = {"game": cfg["game"], "paytable": cfg["paytable"], "rules": cfg["rules"],
           "dealer": dealer.split(), "seats": {"1": {"cards": seat.split(), "wagers": w,
                                                     "raise": 0}}}
    if cfg["game"] == "four-card-frenzy":
        w["odds"] = 1
        obj["all_six_card"] = "Ac" if "all_six" in w else None
    return obj


class Table(Snapshot):
    def __init__(self, config=None, engine=None):
        self._engine = engine
        self.cfg = None
        self.ledger = Ledger()
        self.tracker = Tracker()
        self.shuffle = ShuffleCheck()
        self.rnd = None  # the open round (dict) or None
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
            self.command("configure_supervised", config, 0)

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

    def _latch(self, reason, detail, rnd_n=None):
        self._dirty()   # every outcome but a dealt card latches, or comes through command(),
        #                 reject() or card()'s other branches, which leave the delta unknown too
        self.n_irq += 1
        irq = {"id": self.n_irq, "reason": reason, "action": R.action(reason), "latched": True,
               "round": rnd_n, "blocks": R.blocks(reason), "detail": detail}
        if len(self.latched) >= _MAX_LATCHED:
            for i in range(len(self.latched)):
                if not self.latched[i]["blocks"]:
                    self.latched.pop(i)
                    break
        self.latched.append(irq)
        self._emit("irregularity", irq)
        return irq

    def _blocked(self):
        for irq in self.latched:
            if irq["blocks"]:
                return True
        return False

    def current_phase(self):
        if self.cfg is None:
            return "configure"
        if self.rnd is not None:
            return self.rnd["stage"]
        if self.ledger.p_kind == "check":
            return "deck_check"
        if self._blocked():
            return "blocked"
        lg = self.ledger
        for s in ((lg.next, 1 - lg.next) if lg.two_deck else (0,)):
            st = lg.status(s)
            if st == EMPTY or st == OUT:
                return "load_deck"
        return "open_round"

    def _after(self, now):
        lg = self.ledger
        if self.rnd is None and lg.p_kind is None and self.cfg is not None:
            s = lg.needs_check()
            if s >= 0:
                self._dirty()
                lg.open_pass("check", s)
                self.t_last = now
                self.jammed = False
        p = self.current_phase()
        if p != self.phase:
            self._op(PHASE, p)
            self.phase = p
            body = {"phase": p, "round": self.rnd["n"] if self.rnd else None}
            if p == "deck_check":
                d = lg.deck(lg.p_slot)
                body["deck"], body["back"] = _hex4(d[0]), d[1]
            elif p == "load_deck" and lg.two_deck:
                nxt = lg.next
                o = lg.deck(1 - nxt) if lg.status(nxt) in (EMPTY, OUT) else lg.deck(nxt)
                body["back"] = None if o is None or o[2] == OUT else ("B" if o[1] == "R" else "R")
            self._emit("phase", body)

    # -- host commands ------------------------------------------------------------------------
    def command(self, kind, body, now):
        if body is None:
            body = {}
        fn = _COMMANDS.get(kind)
        if fn is None:
            raise CommandError("unknown command %r (%s)" % (kind, ", ".join(sorted(_COMMANDS))),
                               "bad_command")
        if not isinstance(body, dict):
            raise CommandError("%s: the body must be an object" % kind, "bad_command")
        if kind != "status":
            self._dirty()   # a command may change anything (the phase a status finds: _after)
        try:
            reply = fn(self, body, now)
        except CommandError:
            raise
        except ShoeError as e:   # SetupError, LedgerError: each carries its reason
            raise CommandError(str(e), e.reason)
        self._after(now)
        return reply

    def _need_idle(self, what):
        if self.rnd is not None:
            raise CommandError("%s: round %d is open" % (what, self.rnd["n"]), "round_open")

    def _configure(self, body, now, supervised=False):
        self._need_idle("configure")
        if self.ledger.p_kind is not None:
            raise CommandError("configure: a deck check is running", "pass_open")
        from shoe.dealing import setup   # configure/open_round time only: not loaded at boot

        cfg = setup.configure(body)
        pt = cfg["paytable"]
        if not isinstance(pt, str):     # an inline table: named by its content in replies
            from shoe.games import paytable

            cfg["paytable_sha256"] = paytable.digest(pt)
            if "offered" not in body:    # the default: what the pay table offers
                cfg["offered"] = [w for w in cfg["offered"] if w in pt]
        try:
            self.engine.evaluate_round(_probe(cfg))
        except Exception as e:  # EngineError, PaytableError; anything else is refused too
            raise CommandError("configure: %s" % e, e.reason if isinstance(e, ShoeError) else "bad_field")
        weaker = [] if supervised else setup.guarded(self.cfg, cfg)
        if weaker:
            raise CommandError("configure: %s needs the supervisor key (configure_supervised)"
                               % ", ".join(weaker), "needs_supervisor")
        if self.cfg is None or cfg["two_deck"] != self.ledger.two_deck:
            self.ledger.set_two_deck(cfg["two_deck"])
        self.cfg = cfg
        return {"ok": True, "config": self.config_summary()}

    def _configure_supervised(self, body, now):
        """configure with the supervisor's authority (the link checked the supervisor key)."""
        return self._configure(body, now, True)

    def config_summary(self):
        """The configuration as replies carry it: an inline pay table by its name and digest
        (`paytable_sha256`; None for a preset, named by its name), never the whole document
        (one frame)."""
        cfg = self.cfg
        if cfg is None or isinstance(cfg["paytable"], str):
            return cfg
        out = dict(cfg)
        out["paytable"] = cfg["paytable"].get("name") or "inline"
        out["paytable_inline"] = True
        return out

    def _load_deck(self, body, now):
        if self.cfg is None:
            raise CommandError("load_deck: configure the table first", "not_configured")
        self._need_idle("load_deck")
        serial = _serial(body.get("serial"))
        if serial is None:
            raise CommandError("load_deck: serial must be 4 upper-case hex digits or 0..65535",
                               "bad_deck")
        slot = self.ledger.load(serial, body.get("back"), now)
        self.t_last = now
        self.jammed = False
        self._emit("deck_loaded", {"deck": _hex4(serial), "back": body["back"], "slot": slot})
        return {"ok": True, "slot": slot}

    def _open_round(self, body, now):
        if self.cfg is None:
            raise CommandError("open_round: configure the table first", "not_configured")
        self._need_idle("open_round")
        lg = self.ledger
        if lg.p_kind is not None:
            raise CommandError("open_round: finish the deck check first", "pass_open")
        if self._blocked():
            raise CommandError("open_round: a blocking irregularity is not acknowledged",
                               "blocked")
        slot = lg.next
        if lg.status(slot) != READY:
            raise CommandError("open_round: the deck for this round is not loaded and checked",
                               "deck_not_ready")
        cfg = self.cfg
        from shoe.dealing import setup

        seats = setup.seats(cfg, body)
        eng = self.engine
        for s in seats:
            try:
                eng.check_wagers(cfg["game"], s[1])
            except Exception as e:
                raise CommandError(_seat_msg(s[0], e), e.reason if isinstance(e, ShoeError) else "bad_wager")
        a6 = False
        for s in seats:
            a6 = a6 or "all_six" in s[1]
        self.tracker.reset(cfg["game"], cfg["procedure"], [s[0] for s in seats], a6)
        lg.begin_round(slot)
        self.n_round += 1
        d = lg.deck(slot)
        self.rnd = {"n": self.n_round, "slot": slot, "deck": _hex4(d[0]), "seats": seats,
                    "raises": {}, "stage": "dealing", "tries": 0,
                    "stub": lg.stub_due(slot, cfg["stub_every"])}
        self.t_last = now
        self.jammed = False
        self._emit("round_open", {"round": self.n_round, "deck": _hex4(d[0]), "back": d[1],
                                  "seats": dict((str(s[0]), s[1]) for s in seats),
                                  "cards": self.tracker.total, "stub": self.rnd["stub"]})
        self._check_age(now)
        self.make_paths()   # the new round's dicts: the first card's delta is ready to write
        return {"ok": True, "round": self.n_round, "cards": self.tracker.total}

    def _decisions(self, body, now):
        rnd = self.rnd
        if rnd is None:
            raise CommandError("decisions: no round is open", "no_round")
        if rnd["stage"] != "decisions":
            raise CommandError("decisions: round %d is in %s, not waiting for decisions" % (
                rnd["n"], rnd["stage"]), "out_of_sequence")
        if not body:
            raise CommandError("decisions: give {\"seat\": raise, ...}", "bad_field")
        game = self.cfg["game"]
        wagers = dict((str(s[0]), s[1]) for s in rnd["seats"])
        eng = self.engine
        seen = []
        for k in body:
            seat = str(k)
            if seat not in wagers:
                raise CommandError("decisions: seat %s is not playing this round" % seat,
                                   "bad_seat")
            if seat in rnd["raises"]:
                raise CommandError("decisions: seat %s has already decided" % seat,
                                   "decision_repeat")
            amount = body[k]
            cards = [name(c) for c in self.tracker.hand(int(seat))]
            if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
                raise CommandError("seat %s: the raise must be a whole amount >= 0 (0 = fold)"
                                   % seat, "bad_raise")
            try:
                eng.check_raise(game, seat, cards, wagers[seat]["ante"], amount)
            except Exception as e:
                raise CommandError(_seat_msg(seat, e, cards), e.reason if isinstance(e, ShoeError) else "bad_raise")
            if seat in seen:
                raise CommandError("decisions: seat %s given twice" % seat, "seat_twice")
            seen.append(seat)
        for k in body:
            rnd["raises"][str(k)] = body[k]
        waiting = [s for s in wagers if s not in rnd["raises"]]
        if not waiting:
            if rnd["stub"]:
                rnd["stage"] = "stub"
                self.ledger.open_pass("stub", rnd["slot"])
                self.t_last = now
                self.jammed = False
            else:
                self._settle(now, False)
        return {"ok": True, "waiting": sorted(waiting)}

    def _ack(self, body, now):
        ids = body.get("ids")
        if body.get("all") is True:
            ids = [i["id"] for i in self.latched]
        elif ids is None:
            ids = [body.get("id")]
        if not isinstance(ids, list):
            raise CommandError("ack: give {\"id\": N}, {\"ids\": [...]} or {\"all\": true}",
                               "bad_field")
        known = [i["id"] for i in self.latched]
        for i in ids:
            if i not in known:
                raise CommandError("ack: no latched irregularity %r" % (i,),
                                   "unknown_irregularity")
        keep = []
        for irq in self.latched:
            if irq["id"] in ids:
                self._emit("irregularity_cleared", {"id": irq["id"], "reason": irq["reason"]})
            else:
                keep.append(irq)
        self.latched = keep
        return {"ok": True, "cleared": ids}

    def _status(self, body, now):
        lg = self.ledger
        decks = []
        for s in (0, 1):
            d = lg.deck(s)
            if d is not None:
                decks.append({"slot": s, "deck": _hex4(d[0]), "back": d[1],
                              "status": ("empty", "checking", "ready", "out")[d[2]],
                              "age_s": now - d[3]})
        rnd = self.rnd
        st = {"ok": True, "phase": self.current_phase(), "config": self.config_summary(),
              "decks": decks,
              "latched": self._latched_fitting(), "latched_count": len(self.latched),
              "rounds": self.n_round, "next_slot": lg.next}
        if rnd is not None:
            t = self.tracker.next_target()
            st["round"] = {"round": rnd["n"], "stage": rnd["stage"], "dealt": self.tracker.n,
                           "cards": self.tracker.total, "deck": rnd["deck"],
                           "next": target_name(t) if t else None,
                           "decided": sorted(rnd["raises"])}
        return st

    def _latched_fitting(self):
        """The oldest latched irregularities that fit in _LATCHED_BYTES of the status reply (an
        entry costs at most its text plus 64 bytes encoded): with all 16 the reply would not fit
        in one frame, and a shoe that cannot say its status cannot have its errors acknowledged.
        `latched_count` says how many there are; acknowledging these shows the next ones."""
        out = []
        room = _LATCHED_BYTES
        for irq in self.latched:
            room -= len(irq["reason"]) + len(irq["action"]) + len(irq["detail"] or "") + 64
            if room < 0:
                break
            out.append(irq)
        return out

    def _close_round(self, body, now):
        if self.rnd is None:
            raise CommandError("close_round: no round is open", "no_round")
        if self.rnd["stage"] != "dealing":
            raise CommandError("close_round: the deal is complete", "out_of_sequence")
        self._void("misdeal_too_few", "closed after %d of %d cards" % (
            self.tracker.n, self.tracker.total), now)
        return {"ok": True}

    def _void_round(self, body, now):
        if self.rnd is None:
            raise CommandError("void_round: no round is open", "no_round")
        detail = body.get("detail", "")
        if not isinstance(detail, str):
            raise CommandError("void_round: detail must be text", "bad_field")
        self._void("void_supervisor", detail[:80], now)
        return {"ok": True}

    # -- reads --------------------------------------------------------------------------------
    def card(self, serial, back, card, now):
        if (not isinstance(serial, int) or not isinstance(card, int) or not 0 <= card <= 52
                or back not in ("R", "B") or not 0 <= serial <= 0xFFFF):
            raise CommandError("card: bad read %r %r %r" % (serial, back, card), "bad_field")
        rnd = self.rnd
        lg = self.ledger
        if rnd is not None and rnd["stage"] != "stub":
            bad = lg.classify(serial, back, card, rnd["slot"])
            if bad is None and rnd["stage"] == "decisions":
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

    def _dealt(self, rnd, card, now):
        """A good card of the deal (classify said so): placed and reported, and the state
        change recorded as delta ops (the whole state is not diffed for the hot path)."""
        lg = self.ledger
        tr = self.tracker
        i = lg.accept(card)
        self._op(SEEN, [2 * i, hexs(lg.seen[i:i + 1])], 2)
        t = tr.place(card)
        self._op(CARDS, hexs(tr.cards[tr.n - 1:tr.n]), 1)
        if rnd["tries"]:
            rnd["tries"] = 0
            self._op(TRIES, 0)
        self.t_last = now
        self._op(T_LAST, now)
        if self.jammed:
            self.jammed = False
            self._op(JAM, False)
        self._emit("card", {"round": rnd["n"], "position": tr.n - 1, "card": name(card),
                            "target": target_name(t)})
        if tr.complete():
            rnd["stage"] = "decisions"
            self.t_last = None
            self._op(STAGE, "decisions")
            self._op(T_LAST, None)
            self._emit("deal_complete", {"round": rnd["n"], "hands": tr.hands()})

    def reject(self, reason, now):
        if not isinstance(reason, str) or not reason:
            reason = "no_read"
        reason = reason[:24]  # it goes into events
        self._dirty()
        rnd = self.rnd
        lg = self.ledger
        forged = reason in R.READ_FORGED
        if rnd is not None and rnd["stage"] != "stub":
            pos = self.tracker.n
            if forged:
                self._void("card_forged", "position %d: %s" % (pos, reason), now)
            elif rnd["stage"] == "decisions":
                self._void("misdeal_too_many", "position %d: unreadable (%s)" % (pos, reason),
                           now)
            else:
                rnd["tries"] += 1
                self.t_last = now
                left = self.cfg["represent_max"] - rnd["tries"] + 1
                if left <= 0:
                    self._void("misdeal_unreadable", "position %d: %s x%d" % (
                        pos, reason, rnd["tries"]), now)
                else:
                    self._emit("unreadable", {"round": rnd["n"], "position": pos,
                                              "reason": reason, "tries": rnd["tries"],
                                              "represent_left": left})
        elif lg.p_kind is not None:
            self.t_last = now
            lg.pass_reject(reason)
        else:
            self._latch("card_out_of_round", "unreadable card (%s)" % reason)
        self._after(now)

    def tick(self, now):
        if self.cfg is None:
            return
        rnd = self.rnd
        waiting = (rnd is not None and rnd["stage"] == "dealing") or self.ledger.p_kind is not None
        if self.t_last is not None and now < self.t_last:
            self._dirty()
            self.t_last = now  # the clock went back (reset): restart the jam timer
        if waiting and self.t_last is not None and now - self.t_last > self.cfg["jam_timeout_s"]:
            if self.ledger.p_kind is not None:
                self._latch("reader_jam", "pass stalled: no cover card",
                            rnd["n"] if rnd else None)
                self._end_pass(now, False)
            elif not self.jammed:
                self.jammed = True
                self._latch("reader_jam", "no card for %ss at position %d" % (
                    self.cfg["jam_timeout_s"], self.tracker.n), rnd["n"])
        self._check_age(now)
        self._after(now)

    def _check_age(self, now):
        cfg = self.cfg
        limit = cfg["deck_age_hand_s"] if cfg["procedure"] == "hand" else cfg["deck_age_shoe_s"]
        lg = self.ledger
        for s in (0, 1):
            if lg.expired(s, now, limit) and lg.warn_once(s):
                d = lg.deck(s)
                w = {"warning": "deck_expired", "deck": _hex4(d[0]), "back": d[1],
                     "age_s": now - d[3], "limit_s": limit}
                self._emit("warning", w)
                self._latch("deck_expired", "deck %s older than %ss" % (_hex4(d[0]), limit))

    # -- outcomes -----------------------------------------------------------------------------
    def _end_pass(self, now, cover):
        lg = self.ledger
        kind = lg.p_kind
        rep = lg.close_pass(cover)
        rep["deck"] = _hex4(rep.pop("serial"))
        self.t_last = None
        if kind == "stub":
            rep["round"] = self.rnd["n"]
            self._emit("stub", rep)
            if rep["ok"]:
                self._settle(now, True)
            else:
                self._void(rep["reason"], "missing %d, extra %d, total %d" % (
                    len(rep["missing"]), rep["extra_count"], rep["counts"]["total"]), now)
        else:
            self._emit("deck_check", rep)

    def _sequence(self, stub):
        seq = bytearray(self.tracker.dealt())
        if stub:
            seq.extend(self.ledger.stub_order())
        return seq

    def _settle(self, now, stub_checked):
        rnd = self.rnd
        seq = self._sequence(stub_checked)
        finding = self.shuffle.check(seq) if self.cfg["shuffle_check"] else None
        self.shuffle.remember(seq)
        if finding is not None:
            w = {"warning": "unshuffled", "round": rnd["n"], "deck": rnd["deck"]}
            w.update(finding)
            self._emit("warning", w)
            self._void("deck_unshuffled", "%s %d >= %d over %d cards" % (
                finding["stat"], finding["value"], finding["limit"], finding["length"]), now,
                remember=False)
            return
        cfg = self.cfg
        hands = self.tracker.hands()
        seats = {}
        for s in rnd["seats"]:
            k = str(s[0])
            seats[k] = {"cards": hands[k], "wagers": s[1], "raise": rnd["raises"][k]}
        obj = {"game": cfg["game"], "paytable": cfg["paytable"], "rules": cfg["rules"],
               "dealer": hands["dealer"], "seats": seats}
        if cfg["game"] == FCF:
            obj["all_six_card"] = hands["all_six"]
        try:
            res = self.engine.evaluate_round(obj)
        except Exception as e:  # never settle on an engine failure: void, keep running
            self._void("settle_error", str(e)[:80], now, remember=False)
            return
        res["round"] = rnd["n"]
        res["deck"] = rnd["deck"]
        self._emit("round_result", res)
        self.ledger.end_round(stub_checked)
        self.rnd = None

    def _void(self, reason, detail, now, remember=True):
        rnd = self.rnd
        lg = self.ledger
        if remember:
            self.shuffle.remember(self._sequence(False))
        irq = self._latch(reason, detail, rnd["n"])
        act = irq["action"]
        slot = rnd["slot"]
        if act == "void_recheck":
            lg.mark(slot, CHECKING)
        else:
            lg.mark(slot, OUT)
            if reason == "card_other_back":
                lg.mark(1 - slot, OUT)
        if lg.p_kind is not None:
            lg.p_kind = None
            lg.p_slot = -1
        self._emit("round_void", {"round": rnd["n"], "reason": reason, "detail": detail,
                                  "irregularity": irq["id"], "deck": rnd["deck"]})
        lg.end_round(False)
        self.rnd = None
        self.t_last = None

    def void_in_progress(self, reason, now):
        """The app cannot know what happened to the open round: void it (default reason
        power_loss). Returns True if a round was voided."""
        if self.rnd is None:
            return False
        self._void(reason if isinstance(reason, str) else "power_loss", "voided by the app", now)
        self._after(now)
        return True

    def journal_damaged(self, detail, stale, now):
        """The journal lost records to flash corruption (docs/journal.md): latch
        journal_corrupt (it blocks until a supervisor acknowledges it). If the restored state
        may be older than what happened (`stale`), the open round is void and the loaded decks
        are out: load and check a deck again."""
        if stale and self.rnd is not None:
            self._void("journal_corrupt", detail, now, remember=False)
        else:
            self._latch("journal_corrupt", detail, None)
        if stale:
            for s in (0, 1):
                self.ledger.mark(s, OUT)
            self.n_irq += 16  # ids of irregularities the lost records may have latched
        self._after(now)

_COMMANDS = {
    "configure": Table._configure, "configure_supervised": Table._configure_supervised,
    "load_deck": Table._load_deck,
    "open_round": Table._open_round, "decisions": Table._decisions, "ack": Table._ack,
    "status": Table._status, "close_round": Table._close_round, "void_round": Table._void_round,
}
