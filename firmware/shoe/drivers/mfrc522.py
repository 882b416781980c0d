"""NXP MFRC522 RFID front end on SPI: ISO 14443-A card detection, selection and NTAG reads.

    chip = MFRC522(spi, cs, rst=None)   # machine.SPI (mode 0, <= 10 MHz, MSB first), Pin objects
    chip.init()                         # reset, check VersionReg, timer, 100% ASK, antenna on
    atqa = chip.request(wake=True)      # WUPA (wake also halted tags) / REQA; None = no tag
    uid = chip.select()                 # anticollision + select, cascade levels 1-2 -> bytes
    chip.read_pages(4, buf)             # NTAG/Ultralight READ: 16 bytes = pages 4..7 into buf
    chip.halt()                         # HLTA: quiet until woken (WUPA) or re-powered

Everything that goes wrong on the air raises RFIDError with a short `reason`:
    rfid_no_chip   VersionReg reads 0x00/0xFF (chip missing, SPI miswired)
    rfid_timeout   no answer before the chip's timer ran out (tag left, or does not answer)
    rfid_crc       CRC_A of an answer is wrong            rfid_parity / rfid_protocol  RX errors
    rfid_collision two tags answered at once              rfid_bcc     UID check byte wrong
    rfid_length    an answer of the wrong length          rfid_nak     the tag answered NAK
    rfid_overflow  FIFO overflow                          rfid_stuck   chip never finished

SPI framing (datasheet 8.1.2.3): address byte = (reg << 1) | 0x80 to read, (reg << 1) to write.
Answers' CRCs are checked with the chip's own CRC coprocessor (CalcCRC -> CRCResultReg). Buffers
are preallocated; a poll allocates only the returned UID.
"""
from micropython import const
import time

# registers (datasheet 9.2)
_COMMAND = const(0x01)
_COMIRQ = const(0x04)
_DIVIRQ = const(0x05)
_ERROR = const(0x06)
_FIFODATA = const(0x09)
_FIFOLEVEL = const(0x0A)
_CONTROL = const(0x0C)
_BITFRAMING = const(0x0D)
_COLL = const(0x0E)
_MODE = const(0x11)
_TXMODE = const(0x12)
_RXMODE = const(0x13)
_TXCONTROL = const(0x14)
_TXASK = const(0x15)
_CRC_H = const(0x21)
_CRC_L = const(0x22)
_TMODE = const(0x2A)
_TPRESCALER = const(0x2B)
_TRELOAD_H = const(0x2C)
_TRELOAD_L = const(0x2D)
_VERSION = const(0x37)

# commands (datasheet 10.3)
_CMD_IDLE = const(0x00)
_CMD_CALCCRC = const(0x03)
_CMD_TRANSCEIVE = const(0x0C)
_CMD_SOFTRESET = const(0x0F)

# ISO 14443-3 / NTAG commands
_REQA = const(0x26)
_WUPA = const(0x52)
_SEL_CL1 = const(0x93)
_SEL_CL2 = const(0x95)
_CASCADE_TAG = const(0x88)
_READ = const(0x30)
_HLTA = const(0x50)

# ComIrqReg bits: TxIRq 0x40, RxIRq 0x20, IdleIRq 0x10, ErrIRq 0x02, TimerIRq 0x01
_IRQ_RX = const(0x20)
_IRQ_IDLE = const(0x10)
_IRQ_ERR = const(0x02)
_IRQ_TIMER = const(0x01)
# ErrorReg bits
_ERR_OVFL = const(0x10)
_ERR_COLL = const(0x08)
_ERR_CRC = const(0x04)
_ERR_PARITY = const(0x02)
_ERR_PROTOCOL = const(0x01)

_POLL_LIMIT = const(2000)  # register polls before declaring the chip stuck
_PRESCALER = const(0xA9)  # timer: 13.56 MHz / (2 * 169 + 1) = 40 kHz, one tick = 25 us
_TICK_US = const(25)
KNOWN_VERSIONS = (0x88, 0x90, 0x91, 0x92, 0x12, 0xB2)


class RFIDError(Exception):
    def __init__(self, message, reason):
        super().__init__(message)
        self.reason = reason


