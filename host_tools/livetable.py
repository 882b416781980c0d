"""The live state of one table, as its shoe's events tell it: the one model every screen and
floor daemon reads (monitor, display, the gateway's retained state, the collector's tile row).

    t = LiveTable(shoe="T001")
    changed = t.apply(kind, body, eseq=None)   # True when the phase, round, outcome or the
                                               # irregularities changed (what a state shows)
    t.state()        # the gateway's retained state: shoe, phase, round, last_result,
                     # irregularities, head (+ config once known)

Pure: no I/O, no clock. A packed round result is decoded here (host_tools.events.decode). A
dealt card is face down: `hands` holds None for it until its round's reveal names it (the
shoe sends only a commitment; host_tools/reveal.py), so nothing built from this model can show
a card before the reveal.

    phase, round       the shoe's phase and the open round (None between rounds: the phase
                       event says so); last_round: the latest round any event named
    deck, seats        of the round opened last
    hands              {target: [card name, or None while face down]} of the latest round
    dealt, cards_read  cards dealt in the latest round / since this model started
    revealed           the last reveal's [(position, card, target)] (None before one)
    result             the latest round_result (decoded) or round_void body
    last_result        its summary: {"round", "outcome": "result", "seats": {seat: net}} or
                       {"round", "outcome": "void", "reason"}
    latched            {irregularity id: body} not yet cleared; irregularities: their count as
                       raised minus cleared (never below 0)
    head, kind         the highest eseq applied, the kind of the last event
    config             the table's game, pay table and rules (from the shoe's status; set by
                       whoever asks for it)
    hello              the shoe's hello body
"""

from host_tools import events as E
from host_tools.reveal import Shown

# the kinds that change what a retained state shows
STATE_KINDS = (
    E.PHASE,
    E.ROUND_OPEN,
    E.ROUND_RESULT,
    E.ROUND_VOID,
    E.IRREGULARITY,
    E.IRREGULARITY_CLEARED,
)


def _int(x):
    return isinstance(x, int) and not isinstance(x, bool)


class LiveTable:
    def __init__(self, shoe=None):
        self.shoe = shoe
        self.hello = None
        self.phase = None
        self.round = None
        self.last_round = None
        self.deck = None
        self.seats = []
        self.hands = {}
        self.dealt = 0
        self.cards_read = 0
        self.revealed = None
        self.result = None
        self.last_result = None
        self.latched = {}
        self.irregularities = 0
        self.head = 0
        self.kind = None
        self.config = None
        self._shown = Shown()

    def apply(self, kind, body, eseq=None):
        """One event, in the order the shoe sent them. Returns True if what state() shows of
        the table (phase, round, outcome, irregularities) may have changed."""
        if eseq:
            self.head = max(self.head, eseq)
        self.kind = kind
        self.revealed = None
        if not isinstance(body, dict):
            return kind in STATE_KINDS
        kind, body = E.decode(kind, body)
        latest = self.last_round
        if _int(body.get("round")):
            self.last_round = body["round"]
        if kind == E.HELLO:
            self.hello = body
        elif kind == E.PHASE:
            self.phase = body.get("phase")
            self.round = body.get("round", self.round)
        elif kind == E.ROUND_OPEN:
            self.round = body.get("round")
            self.deck = body.get("deck")
            seats = body.get("seats")
            self.seats = [str(s) for s in seats] if isinstance(seats, dict) else []
            self.hands = {s: [] for s in self.seats}
            self.hands["dealer"] = []
            self.dealt = 0
            self._shown.feed(kind, body)
        elif kind == E.CARD:
            self._shown.feed(kind, body)
            self.cards_read += 1
            self.dealt += 1
            self.hands.setdefault(str(body.get("target")), []).append(None)  # face down
        elif kind == E.REVEAL:
            self.revealed = self._shown.feed(kind, body)
            if self.revealed and body.get("round") == latest:  # not an older round's
                hands = {}
                for _, card, target in self.revealed:
                    hands.setdefault(str(target), []).append(card)
                self.hands.update(hands)
        elif kind == E.ROUND_RESULT:
            self.result = body
            seats = body.get("seats")
            self.last_result = {
                "round": body.get("round"),
                "outcome": "result",
                "seats": {s: v.get("net") for s, v in seats.items()}
                if isinstance(seats, dict)
                else {},
            }
        elif kind == E.ROUND_VOID:
            self.result = body
            self.last_result = {
                "round": body.get("round"),
                "outcome": "void",
                "reason": body.get("reason"),
            }
        elif kind == E.IRREGULARITY:
            self.irregularities += 1
            self.latched[body.get("id")] = body
        elif kind == E.IRREGULARITY_CLEARED:
            self.irregularities = max(0, self.irregularities - 1)
            self.latched.pop(body.get("id"), None)
        return kind in STATE_KINDS

    def outcome_of_round(self):
        """The latest outcome if it belongs to the latest round (else None: a new round)."""
        r = self.result
        if r is not None and r.get("round") == self.last_round:
            return r
        return None

    def state(self):
        """The live state as the gateway publishes it (its retained floor/shoe/<id>/state,
        before the gateway adds its own figures)."""
        st = {
            "shoe": self.shoe,
            "phase": self.phase,
            "round": self.round,
            "last_result": self.last_result,
            "irregularities": self.irregularities,
            "head": self.head,
        }
        if self.config is not None:
            st["config"] = self.config
        return st
