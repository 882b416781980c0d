"""Authenticated RFID tags (NTAG 424 DNA): the SUN message a card's tag answers each read with,
and its check. Loaded when a deck is loaded on an RFID shoe (shoe.app: _prepare_tags), not at boot.

The tag's NDEF file (file 2) holds the card code and placeholders the tag fills in on every
unauthenticated read (Secure Dynamic Messaging, NT4H2421Gx 9.3): its UID, its read counter
SDMReadCtr (one more on every read) and SDMMAC, a MAC over the bytes from the code to the MAC
under a session key of the card's own key. The shoe reads 54 bytes from offset READ_AT:

    offset in the read  0             15 16          30 31    37 38              54
                        3A7FRAs1d52a21b x 04A1B2C3D4E5F6 x 00002A x 1F0C...(16 hex)
                        card code        UID (hex)        counter  SDMMAC = MACt(CMAC(Ks, bytes 0..37))
    Ks = CMAC(K1, 3C C3 00 01 00 80 || UID || counter, 3 bytes LSB first)     (NT4H2421Gx 9.3.9)
    K1 = AN10922(tag master, UID || "3A7FRAs" || 01)   tag master = HMAC-SHA256(card key, LABEL)[:16]

The key is the card's own (diversified from the shoe's card key with the UID and the code), so a
tag answers for one card only; a copy of its UID and memory cannot make the MAC of a new count,
and a recorded answer carries a count the shoe has seen (the deck ledger keeps the highest per
card: Ledger.tag_read). docs/hardware.md section 4 has the scheme, the file and the provisioning.

    kind, data, ctr = check(card_key, raw)   # raw: flags (1) + anticollision UID (7) + 54 bytes
    -> ("card", code, counter) or ("forged", "tag_mac", -1)
"""
from binascii import unhexlify
from micropython import const

from shoe.cmac import cmac, diversify, mact, subkeys
from shoe.crypto import equal, hmac_sha256

LABEL = b"shoe/ntag424/v1"   # the tag master key's derivation from the card key
FILE_NO = const(2)           # the NDEF file (ISO file E104, short file id 2)
READ_AT = const(9)           # where the card code starts in the file (after the NDEF header)
READ_LEN = const(54)         # what the shoe reads: code .. SDMMAC
UID_AT = const(16)           # in the read: the mirrored UID (14 hex digits)
CTR_AT = const(31)           # the mirrored SDMReadCtr (6 hex digits, MSB first)
MAC_AT = const(38)           # SDMMAC (16 hex digits); the MAC covers the read's bytes before it
KEY_APP = const(0)           # the tag's application master key (changes its settings)
KEY_SDM = const(1)           # SDMFileReadKey: the SUN's MAC
REPEAT = const(1)            # flags bit: the reader heard this UID a moment ago (shoe.drivers.rfid)
_SV2 = b"\x3c\xc3\x00\x01\x00\x80"

_master = [None, None, None]   # card key -> (tag master key, its CMAC subkeys), the last one


def master(ckey):
    """The tag master key (16 bytes) and its CMAC subkeys, derived from the card key."""
    if _master[0] != ckey:
        m = hmac_sha256(ckey, LABEL)[:16]
        _master[0] = ckey
        _master[1] = m
        _master[2] = subkeys(m)
    return _master[1], _master[2]


def tag_key(ckey, uid, body, keyno):
    """The tag's key `keyno` for the card whose code starts with `body` (7 bytes: "3A7FRAs"),
    from the shoe's card key."""
    m, ks = master(ckey)
    return diversify(m, bytes(uid) + bytes(body) + bytes((keyno,)), ks)


def sun_mac(key, uid, ctr, data):
    """SDMMAC (8 bytes) of `data` (the read's bytes before the MAC) for counter ctr."""
    ks = cmac(key, _SV2 + bytes(uid) + ctr.to_bytes(3, "little"))
    return mact(cmac(ks, data))


def _unhex(b):
    try:
        return unhexlify(b)
    except ValueError:
        return None


def check(key, raw):
    """raw = flags + the tag's UID from anticollision (7 bytes) + what it answered (READ_LEN).
    -> ("card", code (15 bytes), SDMReadCtr) when the SUN message is this tag's own, else
    ("forged", "tag_mac", -1): a tag that answers as an authenticated one and fails."""
    # clause: rules:3-card-forged
    if len(raw) != 8 + READ_LEN:
        return "forged", "tag_mac", -1
    uid = raw[1:8]
    d = raw[8:]
    # the mirrored UID and the separators need no check of their own: the MAC covers them, and
    # the key and the session vector are made from the UID the tag answered anticollision with,
    # so the message of another tag (another UID) fails the MAC
    ctr = _unhex(d[CTR_AT:CTR_AT + 6])
    mac = _unhex(d[MAC_AT:MAC_AT + 16])
    if ctr is None or mac is None:
        return "forged", "tag_mac", -1
    ctr = int.from_bytes(ctr, "big")
    k = tag_key(key, uid, d[:7], KEY_SDM)
    if not equal(sun_mac(k, uid, ctr, d[:MAC_AT]), mac):
        return "forged", "tag_mac", -1
    return "card", bytes(d[:15]), ctr
