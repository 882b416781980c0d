"""MicroPython: the MFRC522 driver and the RFID reader against the register-level chip model.

Run by tests/firmware/drivers/test_rfid.py (MICROPYPATH = tests/fakes, tests/mpylib, firmware):
every check runs (mpycheck.run), each reports its own JSON line, pytest has one test per check.
"""

import asyncio
import json
import sys

import machine
from iso_tag import AirClock
from mfrc522_chip import MFRC522Chip, Tag, crc_a, with_crc
from mpycheck import run
from shoe.drivers.mfrc522 import MFRC522, RFIDError, crc_a as driver_crc
from shoe.drivers.rfid import RFIDReader

CODE = b"3A7FRAs1d52a21b"
UID7 = b"\x04\x11\x22\x33\x44\x55\x66"
# 0x88 as its 4th byte: the cascade tag's value, a UID byte at the last level (the rig's
# random tag UIDs had it 1 time in 256: the driver took it for a cascade tag and lost a byte)
UID7_88 = b"\x04\x11\x22\x88\x44\x55\x66"
UID4 = b"\xde\xad\xbe\xef"


def rig(tags=None, version=0x92):
    cs = machine.Pin(17, machine.Pin.OUT, value=1)
    chip = MFRC522Chip(version=version, cs=cs, tags=tags)
    spi = machine.SPI(0, device=chip)
    drv = MFRC522(spi, cs)
    return chip, drv, cs


def reason_of(fn, *a):
    try:
        fn(*a)
    except RFIDError as e:
        return e.reason
    return None


def out(name, **kw):
    kw["check"] = name
    print(json.dumps(kw))


def check_crc_vector():
    # HLTA 50 00 is sent as 50 00 57 CD (ISO 14443-3 worked example)
    assert crc_a(b"\x50\x00") == (0x57, 0xCD)
    c = driver_crc(b"\x50\x00", 0, 2)
    assert (c & 0xFF, c >> 8) == (0x57, 0xCD)
    # the driver's CRC_A equals the model's on any data, and is 0 over data + its CRC_A
    for n in (1, 2, 7, 16):
        data = bytes((i * 37 + n) & 0xFF for i in range(n))
        c = driver_crc(data, 0, n)
        assert (c & 0xFF, c >> 8) == crc_a(data), n
        assert driver_crc(with_crc(data), 0, n + 2) == 0
    out("crc_vector", ok=True)


def check_init():
    chip, drv, cs = rig()
    v = drv.init()
    assert v == 0x92 and chip.antenna_on()
    assert chip.regs[0x11] & 0x03 == 0x01  # CRC preset 6363
    assert cs.value() == 1  # CS released after every access
    chip.dead = True
    assert reason_of(drv.init) == "rfid_no_chip"
    out("init", version=v)


def check_select_and_read(uid):
    tag = Tag.with_code(uid, CODE)
    chip, drv, cs = rig([tag])
    drv.init()
    assert drv.request() in (b"\x44\x00", b"\x04\x00")
    got = drv.select()
    assert got == uid, got
    buf = bytearray(16)
    drv.read_pages(4, buf)
    assert bytes(buf[:15]) == CODE and buf[15] == 0
    drv.halt()
    assert tag.state == Tag.HALT
    assert drv.request() is None  # REQA does not wake a halted tag
    assert drv.request(wake=True) is not None  # WUPA does
    # the frames on the air: READ 30 04 + CRC_A
    assert (with_crc(b"\x30\x04"), 0) in chip.frames
    # the timer (TAuto) bounds silence: ~0.2 ms where ISO 14443-3 fixes the tag's frame delay
    # (REQA/WUPA, ANTICOLLISION, SELECT) and for HLTA (an empty field is the common case and
    # the CPU waits for it), 5 ms for READ (NTAG21x READ timeout)
    for first, t in chip.timeouts:
        if first in (0x26, 0x52, 0x50, 0x93, 0x95):
            assert 100 <= t <= 400, (first, t)
        else:
            assert 2000 <= t <= 10000, (first, t)
    out("select_read", uid_len=len(uid))


