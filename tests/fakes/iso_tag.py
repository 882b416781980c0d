"""An ISO 14443-4 tag for the MFRC522 chip model (tests/fakes/mfrc522_chip.py), and a fake
`time` for the RFID driver modules: the authenticated tags' tests (kept out of mfrc522_chip.py,
which device-sized tests load: tests/board/check_board.py runs in 128 KB).

`IsoTag` is an NTAG 424 DNA on the air: ISO 14443-3 with ATQA 0344 and SAK 20, RATS -> ATS,
then the block protocol (I-blocks carrying APDUs to its `app`, e.g. host_tools/sim/ntag424.py's
model, block numbers, R(ACK)/R(NAK) recovery, S(WTX), S(DESELECT) -> HALT), with fault modes
(`IsoTag.FAULTS`).
"""

from mfrc522_chip import Tag, crc_a, with_crc


class IsoTag(Tag):
    """An ISO 14443-4 tag (NTAG 424 DNA: ATQA 0344, SAK 20, ATS 06 77 77 71 02 80: FSC 128,
    FWI 7, SFGI 1, CID supported). app: the APDU end (apply(apdu) -> response, reset())."""

    ATQA = b"\x44\x03"
    SAK = 0x20
    ATS = b"\x06\x77\x77\x71\x02\x80"
    # fault modes (fault_times as for Tag):
    #   mute_rats   no ATS
    #   lose_answer the answer to an I-block is lost on the air (the reader's R(NAK) gets it)
    #   lose_block  the tag does not hear an I-block (it answers the R(NAK) with R(ACK))
    #   wtx         the tag asks for more time (S(WTX)) before answering an I-block
    #   crc_answer  an I-block's answer comes back with a wrong CRC_A
    #   chaining    the tag answers with a chained I-block (the shoe announces no chaining)
    #   deaf        the tag answers nothing once in ISO 14443-4 (a card leaving the field)
    FAULTS = ("mute_rats", "lose_answer", "lose_block", "wtx", "crc_answer", "chaining", "deaf")

    def __init__(self, uid, app, **kw):
        Tag.__init__(self, uid, **kw)
        self.app = app
        self.bn = 1
        self.last = None  # the last block sent (re-sent on R(ACK)/R(NAK) with our number)
        self.wtx_pending = None
        self.blocks = []  # every I-block INF received (APDUs), for assertions

    def power_off(self):
        Tag.power_off(self)
        self.app.reset()

    def respond(self, frame, tx_last_bits):
        if self.state == Tag.PROTOCOL:
            if tx_last_bits != 0 or len(frame) < 3 or self._faulty("deaf"):
                return None
            if crc_a(frame[:-2]) != (frame[-2], frame[-1]):
                return None  # a broken block is ignored (ISO 14443-4 rule 4)
            return self.block(frame[:-2])
        return Tag.respond(self, frame, tx_last_bits)

    def active(self, frame):
        if len(frame) == 4 and frame[0] == 0x50 and frame[1] == 0x00:  # HLTA (layer 3)
            if crc_a(frame[:2]) == (frame[2], frame[3]):
                self.state = Tag.HALT
            return None
        if len(frame) == 4 and frame[0] == 0xE0 and crc_a(frame[:2]) == (frame[2], frame[3]):
            if self._faulty("mute_rats"):
                return None
            self.state = Tag.PROTOCOL
            self.bn = 1
            self.last = None
            self.app.reset()
            return with_crc(self.ATS), 0, 0
        self.state = Tag.IDLE
        return None

    def _send(self, blk):
        self.last = blk
        out = bytearray(with_crc(blk))
        if self._faulty("crc_answer"):
            out[-1] ^= 0xFF
        return bytes(out), 0, 0

    def block(self, blk):
        pcb = blk[0]
        if pcb == 0xC2 and len(blk) == 1:  # S(DESELECT)
            self.state = Tag.HALT
            self.app.reset()
            return with_crc(b"\xc2"), 0, 0
        if pcb == 0xF2 and len(blk) == 2 and self.wtx_pending is not None:  # S(WTX) response
            blk, self.wtx_pending = self.wtx_pending, None
            return self._answer(blk)
        if pcb & 0xE2 == 0x02 and not pcb & 0x1C:  # I-block (no CID, NAD, chaining)
            if self._faulty("lose_block"):
                return None
            self.bn ^= 1
            self.blocks.append(bytes(blk[1:]))
            if self._faulty("wtx"):
                self.wtx_pending = blk
                self.last = b"\xf2\x01"
                return with_crc(self.last), 0, 0
            return self._answer(blk)
        if pcb & 0xE6 == 0xA2 and len(blk) == 1:  # R(ACK) / R(NAK)
            if pcb & 1 == self.bn and self.last is not None:
                return self._send(self.last)  # rule 11: the last block again
            if pcb & 0x10:
                return self._send(bytes((0xA2 | self.bn,)))  # rule 10: R(NAK) -> R(ACK)
            return None
        return None

    def _answer(self, blk):
        resp = self.app.apply(bytes(blk[1:]))
        pcb = 0x02 | self.bn
        if self._faulty("chaining"):
            pcb |= 0x10
        out = bytes((pcb,)) + bytes(resp)
        if self._faulty("lose_answer"):
            self.last = out
            return None
        return self._send(out)


class AirClock:
    """Stands in for the time module of the RFID driver modules (shoe.drivers.mfrc522,
    isodep): records every sleep_us and advances a fake microsecond clock by it (the chip model
    answers at once)."""

    def __init__(self):
        self.us = 0
        self.sleeps = []

    def ticks_us(self):
        return self.us

    def ticks_diff(self, a, b):
        return a - b

    def sleep_us(self, us):
        self.sleeps.append(us)
        self.us += us

    def sleep_ms(self, ms):
        self.us += ms * 1000
