"""Dealing tracker: where each card of a round must go (rules.md 1.4 and 2.2).

Given the game, the procedure, the active seats (in seat order) and whether anyone bet All-Six
(`a6`), position p (0 = first card out of the shoe) maps to a target:

    FCF manual shoe / hand   [a6: p0 -> all_six] then one card at a time: seats, dealer, x5
    FCF automated shoe       stacks of 5: seats, dealer; a6: one more stack, its first card
                             -> all_six, the other four -> discard (unseen, still dealt)
    HCF manual shoe / hand   one card at a time: seats, dealer, x7
    HCF automated shoe       stacks of 7: seats, dealer

Targets are small ints: 1..6 seats, DEALER, ALL_SIX, DISCARD; `target_name()` gives
"1".."6" / "dealer" / "all_six" / "discard". The tracker keeps the dealt card ids in one
preallocated bytearray (reused every round), so `place()` allocates nothing.
"""
from micropython import const
from shoe.errors import ShoeError
from shoe.deck.ledger import hexs, unhex
from shoe.games.vocab import FCF, HCF, PROCEDURES

DEALER = const(7)
ALL_SIX = const(8)
DISCARD = const(9)
_NAMES = ("?", "1", "2", "3", "4", "5", "6", "dealer", "all_six", "discard")


class DealError(ShoeError):
    pass


def target_name(t):
    return _NAMES[t]


class Tracker:
    def __init__(self):
        self.cards = bytearray(52)
        self.game = FCF
        self.procedure = "manual-shoe"
        self.seats = b""  # active seat numbers, in order
        self.a6 = False
        self.n = 0  # cards placed
        self.total = 0

    # clause: rules:1.4-card-count, rules:2.2-dealing
    def reset(self, game, procedure, seats, a6):
        """Start a round. seats: iterable of seat numbers 1..6 (sorted here)."""
        if game not in (FCF, HCF):
            raise DealError("unknown game %r" % (game,), "unknown_game")
        if procedure not in PROCEDURES:
            raise DealError("unknown procedure %r" % (procedure,), "unknown_procedure")
        self.game = game
        self.procedure = procedure
        self.seats = bytes(sorted(seats))
        self.a6 = bool(a6) and game == FCF
        self.n = 0
        hands = len(self.seats) + 1
        if game == HCF:
            self.total = 7 * hands
        else:
            extra = (5 if procedure == "automated-shoe" else 1) if self.a6 else 0
            self.total = 5 * hands + extra

    def per_hand(self):
        return 7 if self.game == HCF else 5

    # clause: rules:1.4-manual, rules:1.4-hand, rules:1.4-automated, rules:2.2-dealing
    def target(self, p):
        """Target of position p (0-based), or 0 if p is past the end of the deal."""
        if p < 0 or p >= self.total:
            return 0
        k = self.per_hand()
        hands = len(self.seats) + 1
        if self.procedure == "automated-shoe":
            stack = p // k
            if stack < hands - 1:
                return self.seats[stack]
            if stack == hands - 1:
                return DEALER
            return ALL_SIX if p % k == 0 else DISCARD
        if self.a6:
            if p == 0:
                return ALL_SIX
            p -= 1
        i = p % hands
        return self.seats[i] if i < hands - 1 else DEALER

    def next_target(self):
        return self.target(self.n)

    def complete(self):
        return self.n >= self.total

    # clause: rules:3-misdeal-too-many
    def place(self, card):
        """Record the next card; returns its target. DealError(misdeal_too_many) after the end."""
        t = self.target(self.n)
        if t == 0:
            raise DealError("a card after the deal was complete", "misdeal_too_many")
        self.cards[self.n] = card
        self.n += 1
        return t

    def hand(self, t):
        """Card ids dealt so far to target t, in dealing order."""
        out = []
        for p in range(self.n):
            if self.target(p) == t:
                out.append(self.cards[p])
        return out

    def hands(self):
        """{"1": [names], ..., "dealer": [names], "all_six": name|None} (discards left out).
        One pass over the dealt positions (hand() per target was 8 passes: ~50 ms on the
        RP2040 for the card that completes a deal)."""
        from shoe.cards import name

        out = {}
        by = [None] * 10   # target -> its list in `out`
        for s in self.seats:
            by[s] = out[str(s)] = []
        by[DEALER] = out["dealer"] = []
        six = None
        for p in range(self.n):
            t = self.target(p)
            if t == ALL_SIX:
                if six is None:
                    six = name(self.cards[p])
            elif t != DISCARD:
                by[t].append(name(self.cards[p]))
        out["all_six"] = six
        return out

    def dealt(self):
        return self.cards[: self.n]

    def to_state(self):
        return {"game": self.game, "proc": self.procedure, "seats": list(self.seats),
                "a6": self.a6, "cards": hexs(self.cards[: self.n])}

    @classmethod
    def from_state(cls, st):
        tr = cls()
        tr.reset(st["game"], st["proc"], st["seats"], st["a6"])
        c = unhex(st["cards"])
        if len(c) > tr.total:
            raise ValueError("bad tracker state")
        tr.cards[: len(c)] = c
        tr.n = len(c)
        return tr
