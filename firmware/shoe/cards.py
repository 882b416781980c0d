"""Cards: the compact card id and the notation of rules.md.

    id = rank * 4 + suit          rank 0..12 = 2 3 4 5 6 7 8 9 T J Q K A
                                  suit 0..3  = c d h s
    +-----------+-------+
    | rank (4b) | suit  |        0 = 2c, 1 = 2d, ..., 50 = Ah, 51 = As
    +-----------+-------+        52 = the cover card (CV)

Red suits are d and h (suit 1 and 2). Parsing checks everything once at the boundary; the
evaluators downstream trust ids in range.
"""
from micropython import const
from shoe.errors import ShoeError

COVER = const(52)
RANKS = "23456789TJQKA"
SUITS = "cdhs"


class CardError(ShoeError):
    """A card name or id that is not a card. `reason` is a short code for reports."""

    reason = "bad_card"


def parse(text):
    """'As' -> 51, 'CV' -> 52. Raises CardError with the offending text."""
    if isinstance(text, str) and len(text) == 2:
        if text == "CV":
            return COVER
        r = RANKS.find(text[0])
        s = SUITS.find(text[1])
        if r >= 0 and s >= 0:
            return r * 4 + s
    raise CardError("not a card: %r (rank 23456789TJQKA + suit cdhs, e.g. 'As', 'Td')" % (text,))


def name(card):
    """51 -> 'As', 52 -> 'CV'."""
    if card == COVER:
        return "CV"
    if not 0 <= card < 52:
        raise CardError("card id out of range: %r" % (card,))
    return RANKS[card >> 2] + SUITS[card & 3]


def rank(card):
    return card >> 2


def suit(card):
    return card & 3


def parse_hand(names, count=None, what="hand"):
    """A list of card names -> list of ids; checks the count and duplicates inside the hand."""
    if not isinstance(names, (list, tuple)):
        raise CardError("%s must be a list of cards, got %r" % (what, names))
    if count is not None and len(names) != count:
        raise CardError("%s must have %d cards, got %d" % (what, count, len(names)), "card_count")
    ids = [parse(n) for n in names]
    for i in range(len(ids)):
        if ids[i] == COVER:
            raise CardError("%s contains the cover card" % what)
        if ids[i] in ids[:i]:
            raise CardError("%s has %s twice" % (what, names[i]), "duplicate_card")
    return ids


def names(ids):
    return [name(c) for c in ids]
