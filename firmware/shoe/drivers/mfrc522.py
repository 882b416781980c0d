"""NXP MFRC522 RFID front end on SPI: ISO 14443-A card detection, selection and NTAG reads.

    chip = MFRC522(spi, cs, rst=None)   # machine.SPI (mode 0, <= 10 MHz, MSB first), Pin objects
    chip.init()                         # reset, check VersionReg, timer, 100% ASK, antenna on
    atqa = chip.request(wake=True)      # WUPA (wake also halted tags) / REQA; None = no tag
    uid = chip.select()                 # anticollision + select, cascade levels 1-2 -> bytes
    uid = chip.select(known)            # ... up to the last SELECT if the UID is in `known`;
    chip.resume_select()                # ... which this sends (a plain tag read before)
    chip.read_pages(4, buf)             # NTAG/Ultralight READ: 16 bytes = pages 4..7 into buf
    chip.halt()                         # HLTA: quiet until woken (WUPA) or re-powered; sent
                                        # and not waited for (the next frame waits for it)
    chip.sak                            # the SAK of the tag selected last: 0x20 = ISO 14443-4

Everything that goes wrong on the air raises RFIDError with a short `reason` (rfid_timeout,
rfid_crc, ...). The reasons, the SPI framing and the timing: docs/hardware.md section 4.
"""
from micropython import const
import time

from shoe.errors import ShoeError
from shoe.drivers.iso14443 import CRC_TABLE, air_us, crc_a, crc_run, sel_crc

# registers (datasheet 9.2)
_COMMAND = const(0x01)
_FIFODATA = const(0x09)
_COLL = const(0x0E)
_MODE = const(0x11)
_TXMODE = const(0x12)
_RXMODE = const(0x13)
_TXCONTROL = const(0x14)
_TXASK = const(0x15)
_TMODE = const(0x2A)
_TPRESCALER = const(0x2B)
_TRELOAD_H = const(0x2C)
_TRELOAD_L = const(0x2D)
_VERSION = const(0x37)

# whole SPI transfers, prebuilt: (register << 1, value) writes, (register << 1) | 0x80 reads
_W_TRANSCEIVE = b"\x02\x0c"  # CommandReg = Transceive (also ends a receive still waiting)
_W_SOFTRESET = b"\x02\x0f"
_W_IRQ_CLEAR = b"\x08\x7f"  # ComIrqReg: clear all bits (Set1 = 0)
_W_FLUSH = b"\x14\x80"  # FIFOLevelReg: FlushBuffer
_W_SEND = b"\x1a\x80"  # BitFramingReg: StartSend, all bits of the last byte
_W_SEND7 = b"\x1a\x87"  # StartSend, 7 bits of the last byte (REQA / WUPA short frame)
_R_STATUS = b"\x88\x8c\x94\x98\x00"  # ComIrqReg, ErrorReg, FIFOLevelReg, ControlReg
_WR_FIFO = const(0x12)
_RD_FIFO = const(0x92)

# ISO 14443-3 / NTAG commands
_REQA = const(0x26)
_WUPA = const(0x52)
_SEL_CL1 = const(0x93)
_SEL_CL2 = const(0x95)
_CASCADE_TAG = const(0x88)
_READ = const(0x30)
_HLTA = const(0x50)
_HLTA_FRAME = b"\x50\x00\x57\xcd"  # HLTA with its CRC_A (ISO 14443-3 worked example)
_DESELECT_FRAME = b"\xc2\xe0\xb4"  # ISO 14443-4 S(DESELECT) with its CRC_A

# ComIrqReg bits: TxIRq 0x40, RxIRq 0x20, IdleIRq 0x10, ErrIRq 0x02, TimerIRq 0x01
_IRQ_DONE = const(0x30)  # RxIRq | IdleIRq
_IRQ_TIMER = const(0x01)
# ErrorReg bits
_ERR_OVFL = const(0x10)
_ERR_COLL = const(0x08)
_ERR_CRC = const(0x04)
_ERR_PARITY = const(0x02)
_ERR_PROTOCOL = const(0x01)