def check_faults():
    results = {}
    for fault in ("crc", "silent", "short", "parity", "nak", "bcc", "sak_crc"):
        tag = Tag.with_code(UID7, CODE, fault=fault)
        chip, drv, cs = rig([tag])
        drv.init()
        buf = bytearray(16)
        r = None
        try:
            drv.request()
            drv.select()
            drv.read_pages(4, buf)
        except RFIDError as e:
            r = e.reason
        results[fault] = r
    assert results == {
        "crc": "rfid_crc",
        "silent": "rfid_timeout",
        "short": "rfid_length",
        "parity": "rfid_parity",
        "nak": "rfid_nak",
        "bcc": "rfid_bcc",
        "sak_crc": "rfid_crc",
    }, results
    # two tags at once: ATQA agrees, anticollision collides
    other = b"\x04\x99\x88\x77\x66\x55\x44"
    chip, drv, cs = rig([Tag.with_code(UID7, CODE), Tag.with_code(other, CODE)])
    drv.init()
    assert drv.request() is not None
    assert reason_of(drv.select) == "rfid_collision"
    # empty field: no tag is not an error
    chip, drv, cs = rig([])
    drv.init()
    assert drv.request() is None
    assert reason_of(drv.select) == "rfid_timeout"
    out("faults", reasons=results)


def check_reader_dedup():
    tag = Tag.with_code(UID7, CODE)
    field = []
    chip, drv, cs = rig(field)
    T = [0]
    rd = RFIDReader(drv, absent_polls=2, hold_ms=300, ticks=lambda: T[0])
    assert rd.poll() is None  # empty field
    field.append(tag)
    assert rd.poll() == ("card", CODE)
    assert tag.state == Tag.ACTIVE  # returned before its halt: that comes with the next poll
    assert chip.frames[-1][0][0] == 0x30, chip.frames  # READ was the poll's last frame
    del chip.frames[:]
    for _ in range(5):  # the same tag stays in the field: no second read
        assert rd.poll() is None
        cs.history.clear()
    assert tag.state == Tag.HALT
    # ... and it costs no more than an empty field: one HLTA, then REQA polls the halted tag
    # does not answer (no WUPA, no select of a tag already read)
    assert [f[0] for f, _ in chip.frames] == [0x50] + [0x26] * 5, chip.frames
    assert rd.counts["duplicate"] == 0
    # a tag whose HLTA was lost, or that lost power for a moment (back to idle), answers REQA
    # again: within hold_ms of its read its UID is remembered, so it is a duplicate, halted,
    # and quiet from then on
    T[0] += 299
    tag.power_off()
    assert rd.poll() is None and rd.counts["duplicate"] == 1
    assert rd.poll() is None and tag.state == Tag.HALT
    T[0] += 299  # hold_ms counts from the last time the tag answered
    tag.power_off()
    assert rd.poll() is None and rd.counts["duplicate"] == 2
    field.remove(tag)
    assert rd.poll() is None and rd.poll() is None  # absent twice, but heard 0 ms ago
    T[0] += 300
    assert rd.poll() is None  # absent and not heard for hold_ms: forgotten
    tag.power_off()
    field.append(tag)
    assert rd.poll() == ("card", CODE)  # back in the field after leaving: a new read
    # the next card arrives while the previous one still lies in the field: that one is halted
    # and quiet, so the new card reads at once
    tag2 = Tag.with_code(b"\x04\x01\x02\x03\x04\x05\x06", b"3A7FRKd8c0ffee0")
    field.append(tag2)
    assert rd.poll() == ("card", b"3A7FRKd8c0ffee0")
    field.clear()
    T[0] += 300
    assert rd.poll() is None and rd.poll() is None
    # two tags entering together collide: the reader keeps trying (WUPA), and after
    # fail_polls failed polls reports one noread for the episode
    tag.power_off()
    tag2.power_off()
    tag3 = Tag.with_code(b"\x04\x0a\x0b\x0c\x0d\x0e\x0f", b"3A7FRQd8c0ffee1")
    field.extend([tag, tag3])
    got = [rd.poll() for _ in range(rd.fail_polls + 3)]
    assert got == [None] * (rd.fail_polls - 1) + [("noread", b"")] + [None] * 3, got
    assert rd.last_reason == "rfid_collision"
    field.remove(tag)
    assert rd.poll() == ("card", b"3A7FRQd8c0ffee1")
    # the tag of the collision that was never reported comes back alone: a card
    field.remove(tag3)
    T[0] += 300
    assert rd.poll() is None and rd.poll() is None
    tag.power_off()
    field.append(tag)
    assert rd.poll() == ("card", CODE)
    out("reader_dedup", counts=rd.counts)


