"""The rounds (functions of the Table): the configuration every round follows (checked by
shoe.dealing.setup, the pay table and rules proved by the engine on a fixed round, each field
changed only by the role shoe.roles gives it), the open round (a Round), its seats, decisions and
settlement. Fields, phases and what each outcome does: docs/round-lifecycle.md."""
from shoe.errors import CommandError, ShoeError
from shoe.cards import name
from shoe import roles
from shoe.deck.ledger import READY
from shoe.games.vocab import FCF, HCF


class Round:
    """The round being dealt (snapshot.py keeps it in state() as a dict of these names)."""

    def __init__(self, n, slot, deck, seats, stub):
        self.n = n            # round number
        self.slot = slot      # ledger slot of its deck
        self.deck = deck      # that deck's serial as text ('3A7F')
        self.seats = seats    # [[seat, wagers], ...] in seat order
        self.raises = {}      # seat text -> raise (0 = fold)
        self.stage = "dealing"   # dealing | decisions | stub
        self.tries = 0        # reads of the current position that failed
        self.stub = stub      # a stub check ends this round


def _seat_msg(seat, e, cards=None):
    """The engine's message, naming the seat (and hand) if it does not already."""
    m = str(e)
    if m.startswith("seat "):
        return m
    if cards:
        return "seat %s, hand %s: %s" % (seat, " ".join(cards), m)
    return "seat %s: %s" % (seat, m)


def _reason(e, default):
    """The reason code of an error of the engine or setup (`default` for anything else)."""
    return e.reason if isinstance(e, ShoeError) else default


# a fixed round the engine settles at configure time to validate the pay table and rules
_PROBE = {FCF: ("2c 3d 4h 5s 7c", "9c Td Jh Qs Kc"),
          HCF: ("2c 3d 4h 5s 7c 8d 9h", "Tc Jd Qh Ks Ac 6d 6h")}


# clause: rules:1.3-offered
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
    if cfg["game"] == FCF:
        w["odds"] = 1
        obj["all_six_card"] = "Ac" if "all_six" in w else None
    return obj


def configure(self, body, now, role):
    """The new configuration, normalised; refused (needs_supervisor) if it changes a field
    `role` may not change (shoe.roles: every field, against the current configuration)."""
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
    roles.check_fields(role, self.cfg, cfg)
    try:
        self.engine.evaluate_round(_probe(cfg))
    except Exception as e:  # EngineError, PaytableError; anything else is refused too
        raise CommandError("configure: %s" % e, _reason(e, "bad_field"))
    if self.cfg is None or cfg["two_deck"] != self.ledger.two_deck:
        self.ledger.set_two_deck(cfg["two_deck"])
    self.cfg = cfg
    return {"ok": True, "config": self.config_summary()}


def configure_supervised(self, body, now):
    """configure under the supervisor's authority (the kind an older host sends with the
    supervisor key; shoe.roles lets only the supervisor send it)."""
    return configure(self, body, now, roles.SUPERVISOR)


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


# clause: 684a.7(c), 678a.7(c)
def need_idle(self, what):
    if self.rnd is not None:
        raise CommandError("%s: round %d is open" % (what, self.rnd.n), "round_open")


# clause: 684a.7(c), 678a.7(c)
def open_round(self, body, now):
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
            raise CommandError(_seat_msg(s[0], e), _reason(e, "bad_wager"))
    a6 = False
    for s in seats:
        a6 = a6 or "all_six" in s[1]
    self.tracker.reset(cfg["game"], cfg["procedure"], [s[0] for s in seats], a6)
    lg.begin_round(slot)
    self.n_round += 1
    rnd = self.rnd = Round(self.n_round, slot, lg.deck_id(slot), seats,
                           lg.stub_due(slot, cfg["stub_every"]))
    self._waiting(now)
    self._emit("round_open", {"round": rnd.n, "deck": rnd.deck, "back": lg.back(slot),
                              "seats": dict((str(s[0]), s[1]) for s in seats),
                              "cards": self.tracker.total, "stub": rnd.stub})
    self._check_age(now)
    self.make_paths()   # the new round's dicts: the first card's delta is ready to write
    return {"ok": True, "round": rnd.n, "cards": self.tracker.total}


