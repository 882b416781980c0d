"""MicroPython: the RFID reader with authenticated tags (NTAG 424 DNA, ISO 14443-4) against the
register-level chip model (tests/fakes/mfrc522_chip.py, IsoTag) and the simulated tag
(host_tools/sim/ntag424.py), written by the real provisioning code on the host (argv[1]: the
deck's tags, {code: spec}; argv[2]: the card key, hex).

Run by tests/firmware/drivers/test_rfid_auth.py: one pytest test per check.
"""

import json
import sys

import machine
from iso_tag import AirClock, IsoTag
from mfrc522_chip import MFRC522Chip, Tag, with_crc
from mpycheck import run
from ntag424 import Ntag424
from shoe.drivers.mfrc522 import MFRC522
from shoe.drivers.rfid import RFIDReader
from shoe import sun

with open(sys.argv[1]) as f:
    SPECS = json.load(f)
KEY = bytes.fromhex(sys.argv[2])
CODES = sorted(SPECS)
PLAIN = b"3A7FRAs1d52a21b"


def tag(i=0, **kw):
    s = SPECS[CODES[i]]
    return IsoTag(bytes.fromhex(s["uid"]), Ntag424.from_spec(s), **kw), CODES[i].encode()


def rig(tags=None):
    cs = machine.Pin(17, machine.Pin.OUT, value=1)
    chip = MFRC522Chip(cs=cs, tags=tags)
    spi = machine.SPI(0, device=chip)
    return chip, MFRC522(spi, cs), cs


def out(name, **kw):
    kw["check"] = name
    print(json.dumps(kw))


def firsts(chip):
    return [f[0][0] if f[0] else None for f in chip.frames]


def check_auth_read():
    t, code = tag(0)
    field = [t]
    chip, drv, cs = rig(field)
    rd = RFIDReader(drv, absent_polls=2)
    kind, raw = rd.poll()
    assert kind == "tag", (kind, raw)
    assert raw[0] == 0 and raw[1:8] == t.uid and len(raw) == 8 + sun.READ_LEN
    got = sun.check(KEY, raw)
    assert got[0] == "card" and got[1] == code, got
    n = got[2]
    # on the air: REQA, two cascade levels, RATS, I(SELECT), I(ISOReadBinary)
    assert firsts(chip) == [0x26, 0x93, 0x93, 0x95, 0x95, 0xE0, 0x02, 0x03], firsts(chip)
    assert t.blocks == [
        b"\x00\xa4\x04\x0c\x07\xd2\x76\x00\x00\x85\x01\x01\x00",
        bytes((0x00, 0xB0, 0x82, sun.READ_AT, sun.READ_LEN)),
    ]
    # ISO 14443-4 timing: the I-blocks wait up to the tag's FWT (ATS FWI 7: 38.7 ms)
    assert 38000 <= chip.timeouts[-1][1] <= 40000, chip.timeouts[-1]
    assert t.state == Tag.PROTOCOL  # returned before its deselect: that comes with the next poll
    del chip.frames[:]
    assert rd.poll() is None
    assert chip.frames[0][0] == with_crc(b"\xc2") and t.state == Tag.HALT, chip.frames
    for _ in range(3):  # deselected: it answers no REQA, and costs an empty field's poll
        assert rd.poll() is None
    assert firsts(chip)[1:] == [0x26] * 4, firsts(chip)
    # a second read of the same tag (after it left the field): a new count
    field.clear()
    t.power_off()
    rd._last_uid = None
    field.append(t)
    kind, raw = rd.poll()
    assert kind == "tag" and raw[0] == 0 and sun.check(KEY, raw)[2] == n + 1
    out("auth_read", counter=n, frames=len(chip.frames), counts=rd.counts)


def check_repeat_is_read_again():
    """A plain tag heard again within hold_ms is dropped by its UID; an authenticated one is
    read again and flagged REPEAT (only its fresh count can tell it from a copy)."""
    t, code = tag(1)
    field = [t]
    chip, drv, cs = rig(field)
    T = [0]
    rd = RFIDReader(drv, absent_polls=2, hold_ms=300, ticks=lambda: T[0])
    kind, raw = rd.poll()
    n = sun.check(KEY, raw)[2]
    T[0] += 100
    t.power_off()  # its deselect lost, or a flicker at the edge of the field
    kind, raw = rd.poll()
    assert kind == "tag" and raw[0] & sun.REPEAT, (kind, raw)
    assert sun.check(KEY, raw) == ("card", code, n + 1)
    assert rd.counts["card"] == 1 and rd.counts["duplicate"] == 1, rd.counts
    # a copy with its UID and a recorded answer, in the field right after it: read, flagged
    T[0] += 100
    field[0] = IsoTag(t.uid, t.app.cloned())
    kind, raw = rd.poll()
    assert kind == "tag" and raw[0] & sun.REPEAT
    assert sun.check(KEY, raw) == ("card", code, n + 1)  # the ledger sees the count again
    out("repeat", counts=rd.counts)