def check_reader_retries():
    # a tag whose first READ has a bad CRC is read on the retry
    tag = Tag.with_code(UID4, CODE, fault="crc", fault_times=1)
    chip, drv, cs = rig([tag])
    rd = RFIDReader(drv)
    assert rd.poll() == ("card", CODE)
    assert rd.counts["retry"] == 1
    # a tag that never reads: tried on fail_polls polls, then one noread; quiet while it stays
    bad = Tag.with_code(UID4, CODE, fault="crc")
    chip, drv, cs = rig([bad])
    rd = RFIDReader(drv, tries=3, fail_polls=4)
    got = [rd.poll() for _ in range(7)]
    assert got == [None, None, None, ("noread", b""), None, None, None], got
    assert rd.last_reason == "rfid_crc" and rd.counts["noread"] == 1
    # a card at the edge of the field fails for two polls, then reads: one card, no noread
    edge = Tag.with_code(UID7, CODE, fault="parity", fault_times=5)  # 3 tries per poll
    chip, drv, cs = rig([edge])
    rd = RFIDReader(drv, tries=3)
    got = [rd.poll() for _ in range(4)]
    assert got == [None, ("card", CODE), None, None], got
    assert rd.counts["noread"] == 0
    # a failing tag leaves unread: its noread comes when the field is empty
    field = [Tag.with_code(UID4, CODE, fault="silent")]
    chip, drv, cs = rig(field)
    rd = RFIDReader(drv, absent_polls=2)
    assert rd.poll() is None and rd.poll() is None
    field.clear()
    assert rd.poll() is None and rd.poll() == ("noread", b"")
    assert rd.poll() is None
    # a failing tag is swapped for a good one between two polls: noread first, then the card
    field.append(Tag.with_code(UID4, CODE, fault="crc"))
    assert rd.poll() is None
    field[0] = Tag.with_code(UID7, CODE)
    assert rd.poll() == ("noread", b"") and rd.poll() == ("card", CODE)
    # a tag written for something else: garbled, all 16 bytes
    odd = Tag.with_code(UID4, b"HELLO WORLD 123X")
    chip, drv, cs = rig([odd])
    kind, raw = RFIDReader(drv).poll()
    assert kind == "garbled" and raw == b"HELLO WORLD 123X"
    out("reader_retries", ok=True)


def check_reader_chip_fault():
    chip, drv, cs = rig([Tag.with_code(UID4, CODE)])
    chip.dead = True
    rd = RFIDReader(drv)
    assert rd.poll() is None and rd.fault == "rfid_no_chip"
    chip.dead = False
    assert rd.poll() == ("card", CODE) and rd.fault is None

    # an SPI bus error (OSError from machine.SPI) is a fault, not a crash; the reader recovers
    class BrokenBus:
        def __init__(self, chip):
            self.chip = chip
            self.broken = True

        def transfer(self, tx, rx):
            if self.broken:
                raise OSError(5)
            self.chip.transfer(tx, rx)

    chip, drv, cs = rig([Tag.with_code(UID4, CODE)])
    bus = BrokenBus(chip)
    drv._spi.device = bus
    rd = RFIDReader(drv)
    assert rd.poll() is None and rd.fault == "rfid_bus"
    rd._ready = True  # as if init had worked: the failure now hits a poll
    assert rd.poll() is None and rd.fault == "rfid_bus" and not rd._ready
    bus.broken = False
    assert rd.poll() == ("card", CODE) and rd.fault is None
    out("reader_chip_fault", ok=True)


async def _async_read():
    field = []
    chip, drv, cs = rig(field)
    rd = RFIDReader(drv, period_ms=1)
    t = asyncio.create_task(rd.read())
    await asyncio.sleep_ms(5)
    assert not t.done()
    field.append(Tag.with_code(UID7, CODE))
    r = await asyncio.wait_for_ms(t, 2000)
    return r


def check_async_read():
    r = asyncio.run(_async_read())
    assert r == ("card", CODE), r
    out("async_read", ok=True)


