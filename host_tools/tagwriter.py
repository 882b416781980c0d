"""Writing a deck's authenticated RFID tags (NTAG 424 DNA) from the laptop: `shoectl tags`.

Each card's tag gets, through a writer (a contactless reader that sends APDUs to one tag at a
time), what the shoe checks on every read (shoe/sun.py, docs/hardware.md section 4):

    1. ISOSelectFile of the NDEF application, AuthenticateEV2First with key 0 (a blank tag's
       factory key: 16 zero bytes; a tag already written is refused)
    2. WriteData file 2: the NDEF text record "<card code>x<UID>x<counter>x<SDMMAC>" with
       placeholders (ndef_file), and the capability container marked read-only for phones
    3. ChangeFileSettings file 2 (CommMode.Full): SDM on, UID and SDMReadCtr mirrored in ASCII,
       SDMMAC from the card code to the MAC under key 1; read free, write and change key 0
    4. ChangeKey 1..4 then key 0 (CommMode.Full): the card's own keys, diversified from the
       shoe's card key with the tag's UID and the card (shoe.sun.tag_key, AN10922)
    5. a read as the shoe does it, checked with the shoe's own code (shoe.sun.check)

    w = writer("sim", count=53)              # or a real one (not in this build: see open_writer)
    for tag, card in zip(w.tags(), cards):   # tag.uid, tag.transceive(apdu) -> response
        provision(tag, code, card_key)
"""

import json
import os
from pathlib import Path

from host_tools.errors import ShoeError
from shoe import sun

APP = b"\x00\xa4\x04\x0c\x07\xd2\x76\x00\x00\x85\x01\x01\x00"  # ISOSelectFile, DF name, no FCI
_ZERO = bytes(16)
_SETTINGS = (
    0x40,  # FileOption: SDM on, CommMode.Plain
    0x00,
    0xE0,  # access rights: ReadWrite 0, Change 0 / Read free, Write 0
    0xC1,  # SDMOptions: UID, SDMReadCtr, ASCII
    0xFF,
    0xE0 | sun.KEY_SDM,
)  # SDMCtrRet none / SDMMetaRead plain, SDMFileRead key 1


class TagError(ShoeError):
    pass


def ndef_file(code):
    """File 2's static content: an NDEF message of one text record holding the card code and
    the placeholders the tag fills in on each read (offsets: shoe.sun)."""
    code = code.encode() if isinstance(code, str) else bytes(code)
    if len(code) != 15:
        raise ValueError("a card code has 15 characters")
    text = code + b"x" + b"0" * 14 + b"x" + b"0" * 6 + b"x" + b"0" * 16
    payload = b"\x02en" + text
    record = b"\xd1\x01" + bytes((len(payload),)) + b"T" + payload
    out = len(record).to_bytes(2, "big") + record
    if out[sun.READ_AT : sun.READ_AT + 15] != code or len(text) != sun.READ_LEN:
        raise AssertionError("the NDEF layout does not match shoe.sun's offsets")
    return out


def sdm_settings():
    """ChangeFileSettings' data for file 2 (Table 69): SDM with the offsets of shoe.sun."""
    at = sun.READ_AT
    offsets = (at + sun.UID_AT, at + sun.CTR_AT, at, at + sun.MAC_AT)  # UID, ctr, MAC in, MAC
    return bytes(_SETTINGS) + b"".join(o.to_bytes(3, "little") for o in offsets)


def _sw(resp):
    return bytes(resp[-2:]) if len(resp) >= 2 else b""


def _expect(resp, ok, what):
    if _sw(resp) != ok:
        raise TagError(
            "%s: the tag answered %s" % (what, bytes(resp[-2:]).hex().upper() or "nothing")
        )
    return bytes(resp[:-2])


def _native(ins, data=b""):
    return (
        bytes((0x90, ins, 0, 0)) + (bytes((len(data),)) + bytes(data) if data else b"") + b"\x00"
    )


def authenticate(tag, keyno, key, rng=os.urandom):
    """AuthenticateEV2First -> an ev2.Session. TagError if the tag refuses the key."""
    from host_tools import ev2
    from shoe.cmac import cbc, cbc_decrypt

    r = tag.transceive(_native(0x71, bytes((keyno, 0))))
    if _sw(r) != b"\x91\xaf" or len(r) != 18:
        raise TagError(
            "AuthenticateEV2First with key %d: the tag answered %s"
            % (keyno, bytes(r[-2:]).hex().upper())
        )
    rnd_b = cbc_decrypt(key, bytes(r[:16]))
    rnd_a = rng(16)
    r = tag.transceive(_native(0xAF, cbc(key, rnd_a + ev2.rotl(rnd_b))))
    if _sw(r) != b"\x91\x00" or len(r) != 34:
        raise TagError(
            "key %d is not this tag's (authentication refused: %s)"
            % (keyno, bytes(r[-2:]).hex().upper())
        )
    plain = cbc_decrypt(key, bytes(r[:32]))
    if plain[4:20] != ev2.rotl(rnd_a):
        raise TagError("the tag's authentication answer is wrong (RndA')")
    enc, mac = ev2.session_keys(key, rnd_a, rnd_b)
    return ev2.Session(enc, mac, plain[:4])


def _full(tag, s, ins, header, data, what):
    r = tag.transceive(_native(ins, s.command(ins, header, data)))
    body = _expect(r, b"\x91\x00", what)
    s.response(0, body)


