"""Deck ledger: which deck is on the table, is it whole, is every dealt card its own and new.

One or two deck slots (two-deck mode alternates them by back colour every round). A slot is

    [serial, back, status, loaded_at, rounds_since_stub, expired_warned]
    status: EMPTY -> (load) CHECKING -> (check pass ok) READY -> (quarantine/remove) OUT

A *pass* runs a pile of cards through the reader and ends at the cover card (which goes last):
the deck check (52 cards + CV, exactly that deck) and the stub check after a round (dealt +
stub = exactly the deck). During a deal `classify()` gives the reason code of the
irregularity unless the card belongs to the round's deck and was not seen since the shuffle,
and `accept()` records it. Card sets are 7-byte bitmaps (bit c = card id c), never Python
sets: the state stays a few hundred bytes and JSON-able (`to_state()` / `from_state()`).

A deck checked with authenticated RFID tags keeps its tags' read counters here, `tc` (3 bytes a
card, for the deck's life; the rules and their part of the snapshot: shoe/deck/tags.py).
"""
from shoe.errors import ShoeError
from binascii import hexlify, unhexlify
from micropython import const
from shoe import reasons as R

EMPTY = const(0)
CHECKING = const(1)
READY = const(2)
OUT = const(3)
_COVER = const(52)
_MAX_EXTRA = const(8)  # foreign cards listed in a pass report (the rest are counted)
# a slot: [serial, back, status, loaded_at, rounds_since_stub, expired_warned]
_SERIAL = const(0)
_BACK = const(1)
_STATUS = const(2)
_LOADED = const(3)
_SINCE = const(4)
_WARNED = const(5)


class LedgerError(ShoeError):
    pass


def has(mask, c):
    return (mask[c >> 3] >> (c & 7)) & 1


def put(mask, c):
    mask[c >> 3] |= 1 << (c & 7)


def count(mask):
    n = 0
    for b in mask:
        while b:
            b &= b - 1
            n += 1
    return n


def members(mask, invert=False):
    """Card ids in the mask (or, with invert, the deck cards not in it)."""
    out = []
    for c in range(52):
        if bool(has(mask, c)) != invert:
            out.append(c)
    return out


def _clear(mask):
    for i in range(7):
        mask[i] = 0


def hexs(b):
    """bytes -> lower-case hex text (C speed: state() runs after every event)."""
    return hexlify(b).decode()


def unhex(s, n=None):
    """hex text -> bytearray (of n bytes if given); ValueError if malformed."""
    if not isinstance(s, str) or (n is not None and len(s) != 2 * n):
        raise ValueError("bad hex in state")
    try:
        return bytearray(unhexlify(s))
    except Exception:
        raise ValueError("bad hex in state")


def code_name(serial, back, card):
    """A card of any deck as text, e.g. '3A7FRAs' (for reports)."""
    from shoe.cards import name

    return "%04X%s%s" % (serial, back, name(card))