class Discard:
    def append(self, v):
        pass

    def clear(self):
        pass


def check_idle_poll_allocates_nothing():
    import micropython

    field = []
    chip, drv, cs = rig(field)
    chip.record = False
    cs.history = Discard()
    rd = RFIDReader(drv)
    assert rd.poll() is None  # init happens here (allocation allowed)
    micropython.heap_lock()
    try:
        for _ in range(50):
            r = rd.poll()
    finally:
        micropython.heap_unlock()
    assert r is None
    field.append(Tag.with_code(UID4, CODE))
    assert rd.poll() == ("card", CODE)
    out("idle_poll_no_alloc", polls=50)


class EmptyField:
    """An MFRC522 over an empty field, at the SPI seam, making nothing: every status burst says
    the timer ran out (ComIrqReg TimerIRq). The chip model behind machine.SPI allocates as it
    works, which would hide the driver's own allocations from heapframes.allocates()."""

    def write(self, buf):
        pass

    def write_readinto(self, w, r):
        r[1] = 0x01  # ComIrqReg: TimerIRq (no IdleIRq/RxIRq: no answer); ErrorReg etc. 0
        r[2] = r[3] = r[4] = 0


class Seam:
    """The SPI the driver holds: the chip model until `dev` is switched."""

    def __init__(self, dev):
        self.dev = dev

    def write(self, buf):
        self.dev.write(buf)

    def write_readinto(self, w, r):
        self.dev.write_readinto(w, r)


def check_idle_poll_frames_stay_off_the_heap():
    """The step the reader task takes at every poll of an empty field (_detect: init done,
    REQA, silence) allocates nothing from the heap, its VM frames included (heapframes.py):
    on the board each frame over 11 words is an allocation counted towards the next
    collection. Before: _detect and MFRC522._transceive had 16 and 23 words, two heap frames
    per poll."""
    from heapframes import allocates

    field = []
    cs = machine.Pin(17, machine.Pin.OUT, value=1)
    chip = MFRC522Chip(version=0x92, cs=cs, tags=field)
    seam = Seam(machine.SPI(0, device=chip))
    drv = MFRC522(seam, cs)
    cs.history = Discard()
    rd = RFIDReader(drv)
    assert rd.poll() is None  # init, through the chip model
    seam.dev = EmptyField()
    assert rd.poll() is None
    assert not allocates(lambda: rd._detect(), 50)
    out("idle_poll_frames", polls=50)


def check_random_field():
    """Seeded random dealing: tags enter and leave, transient faults, pairs colliding. The
    reader never raises, reports each clean tag presence exactly once and never twice."""
    import random

    random.seed(7)
    field = []
    chip, drv, cs = rig(field)
    chip.record = False
    cs.history = Discard()
    rd = RFIDReader(drv, tries=3, absent_polls=2)
    faults = [None, None, None, "crc", "silent", "short", "parity", "nak", "bcc", "sak_crc"]
    cards = 0
    clean_ok = 0
    for n in range(150):
        uid = bytes([4, n & 0xFF, 7, 9, n >> 8, 3, 1])
        f = random.choice(faults)
        tag = Tag.with_code(uid, CODE, fault=f, fault_times=random.choice((1, 2, 4, 20, None)))
        field.append(tag)
        results = []
        for _ in range(random.randint(1, 8)):  # the card sits in the field for a few polls
            r = rd.poll()
            if r is not None:
                results.append(r)
        field.remove(tag)
        tag.power_off()
        for _ in range(2):  # the field empties between cards
            r = rd.poll()
            if r is not None:
                results.append(r)
        # every presence: exactly one result, a card or a noread
        assert len(results) == 1 and results[0] in (("card", CODE), ("noread", b"")), (n, results)
        if f is None:
            assert results == [("card", CODE)], (n, results)
            clean_ok += 1
        if results[0][0] == "card":
            cards += 1
    assert rd.fault is None
    out(
        "random_field",
        cards=cards,
        clean=clean_ok,
        noreads=rd.counts["noread"],
        retries=rd.counts["retry"],
    )


