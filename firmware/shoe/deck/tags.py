"""The deck ledger's rules for authenticated RFID tags (NTAG 424 DNA, shoe/sun.py): a deck whose
check read its cards from such tags keeps, for the deck's life, the highest read counter each
card's tag answered with (Ledger.tc: 3 bytes a card, 159 a deck, in the ledger's snapshot, so
the journal keeps it across power cuts). A count at or below it is a recorded answer played
back by a copy (tag_replay); a plain read (a plain tag, a printed code) of such a deck's card is
a copy too (tag_plain). A deck of plain tags or printed codes is cloneable (the shoe's status).

    why, slot = tag_read(ledger, serial, back, card, ctr, repeat)
    add_state(ledger, d)  /  load_state(ledger, d)    # d: the ledger's to_state() dict

(The counters travel in the ledger's snapshot as "t0" / "t1" (hex; absent: a cloneable deck) and
"pp" (absent: 0), so a snapshot without authenticated tags is what it was before them. They are
kept out of ledger.py, whose source is at the size MicroPython can still compile in a 64 KB
heap: tests/firmware/table/mpy_hot.py.)
"""
from micropython import const

from shoe.deck.ledger import OUT, hexs, unhex

_COVER = const(52)
CTR_BYTES = const(159)   # 53 cards x a 3-byte read counter


def tag_read(lg, serial, back, card, ctr, repeat=False):
    """A read of a card against its deck's tags. ctr: the authenticated tag's read counter
    (shoe.sun.check), -1 for a plain read; repeat: the reader had just read this tag (its UID).
    -> (reason, slot). reason None: go on; "repeat": the tag read again with a fresh count (one
    card: drop the read); else why the read is forged (tag_replay, tag_plain). slot: the deck
    whose counter rose, or -1. The deck's check (its first pass) makes it an authenticated one
    with its first authenticated read; plain reads in the same check then fail it
    (Ledger.close_pass: plain_tags)."""
    # clause: rules:3-card-forged
    s = lg.slot_for(serial, back)
    if s < 0 or not 0 <= card <= _COVER:
        return ("repeat" if repeat else None), -1
    t = lg.tc[s]
    checking = lg.p_kind == "check" and lg.p_slot == s
    if ctr < 0:
        if t is not None:
            return "tag_plain", -1
        if checking:
            lg.p_plain += 1
        return None, -1
    if t is None:
        if not checking:   # a deck of plain tags: nothing to compare with
            return ("repeat" if repeat else None), -1
        t = lg.tc[s] = bytearray(CTR_BYTES)
    i = 3 * card
    if ctr <= int.from_bytes(t[i:i + 3], "big"):
        return "tag_replay", -1
    t[i:i + 3] = ctr.to_bytes(3, "big")
    return ("repeat" if repeat else None), s


def cloneable(lg):
    """Is a deck in play (loaded, not out) cloneable? None when no deck is in play."""
    out = None
    for i in (0, 1):
        s = lg.slots[i]
        if s is not None and s[2] != OUT:
            out = out or lg.tc[i] is None
    return out


def add_state(lg, d):
    """The counters into the ledger's snapshot dict d (Ledger.to_state())."""
    for i in (0, 1):
        if lg.tc[i] is not None:
            d["t%d" % i] = hexs(lg.tc[i])
    if lg.p_plain:
        d["pp"] = lg.p_plain


def load_state(lg, d):
    """... and back (a snapshot from before authenticated tags has none: cloneable decks)."""
    for i in (0, 1):
        x = d.get("t%d" % i)
        lg.tc[i] = None if x is None else unhex(x, CTR_BYTES)
    lg.p_plain = d.get("pp", 0)