class MFRC522:
    def __init__(self, spi, cs, rst=None, timeout_ms=5, detect_timeout_us=1000):
        self._spi = spi
        self._cs = cs
        self._rst = rst
        # The chip's timer starts when a frame has been sent and stops at the first bit of the
        # answer (TAuto); a tag answers after its frame delay time (~90 us, ISO 14443-3). So the
        # timeout only bounds silence: short for WUPA (an empty field is the common case and
        # the CPU busy-polls until the timer fires), longer for data commands (NTAG21x
        # datasheet: READ timeout 5 ms).
        self._data_ticks = timeout_ms * 1000 // _TICK_US
        self._detect_ticks = max(detect_timeout_us // _TICK_US, 4)
        self._treload = -1
        self._tx = bytearray(2)
        self._rx = bytearray(2)
        self._frame = bytearray(9)  # outgoing frame incl. CRC
        self._resp = bytearray(18)  # incoming answer (16 data + CRC_A)
        self._uid = bytearray(10)
        self._burst = bytearray(20)  # SPI bursts to/from the FIFO (address bytes + data)
        self._burst_rx = bytearray(20)
        self.version = 0
        self.rx_last_bits = 0
        cs.init(cs.OUT, value=1)
        if rst is not None:
            rst.init(rst.OUT, value=1)

    # -- registers ---------------------------------------------------------------------------
    def _wr(self, reg, value):
        tx = self._tx
        tx[0] = (reg << 1) & 0x7E
        tx[1] = value
        self._cs(0)
        try:
            self._spi.write(tx)
        finally:
            self._cs(1)

    def _rd(self, reg):
        tx = self._tx
        tx[0] = ((reg << 1) & 0x7E) | 0x80
        tx[1] = 0
        self._cs(0)
        try:
            self._spi.write_readinto(tx, self._rx)
        finally:
            self._cs(1)
        return self._rx[1]

    def _fifo_write(self, buf, n):
        """buf[:n] into the FIFO in one SPI burst (all bytes go to FIFODataReg, DS 8.1.2.2)."""
        if n == 1:
            self._wr(_FIFODATA, buf[0])  # the empty-field poll (REQA/WUPA): allocation-free
            return
        b = self._burst
        b[0] = (_FIFODATA << 1) & 0x7E
        for i in range(n):
            b[i + 1] = buf[i]
        self._cs(0)
        try:
            self._spi.write(memoryview(b)[: n + 1])
        finally:
            self._cs(1)

    def _fifo_read(self, n):
        """n FIFO bytes into self._resp in one burst: MOSI a a .. a 00, MISO -- d0 .. dn-1."""
        b = self._burst
        rx = self._burst_rx
        a = ((_FIFODATA << 1) & 0x7E) | 0x80
        for i in range(n):
            b[i] = a
        b[n] = 0
        self._cs(0)
        try:
            self._spi.write_readinto(memoryview(b)[: n + 1], memoryview(rx)[: n + 1])
        finally:
            self._cs(1)
        r = self._resp
        for i in range(n):
            r[i] = rx[i + 1]

    def _set(self, reg, mask):
        self._wr(reg, self._rd(reg) | mask)

    def _clear(self, reg, mask):
        self._wr(reg, self._rd(reg) & ~mask & 0xFF)

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
        self._wr(_COMMAND, _CMD_SOFTRESET)
        n = 0
        while self._rd(_COMMAND) & 0x10:  # PowerDown bit clears when the reset has finished
            n += 1
            if n > _POLL_LIMIT:
                raise RFIDError("MFRC522 stays in power-down after reset", "rfid_stuck")
        self.version = v
        # timer: TAuto (starts at the end of each transmission), prescaler 0x0A9 (25 us/tick)
        self._wr(_TMODE, 0x80 | (_PRESCALER >> 8))
        self._wr(_TPRESCALER, _PRESCALER & 0xFF)
        self._treload = -1
        self._timer(self._data_ticks)
        self._wr(_TXASK, 0x40)  # force 100 % ASK modulation
        self._wr(_MODE, 0x3D)  # CRC preset 0x6363 (ISO 14443-3 CRC_A)
        self._wr(_TXMODE, 0x00)  # 106 kBd, no hardware CRC: CRCs are appended/checked here
        self._wr(_RXMODE, 0x00)
        self._clear(_COLL, 0x80)  # ValuesAfterColl = 0: bits after a collision are cleared
        self.antenna(True)
        return v

    def _timer(self, ticks):
        if ticks != self._treload:
            self._wr(_TRELOAD_H, (ticks >> 8) & 0xFF)
            self._wr(_TRELOAD_L, ticks & 0xFF)
            self._treload = ticks

    def antenna(self, on):
        if on:
            if self._rd(_TXCONTROL) & 0x03 != 0x03:
                self._set(_TXCONTROL, 0x03)
        else:
            self._clear(_TXCONTROL, 0x03)

    # -- CRC coprocessor ---------------------------------------------------------------------
    def _crc(self, buf, n):
        """CRC_A of buf[:n] by the chip -> (low, high) as sent on the air."""
        self._wr(_COMMAND, _CMD_IDLE)
        self._wr(_DIVIRQ, 0x04)  # clear CRCIRq
        self._wr(_FIFOLEVEL, 0x80)  # flush
        self._fifo_write(buf, n)
        self._wr(_COMMAND, _CMD_CALCCRC)
        k = 0
        while not self._rd(_DIVIRQ) & 0x04:
            k += 1
            if k > _POLL_LIMIT:
                raise RFIDError("CRC coprocessor did not finish", "rfid_stuck")
        self._wr(_COMMAND, _CMD_IDLE)
        return self._rd(_CRC_L), self._rd(_CRC_H)

    # -- the air -----------------------------------------------------------------------------
    def _transceive(self, n, tx_last_bits=0):
        """Send self._frame[:n]; the answer lands in self._resp. -> byte count, or -1 if no
        answer came before the timer ran out (no exception: an empty field is the common case
        and must not allocate). self.rx_last_bits = valid bits of the last byte (0 = all 8)."""
        self._wr(_COMMAND, _CMD_IDLE)
        self._wr(_COMIRQ, 0x7F)  # clear all IRQ bits
        self._wr(_FIFOLEVEL, 0x80)
        self._fifo_write(self._frame, n)
        self._wr(_COMMAND, _CMD_TRANSCEIVE)
        self._wr(_BITFRAMING, 0x80 | (tx_last_bits & 0x07))  # StartSend + TxLastBits
        k = 0
        while True:
            irq = self._rd(_COMIRQ)
            if irq & (_IRQ_RX | _IRQ_IDLE):
                break
            if irq & _IRQ_TIMER:
                self._wr(_BITFRAMING, tx_last_bits & 0x07)  # StartSend off
                return -1
            k += 1
            if k > _POLL_LIMIT:
                self._wr(_BITFRAMING, tx_last_bits & 0x07)  # StartSend off
                raise RFIDError("MFRC522 never finished the transceive", "rfid_stuck")
        self._wr(_BITFRAMING, tx_last_bits & 0x07)  # StartSend off
        err = self._rd(_ERROR)
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
        count = self._rd(_FIFOLEVEL) & 0x7F
        self.rx_last_bits = self._rd(_CONTROL) & 0x07
        if count > len(self._resp):
            self._wr(_FIFOLEVEL, 0x80)  # flush what does not fit
            raise RFIDError("answer of %d bytes is too long" % count, "rfid_length")
        if count:
            self._fifo_read(count)
        return count

    def _exchange(self, n, tx_last_bits=0):
        """_transceive where silence is an error (rfid_timeout)."""
        self._timer(self._data_ticks)
        count = self._transceive(n, tx_last_bits)
        if count < 0:
            raise RFIDError("no answer from the tag", "rfid_timeout")
        return count

    def _check_crc(self, count):
        lo, hi = self._crc(self._resp, count - 2)
        if lo != self._resp[count - 2] or hi != self._resp[count - 1]:
            raise RFIDError("CRC_A of the answer does not match", "rfid_crc")

    def request(self, wake=False):
        """REQA (or WUPA, which also wakes halted tags). -> ATQA (2 bytes) or None if no tag."""
        self._timer(self._detect_ticks)
        self._frame[0] = _WUPA if wake else _REQA
        count = self._transceive(1, 7)
        if count < 0:
            return None
        if count != 2 or self.rx_last_bits != 0:
            raise RFIDError("ATQA of %d bytes/%d bits" % (count, self.rx_last_bits),
                            "rfid_length")
        return bytes(self._resp[:2])

    def select(self):
        """Anticollision + select over cascade levels -> the UID (4 or 7 bytes)."""
        uid = self._uid
        n = 0
        for sel in (_SEL_CL1, _SEL_CL2, 0x97):
            f = self._frame
            f[0] = sel
            f[1] = 0x20  # NVB: 2 bytes sent, no UID bits known
            count = self._exchange(2)
            if count != 5 or self.rx_last_bits != 0:
                raise RFIDError("UID CLn of %d bytes" % count, "rfid_length")
            r = self._resp
            if r[0] ^ r[1] ^ r[2] ^ r[3] ^ r[4]:
                raise RFIDError("UID check byte (BCC) wrong", "rfid_bcc")
            f[1] = 0x70  # NVB: 7 bytes, the whole UID CLn
            for i in range(5):
                f[2 + i] = r[i]
            lo, hi = self._crc(f, 7)
            f[7] = lo
            f[8] = hi
            count = self._exchange(9)
            if count != 3:
                raise RFIDError("SAK of %d bytes" % count, "rfid_length")
            self._check_crc(3)
            sak = self._resp[0]
            if f[2] == _CASCADE_TAG:
                for i in range(3):
                    uid[n + i] = f[3 + i]
                n += 3
            else:
                for i in range(4):
                    uid[n + i] = f[2 + i]
                n += 4
            if not sak & 0x04:  # cascade bit clear: UID complete
                return bytes(uid[:n])
        raise RFIDError("UID longer than 3 cascade levels", "rfid_length")

    def read_pages(self, page, out):
        """NTAG/Ultralight READ: 16 bytes (pages page..page+3) into out[0:16]."""
        f = self._frame
        f[0] = _READ
        f[1] = page
        f[2], f[3] = self._crc(f, 2)
        count = self._exchange(4)
        if count == 1 and self.rx_last_bits == 4:
            raise RFIDError("tag answered NAK %x to READ" % (self._resp[0] & 0x0F), "rfid_nak")
        if count != 18:
            raise RFIDError("READ answered %d bytes, expected 18" % count, "rfid_length")
        self._check_crc(18)
        r = self._resp
        for i in range(16):
            out[i] = r[i]
        return out

    def halt(self):
        """HLTA: a correct halt gets no answer, so silence here is success."""
        f = self._frame
        f[0] = _HLTA
        f[1] = 0
        f[2], f[3] = self._crc(f, 2)
        self._timer(self._detect_ticks)  # silence is the expected answer: do not wait long
        self._transceive(4)