def check_chip_edge_cases():
    # MISO stuck low reads VersionReg 0x00: no chip
    chip, drv, cs = rig(version=0x00)
    assert reason_of(drv.init) == "rfid_no_chip"
    # a clone chip (VersionReg 0x12) works
    tag = Tag.with_code(UID4, CODE)
    chip, drv, cs = rig([tag], version=0x12)
    assert drv.init() == 0x12
    # antenna off: the tag loses power and cannot answer; on again: it is there
    drv.antenna(False)
    assert not chip.antenna_on() and drv.request() is None
    drv.antenna(True)
    assert drv.request() is not None and drv.select() == UID4
    # a READ beyond the tag's memory is NAKed
    buf = bytearray(16)
    assert reason_of(drv.read_pages, 200, buf) == "rfid_nak"
    # a timer without TAuto never fires: a silent tag shows up as a stuck chip, not a hang
    chip, drv, cs = rig([])
    drv.init()
    chip.regs[0x2A] &= 0x7F
    assert reason_of(drv.request) == "rfid_stuck"
    # a timer shorter than the tag's frame delay time would never see an answer: the driver
    # keeps at least 100 us whatever it is asked for
    chip, drv, cs = rig([Tag.with_code(UID4, CODE)])
    drv = MFRC522(machine.SPI(0, device=chip), cs, detect_timeout_us=50)
    drv.init()
    assert drv.request() is not None and chip.timeouts[-1][1] >= 90
    chip.regs[0x2D] = 1  # misprogrammed by hand: 2 ticks = 50 us, shorter than the FDT
    chip.regs[0x2C] = 0
    assert chip.timeout_us() < 90
    tag = chip.tags[0]
    tag.power_off()
    drv._th, drv._tl = 0, drv._detect_ticks  # the driver believes its own value is there
    assert drv.request() is None
    # a hung chip: the reader reports a fault, re-initialises and recovers
    chip, drv, cs = rig([Tag.with_code(UID7, CODE)])
    rd = RFIDReader(drv)
    chip.stuck = True
    assert rd.poll() is None and rd.fault == "rfid_stuck"
    chip.stuck = False
    assert rd.poll() == ("card", CODE) and rd.fault is None
    out("chip_edge_cases", ok=True)


def check_mid_poll():
    """Tags that move while a poll or a read is under way."""
    field = []
    chip, drv, cs = rig(field)
    rd = RFIDReader(drv, absent_polls=2)
    assert rd.poll() is None
    tag = Tag.with_code(UID7, CODE)

    # a tag entering while a poll's REQA is on the air (the model: before the tags hear it)
    def enter_on_reqa(frame):
        if frame == b"\x26" and tag not in field:
            field.append(tag)

    chip.before_frame = enter_on_reqa
    assert rd.poll() == ("card", CODE)
    chip.before_frame = None
    # the next card enters while the previous tag's HLTA (the next poll's first frame) is on
    # the air: the previous tag is halted, the new one answers that poll's REQA alone
    tag2 = Tag.with_code(b"\x04\x01\x02\x03\x04\x05\x06", b"3A7FRKd8c0ffee0")
    tag.power_off()
    field.clear()
    rd = RFIDReader(drv, absent_polls=2)
    field.append(tag)

    def enter_on_hlta(frame):
        if frame[0] == 0x50:
            field.append(tag2)

    chip.before_frame = enter_on_hlta
    assert rd.poll() == ("card", CODE)
    assert tag2 not in field and tag.state == Tag.ACTIVE
    assert rd.poll() == ("card", b"3A7FRKd8c0ffee0")
    chip.before_frame = None
    assert tag2 in field and tag.state == Tag.HALT
    assert rd.counts["noread"] == 0 and rd.counts["duplicate"] == 0
    # a tag leaving half-way through its selection (after the cascade level 1 SELECT) or just
    # before its READ: no card, the retries find nobody, and one noread once the field has been
    # silent for absent_polls polls
    for at in (b"\x93\x70", b"\x30\x04"):
        field.clear()
        chip, drv, cs = rig(field)
        rd = RFIDReader(drv, absent_polls=2)
        t = Tag.with_code(UID7, CODE)
        field.append(t)

        def leave(frame, at=at, t=t):
            if frame[:2] == at and t in field:
                field.remove(t)

        chip.before_frame = leave
        got = [rd.poll() for _ in range(4)]
        assert got == [None, None, ("noread", b""), None], (at, got)
        assert rd.counts["card"] == 0 and rd.last_reason == "rfid_timeout", rd.last_reason
        # the reader is not stuck: the next tag reads
        chip.before_frame = None
        field.append(Tag.with_code(UID4, CODE))
        assert rd.poll() == ("card", CODE), at
    out("mid_poll", ok=True)


