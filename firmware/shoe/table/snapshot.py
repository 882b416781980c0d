"""The table's persistence (functions of Table): its JSON-able snapshot and the delta of
the snapshot that a dealt card makes.

    t.state() / Table.from_state(snapshot)   # JSON-able snapshot; resumes exactly
    t.take_delta()                           # the change of state() since the last call, as
                                             # journal delta ops, or None (not known: diff it)

The journal keeps {"table": t.state()} (docs/journal.md). A dealt card, ~36 times a round, is
the hot path: its change is recorded as it is made (delta ops, shoe.journal.delta, steps by key
name), so the shoe neither builds the snapshot nor diffs it for each card (on the RP2040 that
was ~10 ms of a card's time and ~9 KB of garbage). Every other change leaves the delta unknown
(None) and the app journals a diff of the whole state().
"""
from micropython import const

from shoe.dealing.tracker import Tracker
from shoe.deck import tags
from shoe.deck.ledger import Ledger, hexs, unhex
from shoe.deck.shuffle_check import ShuffleCheck
from shoe.table.round import Round

_DELTA_MAX = const(24)  # delta ops kept between two take_delta() (the app takes them per read)
# the state() keys a dealt card changes, as (dict path, key): their delta paths are made once
# (make_paths) with the journal's compact steps (a key's rank in its dict's sorted keys: one
# byte each, where names cost up to 8), the journal's state root being {"table": state()}
_FIELDS = ((("ledger",), "seen"), (("tracker",), "cards"), (("round",), "tries"),
           (("round",), "stage"), ((), "t_last"), ((), "jam"), ((), "phase"),
           (("ledger",), "t0"), (("ledger",), "t1"))
SEEN = const(0)
CARDS = const(1)
TRIES = const(2)
STAGE = const(3)
T_LAST = const(4)
JAM = const(5)
PHASE = const(6)
TAGS = const(7)   # + slot: an authenticated deck's read counters (ledger t0 / t1)


def make_paths(self):
    """The delta paths of _FIELDS in this table's state() (None for a field whose dict is not
    there: no round open). Made again for every round (the app's open_round)."""
    st = self.state()
    out = []
    for where, key in _FIELDS:
        d = st
        path = [0]   # {"table": ...}: one key, rank 0
        for k in where:
            path.append(sorted(d).index(k))
            d = d[k]
            if d is None:
                break
        # (a key that is not there: ledger t0/t1 of a cloneable deck, shoe.deck.tags)
        out.append(None if d is None or key not in d else path + [sorted(d).index(key)])
    self._paths = out
    return out


def take_delta(self):
    """The change of state() since the last call, as delta ops (paths of key ranks from the
    journal's state root {"table": ...}: make_paths), or None when it is not known: every
    change but a dealt card leaves None, and the caller diffs the whole state() instead. Either
    way the table starts recording again from here."""
    d = self._delta
    self._delta = []
    return d


def delta_failed(self):
    """The delta last taken could not be journalled: the next take_delta() says None, so
    the caller writes the whole change (the journal's copy of the state stays right)."""
    self._delta = None


def op(self, field, value, kind=0):
    d = self._delta
    if d is not None:
        if len(d) >= _DELTA_MAX:   # nobody takes them (no journal): RAM stays bounded
            self._delta = None
            return
        p = (self._paths or self.make_paths())[field]
        if p is None:
            self._delta = None
        else:
            d.append([p, value, kind] if kind else [p, value])


def tag_read(self, serial, back, card, ctr, repeat=False):
    """shoe.deck.tags.tag_read (a read against its deck's tag counters) -> None, "repeat" or
    the reason the read is forged; a counter that rose in a deal is recorded as its delta op (a
    3-byte splice of ledger t0/t1), elsewhere the whole state is diffed."""
    lg = self.ledger
    why, s = tags.tag_read(lg, serial, back, card, ctr, repeat)
    if s >= 0:
        r = self.rnd
        if r is not None and r.stage == "dealing":
            self._op(TAGS + s, [6 * card, hexs(lg.tc[s][3 * card:3 * card + 3])], 2)
        else:
            self._dirty()
    return why


def state(self):
    r = self.rnd
    rnd = None
    if r is not None:
        rnd = {"n": r.n, "slot": r.slot, "deck": r.deck, "seats": r.seats,
               "raises": dict(r.raises), "stage": r.stage, "tries": r.tries, "stub": r.stub,
               "secret": hexs(r.secret), "revealed": r.revealed}
    lst = self.ledger.to_state()
    tags.add_state(self.ledger, lst)
    return {"v": 1, "cfg": self.cfg, "ledger": lst,
            "tracker": self.tracker.to_state() if rnd else None, "round": rnd,
            "latched": list(self.latched), "n": self.n_round, "irq": self.n_irq,
            "t_last": self.t_last, "jam": self.jammed, "shuffle": self.shuffle.to_state(),
            "phase": self.phase, "out": list(self.out)}


def from_state(cls, st, engine=None, secrets=None):
    """A table exactly as it was when `st` = t.state() was taken. ValueError if `st` is not
    a complete v1 snapshot. A round journalled before rounds had a secret (its cards went out
    in clear) gets a fresh one for the cards still to come."""
    if not isinstance(st, dict) or st.get("v") != 1:
        raise ValueError("not a table state (v1)")
    try:
        t = cls(None, engine, secrets)
        t.cfg = st["cfg"]
        t.ledger = Ledger.from_state(st["ledger"])
        tags.load_state(t.ledger, st["ledger"])
        if st["tracker"] is not None:
            t.tracker = Tracker.from_state(st["tracker"])
        rnd = st["round"]
        if rnd is not None:
            sec = rnd.get("secret")
            r = t.rnd = Round(rnd["n"], rnd["slot"], rnd["deck"],
                              [[s[0], s[1]] for s in rnd["seats"]], rnd["stub"],
                              t._new_secret(rnd["n"]) if sec is None else bytes(unhex(sec, 16)))
            r.revealed = rnd.get("revealed", False) is True
            r.raises = dict(rnd["raises"])
            r.stage = rnd["stage"]
            r.tries = rnd["tries"]
        t.latched = list(st["latched"])
        t.n_round = st["n"]
        t.n_irq = st["irq"]
        t.t_last = st["t_last"]
        t.jammed = st["jam"]
        t.shuffle = ShuffleCheck.from_state(st["shuffle"])
        t.phase = st["phase"]
        t.out = [tuple(e) for e in st["out"]]
        return t
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise ValueError("bad table state: %r" % (e,))