_POLL_LIMIT = const(2000)  # status polls before declaring the chip stuck
_FIFO = const(64)  # the longest answer of an ISO 14443-4 block (the FSD the shoe announces)
_STEP_US = const(200)  # an ISO 14443-4 answer not complete yet: the status is read again after
# S(DESELECT) is answered: its timer runs 1 ms (40 ticks) and the next frame waits for its end as
# for HLTA's (its answer, if any, is flushed): its 27 bits (255 us) + 41 ticks + 20 us
_W_DESEL = const(1300)
_PRESCALER = const(0xA9)  # timer: 13.56 MHz / (2 * 169 + 1) = 40 kHz, one tick = 25 us
_TICK_US = const(25)
_RESP = const(18)  # longest answer: READ, 16 data bytes + CRC_A
# sleep past the computed end of an answer (us): the status read right after then sees it
# complete; set from the emulated RP2040 (bench/bench_pico_rfid.py, SPI transfers per read)
_LATE = const(0)
# VersionReg: 0x91/0x92 NXP v1.0/v2.0; 0x88, 0x90, 0x12, 0xB2 on clones. init takes any value but
# 0x00/0xFF (MISO stuck) as a chip.


_SEL_CRCS = {_SEL_CL1: sel_crc(_SEL_CL1), _SEL_CL2: sel_crc(_SEL_CL2), 0x97: sel_crc(0x97)}


class RFIDError(ShoeError):
    reason = "rfid"