# clause: 684a.11(b), 684a.7(c), 678a.7(c), rules:1.5-refused
def decisions(self, body, now):
    rnd = self.rnd
    if rnd is None:
        raise CommandError("decisions: no round is open", "no_round")
    if rnd.stage != "decisions":
        raise CommandError("decisions: round %d is in %s, not waiting for decisions" % (
            rnd.n, rnd.stage), "out_of_sequence")
    if not body:
        raise CommandError("decisions: give {\"seat\": raise, ...}", "bad_field")
    game = self.cfg["game"]
    wagers = dict((str(s[0]), s[1]) for s in rnd.seats)
    eng = self.engine
    seen = []
    for k in body:
        seat = str(k)
        if seat not in wagers:
            raise CommandError("decisions: seat %s is not playing this round" % seat,
                               "bad_seat")
        if seat in rnd.raises:
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
            raise CommandError(_seat_msg(seat, e, cards), _reason(e, "bad_raise"))
        if seat in seen:
            raise CommandError("decisions: seat %s given twice" % seat, "seat_twice")
        seen.append(seat)
    for k in body:
        rnd.raises[str(k)] = body[k]
    waiting = [s for s in wagers if s not in rnd.raises]
    if not waiting:
        if rnd.stub:
            rnd.stage = "stub"
            self.ledger.open_pass("stub", rnd.slot)
            self._waiting(now)
        else:
            self._settle(now, False)
    return {"ok": True, "waiting": sorted(waiting)}


# clause: rules:3-misdeal-too-few
def close_round(self, body, now):
    """The deal ends short (misdeal_too_few): like void_round, the table key until a card of the
    round has left the shoe, the supervisor's after (shoe.roles, checked by Table.command)."""
    if self.rnd is None:
        raise CommandError("close_round: no round is open", "no_round")
    if self.rnd.stage != "dealing":
        raise CommandError("close_round: the deal is complete", "out_of_sequence")
    self._void("misdeal_too_few", "closed after %d of %d cards" % (
        self.tracker.n, self.tracker.total), now)
    return {"ok": True}


def sequence(self, stub):
    seq = bytearray(self.tracker.dealt())
    if stub:
        seq.extend(self.ledger.stub_order())
    return seq


def settle(self, now, stub_checked):
    rnd = self.rnd
    seq = self._sequence(stub_checked)
    # clause: rules:3-unshuffled, rules:1.1-shuffle
    finding = self.shuffle.check(seq) if self.cfg["shuffle_check"] else None
    self.shuffle.remember(seq)
    if finding is not None:
        w = {"warning": "unshuffled", "round": rnd.n, "deck": rnd.deck}
        w.update(finding)
        self._emit("warning", w)
        self._void("deck_unshuffled", "%s %d >= %d over %d cards" % (
            finding["stat"], finding["value"], finding["limit"], finding["length"]), now,
            remember=False)
        return
    cfg = self.cfg
    hands = self.tracker.hands()
    seats = {}
    for s in rnd.seats:
        k = str(s[0])
        seats[k] = {"cards": hands[k], "wagers": s[1], "raise": rnd.raises[k]}
    obj = {"game": cfg["game"], "paytable": cfg["paytable"], "rules": cfg["rules"],
           "dealer": hands["dealer"], "seats": seats}
    if cfg["game"] == FCF:
        obj["all_six_card"] = hands["all_six"]
    try:
        res = self.engine.evaluate_round(obj)
    # clause: irr:settle-error
    except Exception as e:  # never settle on an engine failure: void, keep running
        self._void("settle_error", str(e)[:80], now, remember=False)
        return
    res["round"] = rnd.n
    res["deck"] = rnd.deck
    self._emit("round_result", res)
    self.ledger.end_round(stub_checked)
    self.rnd = None
