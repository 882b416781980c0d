"""Reading an authenticated card tag (NXP NTAG 424 DNA) as the shoe does it: ISO 14443-4 up
(RATS), the NDEF application selected, and one ISOReadBinary of the 54 bytes from the card code
to the SUN message's MAC (the layout and its check: shoe/sun.py; docs/hardware.md section 4).
Loaded when a deck is loaded (RFIDReader.prepare), not at boot.

    raw = read(dep, uid, flags)     # bytes: flags + UID + the 54 bytes, or None: an ISO 14443-4
                                    # tag that is not a card's (its status word in dep.sw)
    kind, raw = read_tag(reader, uid)   # for RFIDReader: ("tag", raw) or ("garbled", sw)
"""
from shoe.sun import FILE_NO, READ_AT, READ_LEN

_SELECT = b"\x00\xa4\x04\x0c\x07\xd2\x76\x00\x00\x85\x01\x01\x00"   # the NDEF application
_READ = bytes((0x00, 0xB0, 0x80 | FILE_NO, READ_AT, READ_LEN))      # ISOReadBinary, file 2
_OK = b"\x90\x00"


def read(dep, uid, flags):
    dep.rats()
    n = dep.apdu(_SELECT, 5)
    rx = dep.rx
    if n != 2 or rx[2:4] != _OK:
        dep.sw = bytes(rx[2 + n - 2:2 + n]) if n >= 2 else b""
        return None
    n = dep.apdu(_READ, READ_LEN + 5)
    if n != READ_LEN + 2 or rx[2 + READ_LEN:4 + READ_LEN] != _OK:
        dep.sw = bytes(rx[2 + n - 2:2 + n]) if n >= 2 else b""
        return None
    return bytes((flags,)) + bytes(uid) + bytes(rx[2:2 + READ_LEN])


def read_tag(rd, uid):
    """The RFIDReader's read of an NTAG 424 DNA it selected -> ("tag", raw) (flagged REPEAT if
    the reader had just read this UID) or ("garbled", status word). RFIDError on the air."""
    if rd.dep is None:
        from shoe.drivers.isodep import IsoDep

        rd.dep = IsoDep(rd.chip)
    raw = read(rd.dep, uid, 1 if uid == rd._last_uid else 0)
    if raw is None:
        return "garbled", rd.dep.sw
    return "tag", raw