def provision(tag, code, card_key, rng=os.urandom):
    """Write one card's tag (steps 1-5 of the module's docstring). -> its SDMReadCtr after the
    check read. TagError when the tag refuses a step (a tag already written: key 0 refused)."""
    from host_tools import ev2

    code = code.encode() if isinstance(code, str) else bytes(code)
    uid = bytes(tag.uid)
    if len(uid) != 7:
        raise TagError("not an NTAG 424 DNA: a %d-byte UID" % len(uid))
    _expect(tag.transceive(APP), b"\x90\x00", "selecting the NDEF application")
    s = authenticate(tag, 0, _ZERO, rng)
    ndef = ndef_file(code)
    # WriteData in CommMode.Plain (the file's mode): the command counter still moves
    head = bytes((sun.FILE_NO,)) + (0).to_bytes(3, "little") + len(ndef).to_bytes(3, "little")
    _expect(tag.transceive(_native(0x8D, head + ndef)), b"\x91\x00", "writing the NDEF file")
    s.ctr += 1
    cc = bytes((1,)) + (14).to_bytes(3, "little") + (1).to_bytes(3, "little") + b"\xff"
    _expect(tag.transceive(_native(0x8D, cc)), b"\x91\x00", "marking the capability container")
    s.ctr += 1
    _full(tag, s, 0x5F, bytes((sun.FILE_NO,)), sdm_settings(), "changing file 2's settings")
    body = code[:7]
    for keyno in (1, 2, 3, 4, 0):
        new = sun.tag_key(card_key, uid, body, keyno)
        data = ev2.change_key_data(keyno, 0, _ZERO, new, 1)
        r = tag.transceive(_native(0xC4, s.command(0xC4, bytes((keyno,)), data)))
        if keyno:
            s.response(0, _expect(r, b"\x91\x00", "changing key %d" % keyno))
        else:  # key 0 ends the session: no MAC comes back
            _expect(r, b"\x91\x00", "changing key 0")
    tag.reset()
    kind, got, ctr = check(tag, card_key)
    if kind != "card" or got != code:
        raise TagError("the written tag does not read back as %s" % code.decode())
    return ctr


def read(tag):
    """A read as the shoe makes it (a new activation, the application, ISOReadBinary of file 2)
    -> the shoe's raw result: flags + UID + the bytes read."""
    tag.reset()
    _expect(tag.transceive(APP), b"\x90\x00", "selecting the NDEF application")
    r = tag.transceive(bytes((0x00, 0xB0, 0x80 | sun.FILE_NO, sun.READ_AT, sun.READ_LEN)))
    data = _expect(r, b"\x90\x00", "reading the NDEF file")
    return bytes((0,)) + bytes(tag.uid) + data


def check(tag, card_key):
    """Read a tag and check it as the shoe does -> shoe.sun.check's (kind, code, counter)."""
    return sun.check(card_key, read(tag))


# -- writers -------------------------------------------------------------------------------
class SimTag:
    """A simulated tag on the simulated writer (host_tools/sim/ntag424.py)."""

    def __init__(self, model):
        self.model = model
        self.uid = model.uid

    def transceive(self, apdu):
        return self.model.apply(apdu)

    def reset(self):
        self.model.reset()


class SimWriter:
    """A stack of blank simulated tags, presented one after another. save() writes their state
    (host_tools/sim/ntag424.py spec()) for the fake reader chip and the emulated Pico."""

    def __init__(self, count=53, rng=os.urandom, path=None):
        from host_tools.sim.ntag424 import Ntag424

        self.path = path
        self.models = [Ntag424(b"\x04" + rng(6), rng=rng) for _ in range(count)]

    @classmethod
    def load(cls, doc):
        """The tags of a --sim-tags file ({code: spec}), as they read."""
        from host_tools.sim.ntag424 import Ntag424

        w = cls(0)
        w.models = [Ntag424.from_spec(spec) for spec in doc.values()]
        return w

    def tags(self):
        for m in self.models:
            yield SimTag(m)

    def save(self, cards):
        """cards: [(code, model)] -> the file of --sim-tags: {code: spec} (spec(): what the
        fake chip's and the emulated Pico's tag models need)."""
        if self.path:
            Path(self.path).write_text(json.dumps({c: m.spec() for c, m in cards}, indent=1))


def simulated_deck(card_key, serial=0x3A7F, back="R", count=53, path=None):
    """A deck of simulated tags written as `shoectl tags provision --writer sim` writes them
    (cards by id, then the cover card) -> {code: spec}; path: also saved there."""
    from shoe.cardcode import CardCodes

    codes = CardCodes(card_key)
    w = SimWriter(count, path=path)
    done = []
    for i, tag in enumerate(w.tags()):
        code = codes.make(serial, back, i % 53)
        provision(tag, code, card_key)
        done.append((code, tag.model))
    w.save(done)
    return {c: m.spec() for c, m in done}


def open_writer(url, count, path=None):
    """--writer: "sim" (simulated tags); a real writer is a PC/SC contactless reader, which
    this build does not drive (docs/hardware.md section 4, "Writing the tags")."""
    if url == "sim":
        return SimWriter(count, path=path)
    if url.startswith("pcsc"):
        raise ShoeError(
            "PC/SC writers are not supported by this build: the tags can be written "
            "by any PC/SC reader that passes ISO 7816 APDUs to an ISO 14443-4 tag "
            "(e.g. an ACR1252U) with a driver for host_tools/tagwriter.py's "
            "transceive(); see docs/hardware.md section 4"
        )
    raise ShoeError("--writer must be 'sim' (or pcsc:NAME, not in this build), not %r" % url)