def check_fast_period():
    """The poll period: fast_period_ms while the app says dealing, or for fast_ms after a tag
    answered; period_ms otherwise; retry_ms while the chip is faulty."""
    field = []
    chip, drv, cs = rig(field)
    T = [1000]
    rd = RFIDReader(
        drv, period_ms=5, fast_period_ms=2, fast_ms=2000, absent_polls=2, ticks=lambda: T[0]
    )
    assert rd.poll() is None and rd.next_period() == 5
    rd.dealing = True
    assert rd.next_period() == 2
    rd.dealing = False
    assert rd.next_period() == 5
    field.append(Tag.with_code(UID7, CODE))
    T[0] += 10
    assert rd.poll() == ("card", CODE)
    T[0] += 1999
    assert rd.next_period() == 2  # the next card of a deal or a deck check comes soon
    T[0] += 1
    assert rd.next_period() == 5
    T[0] += 10
    assert rd.poll() is None  # the card lying in the field (halted) does not make it fast
    assert rd.next_period() == 5
    chip.dead = True
    rd._ready = False
    assert rd.poll() is None and rd.fault == "rfid_no_chip"
    rd.dealing = True
    assert rd.next_period() == rd.retry_ms
    out("fast_period", ok=True)


async def _count_polls(rd, ms):
    n = [0]
    d = rd._detect

    def counted():
        n[0] += 1
        return d()

    rd._detect = counted
    try:
        await asyncio.wait_for_ms(rd.read(), ms)
    except asyncio.TimeoutError:
        pass
    del rd._detect
    return n[0]


def check_fast_read_loop():
    """read() sleeps next_period() between polls: dealing polls far more often."""
    chip, drv, cs = rig([])
    rd = RFIDReader(drv, period_ms=60, fast_period_ms=3)
    slow = asyncio.run(_count_polls(rd, 300))
    rd.dealing = True
    fast = asyncio.run(_count_polls(rd, 300))
    assert slow <= 7 and fast >= 3 * slow, (slow, fast)
    out("fast_read_loop", slow=slow, fast=fast)


def check_air_waits():
    """The CPU sleeps through each frame's air time before its status read (so that read sees
    the answer complete), and the frame after an HLTA waits until the HLTA is off the air and
    its timer has run out (a StartSend or a re-arm before then would cut the HLTA short)."""
    import shoe.drivers.mfrc522 as m

    real = m.time
    clk = m.time = AirClock()
    try:
        tag = Tag.with_code(UID7, CODE)
        chip, drv, cs = rig([tag])
        drv.init()
        del clk.sleeps[:]
        drv.request()
        drv.select()
        drv.read_pages(4, bytearray(16))
        air = [
            m.air_us(16, 2),
            m.air_us(18, 5),
            m.air_us(81, 3),
            m.air_us(18, 5),
            m.air_us(81, 3),
            m.air_us(36, 18),
        ]
        silence = m.air_us(16, 0) - 86 + (drv._detect_ticks + 1) * 25
        waits = clk.sleeps
        assert len(waits) == 6, waits
        assert waits[0] >= silence, (waits[0], silence)  # REQA: the timer has run out
        for w, a in zip(waits[1:], air[1:]):
            assert a <= w <= a + 50, (waits, air)
        drv.halt()
        assert tag.state == Tag.HALT
        del clk.sleeps[:]
        clk.us += 100  # the CPU comes back 100 us after the HLTA's StartSend
        assert drv.request() is None
        halt_off = m.air_us(36, 0) - 86 + (drv._detect_ticks + 1) * 25
        assert clk.sleeps[0] >= halt_off - 100, (clk.sleeps, halt_off)
        # long after the HLTA: no wait for it
        drv.halt()
        clk.us += 5000
        del clk.sleeps[:]
        drv.request()
        assert len(clk.sleeps) == 1, clk.sleeps
    finally:
        m.time = real
    out("air_waits", ok=True)


