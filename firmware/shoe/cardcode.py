"""Card codes (interfaces.md section 1): what an optical code or an RFID tag carries.

    DDDD B CC MMMMMMMM   (15 ASCII characters, no spaces)   e.g. 3A7FRAs1d52a21b
    |    | |  +-- first 8 lower-case hex digits of HMAC-SHA256(card key, "DDDDBCC")
    |    | +----- card in rules.md notation, or CV for the cover card
    |    +------- back colour, R or B
    +------------ deck serial, 4 upper-case hex digits

`CardCodes(key).parse(raw)` returns (serial, back, card id) or raises CodeError with a reason:
`code_format` (wrong length, alphabet or card), `code_mac` (authentication failed: forged or
foreign). The key is injected (provisioned per casino), never built in.
"""
from shoe import cards
from shoe.crypto import hmac_sha256, equal
from micropython import const

CODE_LEN = const(15)
_HEX_UP = b"0123456789ABCDEF"
_HEX_LO = b"0123456789abcdef"


class CodeError(ValueError):
    def __init__(self, message, reason):
        super().__init__(message)
        self.reason = reason


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

    def mac(self, body):
        return hmac_sha256(self._key, body)[:4]

    def make(self, serial, back, card):
        """Host/world side: the code printed on a card (str)."""
        body = ("%04X%s%s" % (serial, back, cards.name(card))).encode()
        return (body + "".join("%02x" % x for x in self.mac(body)).encode()).decode()

    def parse(self, raw):
        """raw: bytes or str, surrounding whitespace ignored. -> (serial, back, card)."""
        if isinstance(raw, str):
            raw = raw.encode()
        raw = raw.strip()
        if len(raw) != CODE_LEN:
            raise CodeError("code has %d characters, expected 15" % len(raw), "code_format")
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
        return serial, back.decode(), card
