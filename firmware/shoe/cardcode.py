"""Card codes (interfaces.md section 1): what an optical code or an RFID tag carries.

    DDDD B CC MMMMMMMM   (15 ASCII characters, no spaces)   e.g. 3A7FRAs1d52a21b
    |    | |  +-- first 8 lower-case hex digits of HMAC-SHA256(card key, "DDDDBCC")
    |    | +----- card in rules.md notation, or CV for the cover card
    |    +------- back colour, R or B
    +------------ deck serial, 4 upper-case hex digits

`CardCodes(key).parse(raw)` returns (serial, back, card id) or raises CodeError with a reason:
`code_format` (wrong length, alphabet or card), `code_mac` (authentication failed: forged or
foreign). The key is injected (provisioned per casino), never built in.

A code that passed its HMAC is remembered for its deck (its 8 MAC digits, 431 bytes a deck, at
most _DECKS decks: the deck check reads every card once): a later read of the same code is
checked by comparing its MAC digits with the verified ones, in constant time, instead of an
HMAC and a full parse. Any other code takes the full check.
"""
from shoe.errors import ShoeError
from shoe import cards
from shoe.crypto import hmac_sha256, equal
from micropython import const

CODE_LEN = const(15)
_DECKS = const(4)        # decks whose verified codes are remembered (two-deck mode: 2)
_HEX_UP = b"0123456789ABCDEF"
_RANKS = b"23456789TJQKA"
_SUITS = b"cdhs"
_HEX_LO = b"0123456789abcdef"


class CodeError(ShoeError):
    pass


def _unhex_lower(b):
    out = bytearray(len(b) // 2)
    for i in range(len(out)):
        hi = _HEX_LO.find(b[2 * i : 2 * i + 1])
        lo = _HEX_LO.find(b[2 * i + 1 : 2 * i + 2])
        if hi < 0 or lo < 0:
            return None
        out[i] = hi * 16 + lo
    return out


class CardCodes:
    """Parses and makes card codes with one card key."""

    def __init__(self, key):
        if not key:
            raise ValueError("card key must not be empty")
        self._key = bytes(key)
        self._known = {}    # b"DDDDB" -> [serial, back, MAC digits of each card (8 bytes
        #                     a card, 53 cards), bitmap of the cards whose digits are verified]

    def _remembered(self, raw):
        """(serial, back, card) if `raw` is a code already verified, else None."""
        d = self._known.get(raw[:5])
        if d is None:
            return None
        r = _RANKS.find(raw[5:6])
        s = _SUITS.find(raw[6:7])
        c = r * 4 + s if r >= 0 and s >= 0 else (52 if raw[5:7] == b"CV" else -1)
        if c < 0:
            return None
        if not (d[3][c >> 3] >> (c & 7)) & 1 or not equal(d[2][8 * c:8 * c + 8], raw[7:]):
            return None
        return d[0], d[1], c

    def _remember(self, raw, serial, back, card):
        d = self._known.get(raw[:5])
        if d is None:
            if len(self._known) >= _DECKS:
                self._known.clear()
            d = self._known[bytes(raw[:5])] = [serial, back, bytearray(8 * 53), bytearray(7)]
        d[2][8 * card:8 * card + 8] = raw[7:]
        d[3][card >> 3] |= 1 << (card & 7)

    def mac(self, body):
        return hmac_sha256(self._key, body)[:4]

    def make(self, serial, back, card):
        """Host/world side: the code printed on a card (str)."""
        body = ("%04X%s%s" % (serial, back, cards.name(card))).encode()
        return (body + "".join("%02x" % x for x in self.mac(body)).encode()).decode()

    # clause: rules:3-card-forged
    def parse(self, raw):
        """raw: bytes or str, surrounding whitespace ignored. -> (serial, back, card)."""
        if isinstance(raw, str):
            raw = raw.encode()
        elif not isinstance(raw, bytes):
            raw = bytes(raw)
        if len(raw) != CODE_LEN or raw[0] <= 32 or raw[-1] <= 32:
            raw = raw.strip()
        if len(raw) != CODE_LEN:
            raise CodeError("code has %d characters, expected 15" % len(raw), "code_format")
        got = self._remembered(raw)
        if got is not None:
            return got
        serial = 0
        for i in range(4):
            d = _HEX_UP.find(raw[i : i + 1])
            if d < 0:
                raise CodeError("deck serial is not 4 upper-case hex digits", "code_format")
            serial = serial * 16 + d
        back = raw[4:5]
        if back != b"R" and back != b"B":
            raise CodeError("back colour must be R or B", "code_format")
        try:
            card = cards.parse(raw[5:7].decode())
        except (cards.CardError, UnicodeError):
            raise CodeError("card field is not a card", "code_format")
        mac = _unhex_lower(raw[7:15])
        if mac is None:
            raise CodeError("MAC is not 8 lower-case hex digits", "code_format")
        if not equal(mac, self.mac(raw[:7])):
            raise CodeError("MAC does not match the card key (forged or foreign card)", "code_mac")
        back = back.decode()
        self._remember(raw, serial, back, card)
        return serial, back, card