def check_poll_between():
    """poll_between(): one poll from a long step of the app. A card that passes the reader
    during that step is read then, and read()/poll() return it next; nothing more is polled
    while a result waits; a fault or an unexpected exception never reaches the caller."""
    field = []
    chip, drv, cs = rig(field)
    T = [0]
    rd = RFIDReader(drv, absent_polls=2, ticks=lambda: T[0])
    assert rd.poll() is None
    field.append(Tag.with_code(UID7, CODE))
    assert rd.poll_between() is None  # the card, read while it is in the field ...
    field.clear()  # ... which it leaves before the reader task polls again
    assert rd.poll() == ("card", CODE) and rd.poll() is None and rd.poll() is None
    # a result waits: no poll (the next card is read by the next poll, after it)
    field.append(Tag.with_code(UID4, b"3A7FRKd8c0ffee0"))
    rd.poll_between()
    del chip.frames[:]
    rd.poll_between()
    assert chip.frames == [], chip.frames
    assert rd.poll() == ("card", b"3A7FRKd8c0ffee0")
    field.clear()
    T[0] += 1000
    assert rd.poll() is None and rd.poll() is None
    # a failing tag swapped for a good one, found by poll_between: noread, then the card (a
    # UID not read before: one read whole would be reported by its UID, check_by_uid)
    field.append(Tag.with_code(b"\xca\xfe\xba\xbe", CODE, fault="crc"))
    assert rd.poll() is None
    field[0] = Tag.with_code(b"\x04\x01\x02\x03\x04\x05\x06", CODE)
    rd.poll_between()
    field.clear()
    got = [rd.poll(), rd.poll(), rd.poll()]
    assert got == [("noread", b""), ("card", CODE), None], got
    assert asyncio.run(_read_one(rd, field)) == ("card", CODE)
    # a dead chip: a fault, no exception; with the fault set poll_between leaves the chip alone
    chip.dead = True
    rd._ready = False
    assert rd.poll_between() is None and rd.fault == "rfid_no_chip"
    del chip.frames[:]
    rd.poll_between()
    assert chip.frames == [] and rd.poll() is None
    chip.dead = False

    class Odd:  # a bug below the reader: not the caller's fault
        def transfer(self, tx, rx):
            raise ValueError("odd")

    rd2 = RFIDReader(drv)
    rd2._ready = True
    drv._spi.device = Odd()
    assert rd2.poll_between() is None
    out("poll_between", ok=True)


def _heads(chip):
    """The frames the chip sent since the last call, as (command, NVB) pairs."""
    got = [(f[0], f[1] if len(f) > 1 else None) for f, _ in chip.frames]
    del chip.frames[:]
    return got


