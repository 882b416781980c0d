"""ISO/IEC 14443-4 (ISO-DEP) over the MFRC522: the block protocol an NTAG 424 DNA speaks once
selected (SAK 0x20). Loaded when a deck is loaded (RFIDReader.prepare), not at boot.

    dep = IsoDep(chip)
    dep.rats()                            # RATS -> ATS: the tag's frame size, FWT, SFGT
    n = dep.apdu(b"\\x00\\xa4...", 5)     # one APDU in an I-block -> the answer's length in
                                          # dep.rx[2:2 + n] (data + SW1 SW2)

    frames on the air (CRC_A after each)  PCB
    I-block  PCB INF                      0x02 | block number (no CID, no NAD, no chaining)
    R(ACK) / R(NAK)                       0xA2 / 0xB2 | block number
    S(WTX)   PCB WTXM                     0xF2: the tag asks for more time; echoed
    S(DESELECT)                           0xC2: MFRC522.halt() sends it (the tag then HALTs)

The shoe announces FSD = 64 (FSDI 5: the MFRC522's FIFO) and no CID; the tag's answers must fit
one frame (the shoe reads 54 bytes). Error recovery as ISO 14443-4 7.5.4: a missing or broken
answer gets an R(NAK) (the tag repeats its last block, or answers R(ACK) if it never had ours,
which is then sent again), twice at most; every other failure raises RFIDError, and the reader
deselects the tag (halt()) before it tries again with WUPA.
"""
from micropython import const
import time

from shoe.drivers.iso14443 import air_us, crc_a, crc_run
from shoe.drivers.mfrc522 import RFIDError

_RATS = b"\xe0\x50"       # RATS: FSDI 5 (64 bytes), CID 0
_ACTIVATION_TICKS = const(214)  # the ATS within FWT(activation) = 71680 / fc = 5.3 ms
_TICK_US = const(25)
_RETRIES = const(2)       # R(NAK)/R(ACK) recoveries of one exchange
_SFGT_MARGIN_US = const(100)
_BURST = const(30)        # FIFO bytes read in one SPI transfer (with its address byte: < 32)
_RD_ALL = b"\x92" * _BURST + b"\x00"   # a FIFO read burst (its tail is sliced)