class MFRC522:
    def __init__(self, spi, cs, rst=None, timeout_ms=5, detect_timeout_us=200):
        self._spi = spi
        self._put = spi.write  # bound once: making a bound method allocates
        self._xfer = spi.write_readinto
        self._cs = cs
        self._rst = rst
        # The chip's timer starts when a frame has been sent and stops at the answer's first
        # bits (TAuto); ISO 14443-3 fixes a tag's frame delay time to ~86-91 us for REQA/WUPA,
        # ANTICOLLISION and SELECT, so silence there is bounded short (detect_timeout_us: an
        # empty field is the common case and the CPU waits for it). READ may take longer (NTAG21x
        # datasheet: READ timeout 5 ms): timeout_ms.
        self._data_ticks = timeout_ms * 1000 // _TICK_US
        self._detect_ticks = max(detect_timeout_us // _TICK_US, 4)
        silence = (self._detect_ticks + 1) * _TICK_US  # the timer runs reload + 1 ticks
        # CPU sleep after StartSend, up to the instant the answer is complete (or, for REQA,
        # the timer has run out: an empty field is the common case and gets one status read)
        self._w_req = air_us(16, 0) - 86 + silence + _LATE
        self._w_ac = air_us(18, 5) + _LATE
        self._w_sel = air_us(81, 3) + _LATE
        self._w_read = air_us(36, _RESP) + _LATE
        # HLTA is not waited for: the next frame starts once its transmission and its timer
        # (so no TimerIRq of it can land after that frame's IRQ clear) are over
        self._w_halt = air_us(36, 0) - 86 + silence + 20
        self._halt_t = 0  # ticks_us of the last HLTA's StartSend
        self._halting = False  # an HLTA (or a DESELECT and its answer) may still be on the air
        self.l4 = False  # the tag selected last is in ISO 14443-4 (halt() deselects it)
        self.sak = 0  # -1: select(known) stopped before the last SELECT, whose frame _fb holds
        self._rpage = -1  # the page of the prebuilt READ frame in self._rframe
        self._rframe = bytearray(4)
        self._th = self._tl = -1  # TReload high / low byte as programmed (-1: unknown)
        self._rearm = True  # Transceive must be (re)started before the next frame
        self._flush = True  # the FIFO may hold bytes: flush before the next frame
        self._w = bytearray(2)  # a register write
        self._r = bytearray(2)
        self._st = bytearray(5)  # status burst answer: -- irq err level control
        fb = self._fb = bytearray(10)  # FIFO write burst: address + frame (up to 9 bytes)
        fb[0] = _WR_FIFO
        self._fbv = [memoryview(fb)[: n + 1] for n in range(10)]
        rx = self._rx = bytearray(_RESP + 1)  # FIFO read burst: rx[1 .. n] = the answer
        self._rxv = [memoryview(rx)[: n + 1] for n in range(_RESP + 1)]
        self._rdv = [bytes([_RD_FIFO] * n + [0]) for n in range(_RESP + 1)]
        self._cln = memoryview(rx)[1:6]  # an ANTICOLLISION answer: UID CLn + BCC
        self._data = memoryview(rx)[1:17]  # a READ answer's 16 data bytes
        self._answer = memoryview(rx)[1:_RESP + 1]  # a READ answer with its CRC_A
        self._selcrc = memoryview(self._fb)[3:8]  # the UID CLn + BCC of a SELECT frame
        self._uid = bytearray(10)
        self.version = 0
        self.rx_last_bits = 0
        cs.init(cs.OUT, value=1)
        if rst is not None:
            rst.init(rst.OUT, value=1)

    # -- registers and whole prebuilt transfers, each with its chip select -------------------
    def _send(self, buf):
        self._cs(0)
        try:
            self._spi.write(buf)
        finally:
            self._cs(1)

    def _wr(self, reg, value):
        w = self._w
        w[0] = (reg << 1) & 0x7E
        w[1] = value
        self._send(w)

    def _rd(self, reg):
        w = self._w
        w[0] = ((reg << 1) & 0x7E) | 0x80
        w[1] = 0
        self._cs(0)
        try:
            self._spi.write_readinto(w, self._r)
        finally:
            self._cs(1)
        return self._r[1]

    # -- set-up ------------------------------------------------------------------------------
    def init(self):
        """Reset and configure the chip; RFIDError('rfid_no_chip') if it does not answer."""
        if self._rst is not None:
            self._rst(0)
            time.sleep_ms(1)
            self._rst(1)
            time.sleep_ms(50)  # oscillator start-up (datasheet 8.8.2: ~37.74 us + crystal)
        v = self._rd(_VERSION)
        if v in (0x00, 0xFF):  # MISO stuck low/high: nothing there (or SPI miswired)
            raise RFIDError("no MFRC522 answering on SPI (VersionReg %02x)" % v, "rfid_no_chip")
        self._send(_W_SOFTRESET)
        n = 0
        while self._rd(_COMMAND) & 0x10:  # PowerDown bit clears when the reset has finished
            n += 1
            if n > _POLL_LIMIT:
                raise RFIDError("MFRC522 stays in power-down after reset", "rfid_stuck")
        self.version = v
        # timer: TAuto (starts at the end of each transmission), prescaler 0x0A9 (25 us/tick)
        self._wr(_TMODE, 0x80 | (_PRESCALER >> 8))
        self._wr(_TPRESCALER, _PRESCALER & 0xFF)
        self._th = self._tl = -1
        self._rearm = self._flush = True
        self._halting = False  # the reset ended any HLTA on the air
        self.l4 = False
        self._timer(self._data_ticks)
        self._wr(_TXASK, 0x40)  # force 100 % ASK modulation
        self._wr(_MODE, 0x3D)  # CRC preset 0x6363 (ISO 14443-3 CRC_A)
        self._wr(_TXMODE, 0x00)  # 106 kBd, no hardware CRC: CRCs are appended/checked here
        self._wr(_RXMODE, 0x00)
        self._wr(_COLL, self._rd(_COLL) & 0x7F)  # ValuesAfterColl = 0
        self.antenna(True)
        return v

    def _timer(self, ticks):
        h = (ticks >> 8) & 0xFF
        if h != self._th:
            self._wr(_TRELOAD_H, h)
            self._th = h
        lo = ticks & 0xFF
        if lo != self._tl:
            self._wr(_TRELOAD_L, lo)
            self._tl = lo

    def antenna(self, on):
        v = self._rd(_TXCONTROL)
        if on:
            if v & 0x03 != 0x03:
                self._wr(_TXCONTROL, v | 0x03)
        else:
            self._wr(_TXCONTROL, v & 0xFC)

    # -- the air -----------------------------------------------------------------------------
    def _transceive(self, n, short, wait_us, tx=None, rx=None):
        """Send self._fb[1:n+1] (short: 7 bits, REQA/WUPA); the answer lands in self._rx[1:].
        -> byte count, or -1 if no answer came before the timer ran out (no exception: an
        empty field is the common case and must not allocate). self.rx_last_bits = valid bits
        of the last byte (0 = all 8). tx, rx: an ISO 14443-4 block (drivers/isodep.py).

        Every poll of an empty field runs this, so it and its steps keep their VM state
        within the 11 words MicroPython keeps on the C stack (locals and stack, plus 3 per
        exception handler; a bigger frame is a heap block per call, counted towards the next
        collection although freed on return): the steps are methods. On a bus error each
        transfer deselects the chip (_send, _status, _read_fifo) and the error goes up; the
        reader then initialises the chip again (rfid.py: rfid_bus)."""
        if self._halting:  # the HLTA sent last must be off the air before anything else
            self._off_air()
        self._start_frame(self._fbv[n] if tx is None else tx, _W_SEND7 if short else _W_SEND)
        time.sleep_us(wait_us)
        return self._await_answer(rx is not None)

    def _off_air(self):
        d = _W_DESEL if self._halting == 2 else self._w_halt
        self._halting = False
        d -= time.ticks_diff(time.ticks_us(), self._halt_t)
        if d > 0:
            time.sleep_us(d)

    def _bus_error(self):
        """An SPI error inside a frame: deselect, and start Transceive afresh next time."""
        self._cs(1)
        self._rearm = self._flush = True

    def _start_frame(self, frame, send):
        """(Re)start Transceive if needed, clear the IRQs, load the FIFO and send (`send`:
        the BitFramingReg write that starts it, 7 bits for REQA/WUPA or whole bytes). Each
        write is _send()'s, which deselects the chip whatever happens (a try here would take
        9 of the frame's 11 words); after a bus error the reader initialises the chip again,
        which starts Transceive afresh."""
        if self._rearm:  # after init, silence, HLTA or an error: start Transceive afresh
            self._send(_W_TRANSCEIVE)
            self._rearm = False
        if self._flush:
            self._send(_W_FLUSH)
            self._flush = False
        self._send(_W_IRQ_CLEAR)
        self._send(frame)
        self._send(send)

    def _await_answer(self, block):
        """Wait for the end of the frame -> its byte count (read into self._rx unless `block`:
        isodep reads an ISO 14443-4 block itself), or -1 if the timer ran out first."""
        st = self._st
        k = 0
        while True:
            irq = self._status()
            if irq & _IRQ_DONE:
                break
            if irq & _IRQ_TIMER:
                self._rearm = True
                if st[3]:
                    self._flush = True
                return -1
            k += 1
            if k > _POLL_LIMIT:
                self._rearm = self._flush = True
                self._raise(-1, 0)
            if block:
                time.sleep_us(_STEP_US)
        k = st[3] & 0x7F
        self.rx_last_bits = st[4] & 0x07
        if st[2] or k > (_FIFO if block else _RESP):
            self._rearm = self._flush = True
            self._raise(st[2], k)
        if k and not block:
            self._read_fifo(k)
        return k

    def _status(self):
        """One burst read of ComIrq, Error, FIFOLevel and Control into self._st -> ComIrq."""
        try:
            self._cs(0)
            self._xfer(_R_STATUS, self._st)
            self._cs(1)
        except OSError:
            self._bus_error()
            raise
        return self._st[1]

    def _read_fifo(self, count):
        try:
            self._cs(0)
            self._xfer(self._rdv[count], self._rxv[count])
            self._cs(1)
        except OSError:
            self._bus_error()
            raise

    def _raise(self, err, count):
        """The RFIDError for ErrorReg `err` (-1: the chip never finished the frame)."""
        if err < 0:
            raise RFIDError("MFRC522 never finished the transceive", "rfid_stuck")
        if err & _ERR_COLL:
            raise RFIDError("two tags answered at once (CollReg %02x)" % self._rd(_COLL),
                            "rfid_collision")
        if err & _ERR_OVFL:
            raise RFIDError("FIFO overflow", "rfid_overflow")
        if err & _ERR_PARITY:
            raise RFIDError("parity error in the answer", "rfid_parity")
        if err & _ERR_CRC:
            raise RFIDError("CRC error in the answer", "rfid_crc")
        if err & _ERR_PROTOCOL:
            raise RFIDError("protocol error", "rfid_protocol")
        raise RFIDError("answer of %d bytes is too long" % count, "rfid_length")

    def _exchange(self, n, wait_us, ticks):
        """_transceive where silence is an error (rfid_timeout)."""
        self._timer(ticks)
        count = self._transceive(n, False, wait_us)
        if count < 0:
            raise RFIDError("no answer from the tag", "rfid_timeout")
        return count

    def request(self, wake=False):
        """REQA (or WUPA, which also wakes halted tags). -> ATQA (2 bytes) or None if no tag."""
        self.sak = 0   # a tag waiting for its last SELECT goes back to IDLE (no new attribute
        # for that flag: one more made each MFRC522 a 752-byte attribute table on the unix port)
        self._timer(self._detect_ticks)
        self._fb[1] = _WUPA if wake else _REQA
        count = self._transceive(1, True, self._w_req)
        if count < 0:
            return None
        if count != 2 or self.rx_last_bits != 0:
            raise RFIDError("ATQA of %d bytes/%d bits" % (count, self.rx_last_bits),
                            "rfid_length")
        return bytes(self._rx[1:3])

    def select(self, known=None):
        """Anticollision + select over cascade levels -> the UID (4 or 7 bytes).
        `known`: UIDs (a dict) at which to stop before the last level's SELECT, once its
        anticollision has given the whole UID: the tag is then not selected yet (self.sak is
        -1, a tag in READY state waits for that SELECT) until resume_select() sends it, and
        any other frame first (a REQA) sends the tag back to IDLE."""
        uid = self._uid
        fb = self._fb
        r = self._rx
        tx = self._transceive  # not _exchange: every frame here has the same short timer
        w_ac = self._w_ac
        w_sel = self._w_sel
        self._timer(self._detect_ticks)
        n = 0
        for sel in (_SEL_CL1, _SEL_CL2, 0x97):
            fb[1] = sel
            fb[2] = 0x20  # NVB: 2 bytes sent, no UID bits known
            count = tx(2, False, w_ac)
            if count < 0:
                raise RFIDError("no answer from the tag", "rfid_timeout")
            if count != 5 or self.rx_last_bits != 0:
                raise RFIDError("UID CLn of %d bytes" % count, "rfid_length")
            if r[1] ^ r[2] ^ r[3] ^ r[4] ^ r[5]:
                raise RFIDError("UID check byte (BCC) wrong", "rfid_bcc")
            fb[2] = 0x70  # NVB: 7 bytes, the whole UID CLn
            fb[3:8] = self._cln
            c = crc_run(self._selcrc, _SEL_CRCS[sel])
            fb[8] = c & 0xFF
            fb[9] = c >> 8
            if known and fb[3] != _CASCADE_TAG:   # (a 7-byte UID's 4th byte may be 0x88:
                whole = bytes(uid[:n]) + bytes(self._fbv[6][3:7])   # not known, selected)
                if whole in known:   # the SELECT frame stays in _fb for resume_select
                    self.sak = -1
                    return whole
            count = tx(9, False, w_sel)
            if count < 0:
                raise RFIDError("no answer from the tag", "rfid_timeout")
            if count != 3:
                raise RFIDError("SAK of %d bytes" % count, "rfid_length")
            c = 0x63 ^ CRC_TABLE[0x63 ^ r[1]]  # CRC_A of the one SAK byte (crc_a unrolled)
            if r[2] != c & 0xFF or r[3] != c >> 8:
                raise RFIDError("CRC_A of the SAK does not match", "rfid_crc")
            self.sak = r[1]
            if not r[1] & 0x04:  # SAK cascade bit clear: UID complete, these 4 bytes its last
                uid[n:n + 4] = self._fbv[6][3:7]
                return bytes(uid[:n + 4])
            # more levels follow: this one is the cascade tag and 3 UID bytes. The SAK says so,
            # not the first byte's value: 0x88 is a UID byte at the last level (a 7-byte UID's
            # 4th byte), where taking it for the cascade tag lost a byte of the UID
            if fb[3] != _CASCADE_TAG:
                raise RFIDError("UID CLn without its cascade tag", "rfid_length")
            uid[n:n + 3] = self._fbv[6][4:7]
            n += 3
        raise RFIDError("UID longer than 3 cascade levels", "rfid_length")

    def resume_select(self):
        """Send the SELECT that select(known) stopped before -> True if the tag answered it
        with a SAK that completes its UID (self.sak set), False if there is none to send;
        raises as select() does (the tag left: rfid_timeout)."""
        if self.sak >= 0:
            return False
        self.sak = 0
        self._timer(self._detect_ticks)
        count = self._transceive(9, False, self._w_sel)
        r = self._rx
        if count < 0:
            raise RFIDError("no answer from the tag", "rfid_timeout")
        if count != 3:
            raise RFIDError("SAK of %d bytes" % count, "rfid_length")
        c = 0x63 ^ CRC_TABLE[0x63 ^ r[1]]
        if r[2] != c & 0xFF or r[3] != c >> 8:
            raise RFIDError("CRC_A of the SAK does not match", "rfid_crc")
        if r[1] & 0x04:
            raise RFIDError("SAK of a UID longer than the one known", "rfid_length")
        self.sak = r[1]
        return True

    def resuming(self):
        """select(known) stopped before the last SELECT and nothing has been sent since."""
        return self.sak < 0

    def read_pages(self, page, out):
        """NTAG/Ultralight READ: 16 bytes (pages page..page+3) into out[0:16]."""
        fb = self._fb
        rf = self._rframe
        if page != self._rpage:  # the same page every card: its frame and CRC_A are kept
            rf[0] = _READ
            rf[1] = page
            crc = crc_a(rf, 0, 2)
            rf[2] = crc & 0xFF
            rf[3] = crc >> 8
            self._rpage = page
        fb[1:5] = rf
        count = self._exchange(4, self._w_read, self._data_ticks)
        r = self._rx
        if count == 1 and self.rx_last_bits == 4:
            raise RFIDError("tag answered NAK %x to READ" % (r[1] & 0x0F), "rfid_nak")
        if count != _RESP:
            raise RFIDError("READ answered %d bytes, expected 18" % count, "rfid_length")
        if crc_run(self._answer, 0x6363):
            raise RFIDError("CRC_A of the answer does not match", "rfid_crc")
        out[0:16] = self._data
        return out

    def halt(self):
        """HLTA, sent and not waited for: a correct halt gets no answer, so there is nothing to
        read; the chip transmits it while the CPU goes on, and the next frame waits until it
        is off the air (self._w_halt after StartSend). A tag in ISO 14443-4: S(DESELECT)."""
        fb = self._fb
        self.sak = 0   # (its frame takes _fb: no SELECT to resume after it)
        if self.l4:
            self.l4 = False
            fb[1:4] = _DESELECT_FRAME
            n = 3
            self._timer(40)  # 1 ms for its answer: the timer must not cut it short
        else:
            fb[1:5] = _HLTA_FRAME
            n = 4
            self._timer(self._detect_ticks)  # silence is the expected answer: a short timer
        cs = self._cs
        put = self._put
        try:
            if self._rearm:
                cs(0)
                put(_W_TRANSCEIVE)
                cs(1)
            if self._flush:
                cs(0)
                put(_W_FLUSH)
                cs(1)
                self._flush = False
            cs(0)
            put(self._fbv[n])
            cs(1)
            cs(0)
            put(_W_SEND)
            cs(1)
        except OSError:
            cs(1)
            self._flush = True
            raise
        finally:
            self._rearm = True  # the receiver waits for an answer that does not come
        self._halt_t = time.ticks_us()
        self._halting = True
        if n == 3:  # the DESELECT's answer lands in the FIFO: the next frame waits and flushes
            self._flush = True
            self._halting = 2