class Ledger:
    def __init__(self, two_deck=False):
        self.two_deck = bool(two_deck)
        self.slots = [None, None]
        self.next = 0  # slot of the next round
        self.seen = bytearray(7)  # cards dealt since the shuffle, current round
        self.round_slot = -1  # slot of the round being dealt, -1 none
        self.p_kind = None  # None | "check" | "stub"
        self.p_slot = -1
        self.p_mask = bytearray(7)
        self.p_dup = bytearray(7)
        self.p_order = bytearray(53)  # stub order (for the unshuffled detector)
        self.p_n = 0  # cards read in the pass (deck cards, incl. duplicates)
        self.p_extra = []  # foreign cards (names), at most _MAX_EXTRA
        self.p_extra_n = 0
        self.p_unread = 0
        self.tc = [None, None]  # per slot: its tags' read counters (shoe.deck.tags), or None
        self.p_plain = 0  # plain reads of the deck in its running check (shoe.deck.tags)

    # decks -------------------------------------------------------------------------------------
    def set_two_deck(self, two):
        self.two_deck = bool(two)
        if not self.two_deck:
            self.slots[1] = None
            self.tc[1] = None
            self.next = 0

    def slot_for(self, serial, back):
        for i in (0, 1):
            s = self.slots[i]
            if s is not None and s[_SERIAL] == serial and s[_BACK] == back:
                return i
        return -1

    # clause: rules:1.1-two-decks
    def load(self, serial, back, now):
        """Put a deck in a slot and open its check pass. Returns the slot."""
        if not isinstance(serial, int) or not 0 <= serial <= 0xFFFF or back not in ("R", "B"):
            raise LedgerError("deck needs serial 0..65535 and back 'R' or 'B'", "bad_deck")
        if self.p_kind is not None and self.p_kind != "check":
            raise LedgerError("a stub pass is running", "pass_open")
        slot = 0
        if self.two_deck:
            other = None
            slot = self.slot_for(serial, back)
            if slot < 0:
                # replace the deck of the same back colour, else fill an empty/removed slot
                for i in (0, 1):
                    s = self.slots[i]
                    if s is not None and s[_BACK] == back:
                        slot = i
                if slot < 0:
                    for i in (0, 1):
                        s = self.slots[i]
                        if s is None or s[_STATUS] == OUT:
                            slot = i
                            break
                if slot < 0:
                    raise LedgerError("two decks of different backs are loaded", "bad_deck")
            other = self.slots[1 - slot]
            if other is not None and other[_STATUS] != OUT and (
                other[_BACK] == back or other[_SERIAL] == serial
            ):
                raise LedgerError("two-deck mode needs two decks with different backs", "bad_deck")
        if self.p_kind == "check" and self.p_slot != slot:
            raise LedgerError("finish the running deck check first", "pass_open")
        old = self.slots[slot]
        if old is None or old[_SERIAL] != serial or old[_BACK] != back:
            self.tc[slot] = None  # another deck: its tags' counters start afresh
        self.slots[slot] = [serial, back, CHECKING, now, 0, False]
        self.open_pass("check", slot)
        return slot

    def deck(self, slot):
        return self.slots[slot]

    def deck_id(self, slot):
        """The serial of the deck in `slot` as reports name it: 4 upper-case hex digits."""
        return "%04X" % self.slots[slot][_SERIAL]

    def back(self, slot):
        return self.slots[slot][_BACK]

    def age(self, slot, now):
        """Whole seconds since the deck in `slot` was loaded (int: the status reply's room)."""
        return int(now - self.slots[slot][_LOADED])

    def status(self, slot):
        s = self.slots[slot]
        return EMPTY if s is None else s[_STATUS]

    def back_wanted(self):
        """Two-deck mode: the back colour the deck to load next must have ('R'/'B': the other
        deck's opposite), or None (any: no other deck in play, or one deck mode)."""
        if not self.two_deck:
            return None
        nxt = self.next
        o = self.slots[1 - nxt] if self.status(nxt) in (EMPTY, OUT) else self.slots[nxt]
        if o is None or o[_STATUS] == OUT:
            return None
        return "B" if o[_BACK] == "R" else "R"

    def mark(self, slot, status):
        s = self.slots[slot]
        if s is not None:
            s[_STATUS] = status

    def needs_check(self):
        """A slot whose deck waits for its (re)check pass, or -1."""
        order = (self.next, 1 - self.next) if self.two_deck else (0,)
        for i in order:
            if self.status(i) == CHECKING:
                return i
        return -1

    # clause: rules:1.1-deck-age
    def expired(self, slot, now, limit):
        s = self.slots[slot]
        return s is not None and s[_STATUS] != OUT and now - s[_LOADED] > limit

    def warn_once(self, slot):
        s = self.slots[slot]
        if s is None or s[_WARNED]:
            return False
        s[_WARNED] = True
        return True

    # clause: rules:1.4-stub-count
    def stub_due(self, slot, every):
        s = self.slots[slot]
        return s is not None and s[_SINCE] + 1 >= every

    # rounds ------------------------------------------------------------------------------------
    def begin_round(self, slot):
        _clear(self.seen)
        self.round_slot = slot

    # clause: rules:1.1-two-decks
    def end_round(self, stub_checked):
        s = self.slots[self.round_slot] if self.round_slot >= 0 else None
        if s is not None:
            s[_SINCE] = 0 if stub_checked else s[_SINCE] + 1
        self.round_slot = -1
        if self.two_deck:
            self.next = 1 - self.next

    # clause: rules:3-card-foreign, rules:3-card-other-back, rules:3-cover-card, rules:3-duplicate
    def classify(self, serial, back, card, slot):
        """The irregularity reason of a read in a deal from `slot`, or None if the card is its own
        and new (does not record it)."""
        s = self.slots[slot]
        if serial != s[_SERIAL] or back != s[_BACK]:
            o = self.slots[1 - slot] if self.two_deck else None
            if o is not None and (o[_BACK] == back or o[_SERIAL] == serial):
                return "card_other_back"
            return "card_foreign"
        if card == _COVER:
            return "cover_card"
        if has(self.seen, card):
            return "card_duplicate"
        return None

    def accept(self, card):
        """Record a card of the round that classify() found good; returns the index of the
        byte of `seen` that changed."""
        put(self.seen, card)
        return card >> 3

    # passes (deck check, stub) -----------------------------------------------------------------
    def open_pass(self, kind, slot):
        self.p_kind = kind
        self.p_slot = slot
        _clear(self.p_mask)
        _clear(self.p_dup)
        self.p_n = 0
        while self.p_extra:  # in place: no allocation per pass
            self.p_extra.pop()
        self.p_extra_n = 0
        self.p_unread = 0
        self.p_plain = 0

    def _extra(self, text):
        self.p_extra_n += 1
        if len(self.p_extra) < _MAX_EXTRA:
            self.p_extra.append(text)

    # clause: rules:1.1-deck, rules:1.1-cover-last
    def pass_read(self, serial, back, card):
        """One card of the running pass. Returns True when the pass ended (the cover card)."""
        s = self.slots[self.p_slot]
        if serial != s[_SERIAL] or back != s[_BACK]:
            self._extra(code_name(serial, back, card))
            return False
        if card == _COVER:
            return True
        dup = has(self.p_mask, card) or (self.p_kind == "stub" and has(self.seen, card))
        if dup:
            put(self.p_dup, card)
        else:
            put(self.p_mask, card)
        if self.p_n < 53:
            self.p_order[self.p_n] = card
        self.p_n += 1
        return False

    def pass_reject(self, reason):
        if reason in R.READ_FORGED:
            self._extra("forged")
        else:
            self.p_unread += 1

    # clause: rules:1.1-deck, rules:1.1-cover-last, rules:3-stub-misdealt, rules:3-stub-deck-wrong
    def close_pass(self, cover=True):
        """End the running pass -> report dict (JSON-able). The caller acts on report['ok'].
        cover=False: the pass ended without the cover card (timeout)."""
        from shoe.cards import name

        kind = self.p_kind
        whole = bytearray(self.p_mask)
        if kind == "stub":
            for i in range(7):
                whole[i] |= self.seen[i]
        missing = [name(c) for c in members(whole, True)]
        dups = [name(c) for c in members(self.p_dup)]
        s = self.slots[self.p_slot]
        rep = {"deck": self.deck_id(self.p_slot), "back": s[_BACK], "missing": missing,
               "duplicate": dups,
               "extra": list(self.p_extra), "extra_count": self.p_extra_n,
               "unreadable": self.p_unread, "cover": cover}
        if kind == "stub":
            dealt = count(self.seen)
            rep["counts"] = {"dealt": dealt, "stub": self.p_n, "total": dealt + self.p_n}
            if not missing and not self.p_extra_n and dealt + self.p_n == 52 and cover:
                rep["ok"], rep["reason"] = True, None
            elif not missing and not self.p_extra_n and cover:
                rep["ok"], rep["reason"] = False, "stub_misdealt"
            else:
                rep["ok"], rep["reason"] = False, "stub_deck_wrong"
        else:
            rep["ok"] = not missing and not dups and not self.p_extra_n and cover
            if self.p_plain and self.tc[self.p_slot] is not None:
                rep["ok"] = False  # plain reads among authenticated tags (shoe.deck.tags)
                rep["plain_tags"] = self.p_plain
            s[_STATUS] = READY if rep["ok"] else OUT
            if rep["ok"]:
                s[_SINCE] = 0
        self.drop_pass()
        return rep

    def drop_pass(self):
        """End the running pass without a report (its round was void)."""
        self.p_kind = None
        self.p_slot = -1

    def stub_order(self):
        return self.p_order[: min(self.p_n, 53)]

    # state -------------------------------------------------------------------------------------
    def to_state(self):
        return {
            "two": self.two_deck, "slots": [None if s is None else list(s) for s in self.slots],
            "next": self.next, "seen": hexs(self.seen), "rslot": self.round_slot,
            "pk": self.p_kind, "ps": self.p_slot, "pm": hexs(self.p_mask), "pd": hexs(self.p_dup),
            "po": hexs(self.p_order[: min(self.p_n, 53)]), "pn": self.p_n,
            "px": list(self.p_extra), "pxn": self.p_extra_n, "pu": self.p_unread,
        }

    @classmethod
    def from_state(cls, st):
        lg = cls(st["two"])
        lg.slots = [None if s is None else list(s) for s in st["slots"]]
        lg.next = st["next"]
        lg.seen = unhex(st["seen"], 7)
        lg.round_slot = st["rslot"]
        lg.p_kind = st["pk"]
        lg.p_slot = st["ps"]
        lg.p_mask = unhex(st["pm"], 7)
        lg.p_dup = unhex(st["pd"], 7)
        po = unhex(st["po"])
        if len(po) > 53:
            raise ValueError("bad pass order in state")
        lg.p_order[: len(po)] = po
        lg.p_n = st["pn"]
        lg.p_extra = list(st["px"])
        lg.p_extra_n = st["pxn"]
        lg.p_unread = st["pu"]
        return lg