class IsoDep:
    def __init__(self, chip):
        self.chip = chip
        tx = self._tx = bytearray(65)   # FIFO write address, then the frame and its CRC_A
        tx[0] = 0x12
        self._ctl = bytearray(6)        # the same for an R- or S-block
        self._ctl[0] = 0x12
        self.rx = bytearray(65)         # rx[1:] = the answer (PCB, INF, CRC_A)
        self.bn = 0
        self.fwt_ticks = 0
        self.ats = b""
        self.sw = b""                   # the status word of an APDU that failed (ntag424.read)

    def _frame(self, buf, n, rx_bytes, ticks):
        """Send buf[1:n+1] with its CRC_A -> the answer's length without its CRC (checked)."""
        c = crc_a(buf, 1, n + 1)
        buf[n + 1] = c & 0xFF
        buf[n + 2] = c >> 8
        chip = self.chip   # (the MFRC522's transceive, with the block's buffers: no method
        chip._timer(ticks)  # of its own, which would cost every RFID shoe RAM at boot)
        count = chip._transceive(n + 2, False, air_us(9 * (n + 2), rx_bytes),
                                 memoryview(buf)[:n + 3], self.rx)
        if count < 0:
            raise RFIDError("no answer from the tag", "rfid_timeout")
        self._read_fifo(count)
        if count < 3:
            raise RFIDError("ISO 14443-4 answer of %d bytes" % count, "rfid_length")
        if crc_run(memoryview(self.rx)[1:count + 1], 0x6363):
            raise RFIDError("CRC_A of the answer does not match", "rfid_crc")
        return count - 2

    def _read_fifo(self, count):
        """The answer from the MFRC522's FIFO to rx[1:count + 1], in bursts under 32 bytes: the
        rp2 port moves 32 bytes or more by DMA, which the emulated Pico (rp2040js) does not pace
        by the SPI; two CPU bursts cost about what one does for a 59-byte answer."""
        chip = self.chip
        rx = self.rx
        mv = memoryview(rx)
        i = 0
        try:
            while i < count:
                k = min(count - i, _BURST)
                keep = rx[i]   # the address byte's answer lands before this burst's data
                chip._cs(0)
                chip._xfer(memoryview(_RD_ALL)[_BURST - k:], mv[i:i + k + 1])
                chip._cs(1)
                if i:
                    rx[i] = keep
                i += k
        except OSError:
            chip._cs(1)
            chip._rearm = chip._flush = True
            raise

    def rats(self):
        """Activate the selected tag's ISO 14443-4 layer -> the ATS (its TL byte first)."""
        tx = self._tx
        tx[1:3] = _RATS
        self.chip.l4 = True   # from here on HLTA means nothing to the tag: halt() deselects
        n = self._frame(tx, 2, 8, _ACTIVATION_TICKS)
        r = self.rx
        if r[1] != n:
            raise RFIDError("ATS of %d bytes says TL %d" % (n, r[1]), "rfid_length")
        fwi, sfgi = 4, 0      # the defaults when TB(1) is absent
        if n > 1:
            t0 = r[2]
            i = 3 + (1 if t0 & 0x10 else 0)
            if t0 & 0x20:
                if i > n:
                    raise RFIDError("ATS too short for its T0", "rfid_length")
                fwi, sfgi = r[i] >> 4, r[i] & 0x0F
        if fwi > 14:
            fwi = 4
        # FWT = 256 * 16 / fc * 2^FWI (302 us at FWI 0), and a tick for the delta FWT
        self.fwt_ticks = min((302 << fwi) // _TICK_US + 2, 0xFFFF)
        self.bn = 0
        self.ats = bytes(r[1:n + 1])
        if 0 < sfgi < 15:     # the tag's start-up guard time before the first block
            time.sleep_us((302 << sfgi) + _SFGT_MARGIN_US)
        return self.ats

    def apdu(self, apdu, rx_bytes):
        """Send one APDU in an I-block -> n: the answer's INF (data + SW) is self.rx[2:2 + n].
        rx_bytes: the expected answer's size on the air (for the CPU's sleep)."""
        tx = self._tx
        n = len(apdu) + 1
        if n + 2 > 64:
            raise RFIDError("APDU too long for one frame", "rfid_length")
        tx[1] = 0x02 | self.bn
        tx[2:n + 1] = apdu
        ctl = self._ctl
        ticks = self.fwt_ticks
        left = _RETRIES
        k = self._send(tx, n, rx_bytes, ticks)
        while True:
            if k < 0:   # nothing usable came back: R(NAK) asks for the answer again
                if not left:
                    raise RFIDError("the tag's answer is lost", "rfid_protocol")
                left -= 1
                ctl[1] = 0xB2 | self.bn
                k = self._send(ctl, 1, rx_bytes, ticks)
                continue
            pcb = self.rx[1]
            if pcb & 0xE2 == 0x02 and not pcb & 0x1C:   # an I-block, no CID/NAD/chaining
                if pcb & 1 != self.bn:
                    raise RFIDError("I-block with the wrong block number", "rfid_protocol")
                self.bn ^= 1
                return k - 1
            if pcb == 0xF2 and k == 2:   # S(WTX): more time, FWT x WTXM for this answer
                m = self.rx[2] & 0x3F
                if not 1 <= m <= 59:
                    raise RFIDError("S(WTX) with WTXM %d" % m, "rfid_protocol")
                ctl[1] = 0xF2
                ctl[2] = m
                k = self._send(ctl, 2, rx_bytes, min(self.fwt_ticks * m, 0xFFFF))
                continue
            if pcb & 0xF6 == 0xA2 and left and pcb & 1 != self.bn:
                left -= 1   # R(ACK): the tag never had our I-block: send it again
                k = self._send(tx, n, rx_bytes, ticks)
                continue
            raise RFIDError("unexpected ISO 14443-4 block %02x" % pcb, "rfid_protocol")

    def _send(self, buf, n, rx_bytes, ticks):
        """One frame -> the answer's length, or -1 when it is missing or broken (recoverable)."""
        try:
            return self._frame(buf, n, rx_bytes, ticks)
        except RFIDError as e:
            if e.reason in ("rfid_stuck", "rfid_overflow", "rfid_collision"):
                raise
            return -1