def check_copies():
    """Copies of an authenticated tag in the shoe's field: a recorded answer replayed (the MAC
    verifies, the count is one seen: the ledger's to catch), a plain NTAG21x with the code and
    UID copied (a plain read: the ledger's tag_plain), an emulator with the UID and no key (its
    MAC fails here: tag_mac)."""
    t, code = tag(2)
    chip, drv, cs = rig([t])
    kind, raw = RFIDReader(drv).poll()
    n = sun.check(KEY, raw)[2]
    replay = IsoTag(t.uid, t.app.cloned())
    chip, drv, cs = rig([replay])
    kind, raw2 = RFIDReader(drv).poll()
    assert kind == "tag" and raw2 == raw and sun.check(KEY, raw2) == ("card", code, n)
    plain = Tag.with_code(t.uid, code)
    chip, drv, cs = rig([plain])
    assert RFIDReader(drv).poll() == ("card", code)
    spec = dict(SPECS[CODES[2]])
    spec["sdm"] = dict(spec["sdm"], key="00" * 16)
    emu = IsoTag(t.uid, Ntag424.from_spec(spec))
    chip, drv, cs = rig([emu])
    kind, raw3 = RFIDReader(drv).poll()
    assert kind == "tag" and sun.check(KEY, raw3) == ("forged", "tag_mac", -1)
    out("copies", ok=True)


def check_recovery():
    """ISO 14443-4 error recovery: a lost answer (R(NAK): the tag repeats it), a block the tag
    missed (R(NAK) -> R(ACK): the block again), S(WTX), a broken CRC; then faults the reader
    does not recover inside the poll, read on a later try (the tag deselected, woken with WUPA)."""
    res = {}
    for fault in ("lose_answer", "lose_block", "wtx", "crc_answer"):
        t, code = tag(3, fault=fault, fault_times=1)
        chip, drv, cs = rig([t])
        rd = RFIDReader(drv)
        kind, raw = rd.poll()
        assert kind == "tag" and sun.check(KEY, raw)[1] == code, (fault, kind, raw)
        assert rd.counts["retry"] == 0, (fault, rd.counts)
        res[fault] = [hex(x) for x in firsts(chip)[5:]]
    assert res["lose_answer"][:4] == ["0xe0", "0x2", "0xb2", "0x3"], res
    assert res["lose_block"][:5] == ["0xe0", "0x2", "0xb2", "0x2", "0x3"], res
    assert res["wtx"][:4] == ["0xe0", "0x2", "0xf2", "0x3"], res
    for fault, n in (("mute_rats", 1), ("chaining", 1), ("deaf", 3)):
        t, code = tag(3, fault=fault, fault_times=n)
        chip, drv, cs = rig([t])
        rd = RFIDReader(drv, tries=3)
        kind, raw = rd.poll()
        assert kind == "tag" and sun.check(KEY, raw)[1] == code, (fault, kind)
        assert rd.counts["retry"] == 1, (fault, rd.counts)
        # the failed try's tag is deselected (it answers no WUPA in ISO 14443-4), then woken
        f = firsts(chip)
        assert 0xC2 in f and f.index(0x52) > f.index(0xC2), (fault, f)
    # a tag that goes deaf in ISO 14443-4 (and so stays in it: WUPA means nothing there) is
    # silent to the next polls: one noread once the field has been silent for absent_polls
    t, code = tag(3, fault="deaf")
    chip, drv, cs = rig([t])
    rd = RFIDReader(drv, fail_polls=3, absent_polls=2)
    got = [rd.poll() for _ in range(5)]
    assert got == [None, None, ("noread", b""), None, None], got
    out("recovery", frames=res)


def check_not_a_card():
    """An ISO 14443-4 tag that has no NDEF application of ours (a payment card, a blank
    DESFire): garbled, with its status word."""

    class App:
        def apply(self, apdu):
            return b"\x6a\x82"

        def reset(self):
            pass

    chip, drv, cs = rig([IsoTag(b"\x04\x01\x02\x03\x04\x05\x06", App())])
    assert RFIDReader(drv).poll() == ("garbled", b"\x6a\x82")
    out("not_a_card", ok=True)


def check_mixed_field_and_no_alloc():
    """Plain and authenticated tags one after another; the empty field after an authenticated
    tag was deselected polls without allocating."""
    import micropython

    field = []
    chip, drv, cs = rig(field)
    rd = RFIDReader(drv, absent_polls=2)
    seen = []
    for i in range(6):
        if i % 2:
            t = Tag.with_code(bytes((4, i, 2, 3, 4, 5, 6)), PLAIN)
        else:
            t, _ = tag(4 + i)
        field.append(t)
        r = rd.poll()
        seen.append(r[0])
        field.clear()
        assert rd.poll() is None and rd.poll() is None  # deselect / halt, then absent
    assert seen == ["tag", "card"] * 3, seen
    chip.record = False

    class Discard:
        def append(self, v):
            pass

        def clear(self):
            pass

    cs.history = Discard()
    micropython.heap_lock()
    try:
        for _ in range(20):
            r = rd.poll()
    finally:
        micropython.heap_unlock()
    assert r is None
    out("mixed_field", seen=seen)


def check_guard_times():
    """After the ATS the reader keeps the tag's SFGT (SFGI 1: 604 us) before its first block;
    the frame after a DESELECT waits until its 1 ms answer window is over."""
    import shoe.drivers.mfrc522 as m
    import shoe.drivers.isodep as d

    clk = AirClock()
    real = m.time, d.time
    m.time = d.time = clk
    try:
        t, code = tag(5)
        chip, drv, cs = rig([t])
        rd = RFIDReader(drv)
        kind, raw = rd.poll()
        assert kind == "tag"
        assert 604 in [s - 100 for s in clk.sleeps], clk.sleeps
        del clk.sleeps[:]
        rd.poll()  # DESELECT, then REQA
        assert clk.sleeps[0] >= 1200, clk.sleeps
    finally:
        m.time, d.time = real
    out("guard_times", ok=True)


run(
    [
        check_auth_read,
        check_repeat_is_read_again,
        check_copies,
        check_recovery,
        check_not_a_card,
        check_mixed_field_and_no_alloc,
        check_guard_times,
    ]
)
