"""Decks and their passes: loading a deck, the deck check and the stub check (a pass of cards
through the reader, ended by the cover card), and the deck's age (functions of the Table)."""
from shoe.errors import CommandError


def serial_of(v):
    """A deck serial as sent (4 upper-case hex digits, or 0..65535) -> int, or None."""
    if isinstance(v, str) and len(v) == 4:
        try:
            return int(v, 16) if v.upper() == v else None
        except ValueError:
            return None
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return None


# clause: rules:1.1-deck
def load_deck(self, body, now):
    if self.cfg is None:
        raise CommandError("load_deck: configure the table first", "not_configured")
    self._need_idle("load_deck")
    serial = serial_of(body.get("serial"))
    if serial is None:
        raise CommandError("load_deck: serial must be 4 upper-case hex digits or 0..65535",
                           "bad_deck")
    slot = self.ledger.load(serial, body.get("back"), now)
    self._waiting(now)
    self._emit("deck_loaded", {"deck": self.ledger.deck_id(slot), "back": body["back"],
                               "slot": slot})
    return {"ok": True, "slot": slot}


def open_check(self, now):
    """Idle: open the check pass of a deck that waits for one (loaded, or to be rechecked)."""
    lg = self.ledger
    s = lg.needs_check()
    if s >= 0:
        self._dirty()
        lg.open_pass("check", s)
        self._waiting(now)


# clause: rules:3-stub-misdealt, rules:3-stub-deck-wrong, rules:3-never-settle
def end_pass(self, now, cover):
    lg = self.ledger
    kind = lg.p_kind
    rep = lg.close_pass(cover)
    self.t_last = None
    if kind == "stub":
        rep["round"] = self.rnd.n
        self._emit("stub", rep)
        if rep["ok"]:
            self._settle(now, True)
        else:
            self._void(rep["reason"], "missing %d, extra %d, total %d" % (
                len(rep["missing"]), rep["extra_count"], rep["counts"]["total"]), now)
    else:
        self._emit("deck_check", rep)


# clause: rules:1.1-deck-age, rules:3-deck-expired
def check_age(self, now):
    cfg = self.cfg
    limit = cfg["deck_age_hand_s"] if cfg["procedure"] == "hand" else cfg["deck_age_shoe_s"]
    lg = self.ledger
    for s in (0, 1):
        if lg.expired(s, now, limit) and lg.warn_once(s):
            deck = lg.deck_id(s)
            self._emit("warning", {"warning": "deck_expired", "deck": deck,
                                   "back": lg.back(s), "age_s": lg.age(s, now),
                                   "limit_s": limit})
            self._latch("deck_expired", "deck %s older than %ss" % (deck, limit))