def check_by_uid():
    """A plain tag read whole once is reported by its UID the next time it comes: the code
    comes from its first read as soon as the anticollision gives the UID, without the last
    SELECT and the READ (~3 ms of air); the next poll selects it, reads it and compares. A tag
    with that UID holding something else (a copy, rewritten memory) is ("forged",
    "tag_changed"), and read whole from then on; one that left before its check is counted."""
    field = []
    chip, drv, cs = rig(field)
    T = [0]
    rd = RFIDReader(drv, absent_polls=2, hold_ms=300, ticks=lambda: T[0])
    rd.by_uid = True  # (the app sets it while a round is dealt)

    def gone():
        field.clear()
        T[0] += 300
        assert rd.poll() is None and rd.poll() is None

    tag = Tag.with_code(UID7, CODE)
    field.append(tag)
    assert rd.poll() == ("card", CODE)
    assert (0x30, 4) in _heads(chip)  # the first time: read whole
    gone()
    tag.power_off()
    field.append(tag)
    _heads(chip)
    assert rd.poll() == ("card", CODE) and rd.counts["by_uid"] == 1
    assert _heads(chip) == [(0x26, None), (0x93, 0x20), (0x93, 0x70), (0x95, 0x20)]
    assert tag.state == Tag.READY  # waiting for its last SELECT
    assert rd.poll() is None  # the check: selected, read, the same: halted
    assert _heads(chip)[:4] == [(0x95, 0x70), (0x30, 4), (0x50, 0), (0x26, None)]
    assert tag.state == Tag.HALT and rd._check_uid is None
    gone()
    # outside a deal (a deck check, a stub: riffled, and followed by the app's long steps)
    # every tag is read whole
    rd.by_uid = False
    tag.power_off()
    field.append(tag)
    assert rd.poll() == ("card", CODE) and rd.counts["by_uid"] == 1
    assert (0x30, 4) in _heads(chip)
    gone()
    rd.by_uid = True
    # a copy with the UID and other memory: reported by the UID, then caught by the check
    copy = Tag.with_code(UID7, b"3A7FRKd8c0ffee0")
    field.append(copy)
    assert rd.poll() == ("card", CODE)
    assert rd.poll() == ("forged", "tag_changed")
    assert copy.state == Tag.HALT
    gone()
    copy.power_off()
    field.append(copy)
    assert rd.poll() == ("card", b"3A7FRKd8c0ffee0")  # read whole again: no longer known
    gone()
    # reported by its UID, gone before the next poll: nothing to compare, counted
    copy.power_off()
    field.append(copy)
    got = rd.poll()
    assert got == ("card", b"3A7FRKd8c0ffee0") and rd.counts["by_uid"] == 3, (got, rd.counts)
    gone()
    assert rd.counts["unchecked"] == 1 and rd._check_uid is None
    # the check's READ fails on the air: the same poll wakes the tag (WUPA: a selected tag
    # answers no REQA), selects it whole and compares its memory then
    t2 = Tag.with_code(UID4, CODE)
    field.append(t2)
    assert rd.poll() == ("card", CODE)
    gone()
    t2.power_off()
    field.append(t2)
    assert rd.poll() == ("card", CODE) and rd._check_uid == UID4
    t2.fault, t2.fault_times = "crc", 1
    _heads(chip)
    assert rd.poll() is None and rd._check_uid is None and t2.state == Tag.HALT
    heads = _heads(chip)
    assert heads.count((0x30, 4)) == 2 and (0x52, None) in heads, heads
    gone()
    # a failing tag swapped for a known one between two polls: the noread first, then the card
    # (selected and read whole: the full path tells the swap)
    field.append(Tag.with_code(b"\xba\xdb\xad\x01", CODE, fault="crc"))
    assert rd.poll() is None
    tag.power_off()
    field[0] = tag
    assert rd.poll() == ("noread", b"") and rd.poll() == ("card", CODE)
    # short of RAM for the store: the read is the card all the same, nothing kept (a tag
    # forgotten before its check is not compared, not forged)
    gone()

    class NoRoom(dict):
        def __setitem__(self, k, v):
            raise MemoryError

    rd._known = NoRoom()
    tag.power_off()
    field.append(tag)
    assert rd.poll() == ("card", CODE) and len(rd._known) == 0
    gone()
    rd._known = {}
    tag.power_off()
    field.append(tag)
    assert rd.poll() == ("card", CODE)  # whole: kept again
    gone()
    tag.power_off()
    field.append(tag)
    assert rd.poll() == ("card", CODE) and rd._check_uid == UID7  # by its UID
    rd._known.clear()  # forgotten before the check
    n = rd.counts["unchecked"]
    assert rd.poll() is None and rd.counts["unchecked"] == n + 1
    out("by_uid", counts=rd.counts)


async def _read_one(rd, field):
    """A result poll_between() queued comes out of read() at once (the field is empty)."""
    field.append(Tag.with_code(b"\x0b\x0e\x0e\x0f", CODE))  # a UID not read before here
    rd.poll_between()
    field.clear()
    return await asyncio.wait_for_ms(rd.read(), 50)


run(
    [
        check_chip_edge_cases,
        check_idle_poll_allocates_nothing,
        check_idle_poll_frames_stay_off_the_heap,
        check_random_field,
        check_crc_vector,
        check_init,
        ("select_and_read_uid7", lambda: check_select_and_read(UID7)),
        ("select_and_read_uid4", lambda: check_select_and_read(UID4)),
        ("select_and_read_uid7_88", lambda: check_select_and_read(UID7_88)),
        check_faults,
        check_reader_dedup,
        check_reader_retries,
        check_reader_chip_fault,
        check_async_read,
        check_mid_poll,
        check_fast_period,
        check_fast_read_loop,
        check_air_waits,
        check_poll_between,
        check_by_uid,
    ]
)
