"""A bus-level model of the NXP MFRC522 and of ISO 14443-A tags, for driver tests.

`MFRC522Chip` is the device object behind the fake `machine.SPI` (`spi.device`): every SPI
transfer arrives as `transfer(tx, rx)` and is decoded like the chip does (datasheet 8.1.2):

    address byte  b7 = 1 read / 0 write, b6..b1 = register address, b0 = 0 (else rejected)
    read  : MOSI a0 a1 .. an-1 00   MISO -- d0 d1 .. dn-1   (each byte answers the address
                                                             sent one byte earlier)
    write : MOSI a  d0 d1 .. dn     every data byte goes to the same register (FIFO bursts)

Modelled: the 64-byte FIFO (FIFODataReg, FIFOLevelReg with FlushBuffer, BufferOvfl), CommandReg
(Idle, CalcCRC, Transceive, SoftReset), ComIrqReg/DivIrqReg with the Set1 write convention,
ErrorReg (CollErr, CRCErr, ParityErr, BufferOvfl), BitFramingReg (StartSend, TxLastBits),
ControlReg (RxLastBits), CollReg, TxControlReg (antenna on/off powers tags), the CRC coprocessor
(CRC_A presets from ModeReg into CRCResultReg) and VersionReg. Timing is not modelled: a
transceive completes at the StartSend write, and "no answer" sets TimerIRq (the chip's timer).

`Tag` is an NTAG21x / MIFARE Ultralight: 4- or 7-byte UID (cascade levels, BCC, SAK), states
IDLE/READY/ACTIVE/HALT, REQA/WUPA/ANTICOLLISION/SELECT/READ/HLTA, and fault modes for tags that
answer badly: see `Tag.FAULTS`. Several tags in the field at once collide bit by bit.

An ISO 14443-4 tag (an NTAG 424 DNA) is tests/fakes/iso_tag.py's IsoTag, a Tag of its own.
"""

# registers
COMMAND = 0x01
COMIEN = 0x02
DIVIEN = 0x03
COMIRQ = 0x04
DIVIRQ = 0x05
ERROR = 0x06
STATUS1 = 0x07
STATUS2 = 0x08
FIFODATA = 0x09
FIFOLEVEL = 0x0A
CONTROL = 0x0C
BITFRAMING = 0x0D
COLL = 0x0E
MODE = 0x11
TXMODE = 0x12
RXMODE = 0x13
TXCONTROL = 0x14
TXASK = 0x15
CRCRESULT_H = 0x21
CRCRESULT_L = 0x22
TMODE = 0x2A
TPRESCALER = 0x2B
TRELOAD_H = 0x2C
TRELOAD_L = 0x2D
VERSION = 0x37

# commands
IDLE = 0x00
CALCCRC = 0x03
TRANSCEIVE = 0x0C
SOFTRESET = 0x0F

_CRC_PRESETS = (0x0000, 0x6363, 0xA671, 0xFFFF)
FDT_US = 90  # a tag's frame delay time (ISO 14443-3, ~86 us at 106 kBd): its answer starts then
_READ_ONLY = (VERSION, STATUS1, STATUS2, ERROR, CRCRESULT_H, CRCRESULT_L)


def crc_a(data, preset=0x6363):
    """ISO 14443-3 CRC_A (reflected 0x8408); returns (low byte, high byte) as sent on air."""
    crc = preset
    for b in data:
        b ^= crc & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return crc & 0xFF, (crc >> 8) & 0xFF


def with_crc(data):
    lo, hi = crc_a(data)
    return bytes(data) + bytes((lo, hi))


class Tag:
    """A Type 2 tag (NTAG21x / Ultralight). pages: bytes, 4 per page (page 0 upward)."""

    # fault modes, each applying to READ unless said otherwise:
    #   crc        the 16 data bytes come back with a wrong CRC_A
    #   silent     no answer to READ (reader times out)
    #   short      READ answers 10 bytes instead of 16 + CRC (wrong length)
    #   parity     READ answer with a parity error flagged by the receiver
    #   nak        READ answered with a 4-bit NAK
    #   bcc        ANTICOLLISION answers a UID CLn whose BCC is wrong
    #   sak_crc    SELECT answers a SAK with a wrong CRC_A
    #   mute       answers nothing at all (as if absent)
    FAULTS = ("crc", "silent", "short", "parity", "nak", "bcc", "sak_crc", "mute")

    IDLE, READY, ACTIVE, HALT, PROTOCOL = 0, 1, 2, 3, 4
    ATQA = b"\x44\x00"
    SAK = 0x00

    def __init__(self, uid, pages=None, fault=None, fault_times=None, npages=45):
        if len(uid) not in (4, 7):
            raise ValueError("uid must be 4 or 7 bytes")
        self.uid = bytes(uid)
        mem = bytearray(npages * 4)
        if pages:
            mem[: len(pages)] = pages
        self.mem = mem
        self.fault = fault
        self.fault_times = fault_times  # None: always; n: only the first n times
        self.state = Tag.IDLE
        self.level = 1
        self.reads = 0

    @classmethod
    def with_code(cls, uid, code, start_page=4, **kw):
        """A tag holding a card code at start_page (the firmware's layout: 15 chars + 0x00)."""
        if isinstance(code, str):
            code = code.encode()
        pages = bytearray(start_page * 4)
        pages[0 : len(uid[:4])] = uid[:4]
        pages += bytes(code) + b"\x00" * (16 - len(code))
        return cls(uid, pages, **kw)

    def _faulty(self, kind):
        if self.fault != kind:
            return False
        if self.fault_times is None:
            return True
        if self.fault_times > 0:
            self.fault_times -= 1
            return True
        return False

    def power_off(self):
        self.state = Tag.IDLE
        self.level = 1

    def _cl_bytes(self, level):
        u = self.uid
        if len(u) == 4:
            part = u
        elif level == 1:
            part = b"\x88" + u[:3]
        else:
            part = u[3:7]
        bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
        return part + bytes((bcc,))

    def respond(self, frame, tx_last_bits):
        """-> None (silence) or (bytes, rx_last_bits, error_bits)."""
        if self.fault == "mute":
            return None
        short = tx_last_bits == 7 and len(frame) == 1
        if short and frame[0] in (0x26, 0x52):  # REQA / WUPA
            if frame[0] == 0x26 and self.state == Tag.HALT:
                return None
            if self.state in (Tag.IDLE, Tag.HALT) or frame[0] == 0x52:
                self.state = Tag.READY
                self.level = 1
                atqa = self.ATQA if len(self.uid) == 7 else b"\x04\x00"
                return atqa, 0, 0
            return None
        if tx_last_bits != 0:
            return None
        if self.state == Tag.READY:
            sel = 0x93 if self.level == 1 else 0x95
            if len(frame) == 2 and frame[0] == sel and frame[1] == 0x20:
                cl = bytearray(self._cl_bytes(self.level))
                if self._faulty("bcc"):
                    cl[4] ^= 0x5A
                return bytes(cl), 0, 0
            if len(frame) == 9 and frame[0] == sel and frame[1] == 0x70:
                bad_crc = crc_a(frame[:7]) != (frame[7], frame[8])
                if bad_crc or frame[2:7] != self._cl_bytes(self.level):
                    self.state = Tag.IDLE
                    return None
                if len(self.uid) == 7 and self.level == 1:
                    self.level = 2
                    sak = 0x04  # cascade bit: UID not complete
                else:
                    self.state = Tag.ACTIVE
                    sak = self.SAK  # 0x00: Ultralight / NTAG21x
                out = bytearray(with_crc(bytes((sak,))))
                if self._faulty("sak_crc"):
                    out[2] ^= 0xFF
                return bytes(out), 0, 0
            self.state = Tag.IDLE
            return None
        if self.state == Tag.ACTIVE:
            return self.active(frame)
        return None

    def active(self, frame):
        """A frame in the ACTIVE state (selected): the Type 2 commands."""
        if len(frame) == 4 and frame[0] == 0x50 and frame[1] == 0x00:  # HLTA
            if crc_a(frame[:2]) == (frame[2], frame[3]):
                self.state = Tag.HALT
            return None
        if len(frame) == 4 and frame[0] == 0x30:  # READ
            if crc_a(frame[:2]) != (frame[2], frame[3]):
                self.state = Tag.IDLE
                return bytes((0x01,)), 4, 0  # NAK for CRC error
            page = frame[1]
            npages = len(self.mem) // 4
            if page >= npages or self._faulty("nak"):
                self.state = Tag.IDLE
                return bytes((0x00,)), 4, 0  # NAK (4 bits)
            self.reads += 1
            data = bytearray()
            for i in range(4):
                p = (page + i) % npages
                data += self.mem[p * 4 : p * 4 + 4]
            if self._faulty("silent"):
                return None
            out = bytearray(with_crc(bytes(data)))
            if self._faulty("crc"):
                out[16] ^= 0xFF
            if self._faulty("short"):
                return bytes(out[:10]), 0, 0
            if self._faulty("parity"):
                return bytes(out), 0, 0x02
            return bytes(out), 0, 0
        self.state = Tag.IDLE
        return None


class MFRC522Chip:
    """Register-level model. tags: list of Tag in the field (mutate it to move cards)."""

    def __init__(self, version=0x92, cs=None, tags=None):
        self.version = version
        self.cs = cs  # if given, every transfer checks that CS is low (asserted)
        self.tags = tags if tags is not None else []
        self.frames = []  # (frame bytes, tx_last_bits) of every transceive, for assertions
        self.record = True  # False: keep no frames (allocation tests, long runs)
        self.timeouts = []  # (first frame byte, timer timeout in us) per transceive, if record
        self.transfers = 0
        self.dead = False  # a chip that is not there: MISO floats high (reads 0xFF)
        self.stuck = False  # a hung chip: StartSend starts nothing, no IRQ bit ever comes
        # callable(frame) run before the tags hear each frame (recorded transceives only): a
        # test moves tags in or out of the field there, in the middle of a poll or of a read
        self.before_frame = None
        self._reset()

    def _reset(self):
        self.regs = bytearray(64)
        r = self.regs
        r[COMMAND] = 0x20
        r[COMIEN] = 0x80
        r[COMIRQ] = 0x14
        r[STATUS1] = 0x21
        r[FIFOLEVEL] = 0
        r[CONTROL] = 0x10
        r[MODE] = 0x3F
        r[TXCONTROL] = 0x80
        r[VERSION] = self.version
        self.fifo = bytearray()
        self.transceiving = False

    # -- the SPI side ------------------------------------------------------------------------
    def transfer(self, tx, rx):
        if self.cs is not None and self.cs.value() != 0:
            raise RuntimeError("SPI transfer with CS not asserted")
        self.transfers += 1
        n = len(tx)
        if self.dead:
            if rx is not None:
                for i in range(n):
                    rx[i] = 0xFF
            return
        if n == 0:
            return
        first = tx[0]
        if first & 0x01:
            raise RuntimeError("address byte bit 0 must be 0: %02x" % first)
        if first & 0x80:
            if rx is not None:
                rx[0] = 0
            for i in range(n - 1):
                a = tx[i]
                if not a & 0x80 or a & 0x01:
                    raise RuntimeError("bad read address byte %02x" % a)
                v = self._read((a >> 1) & 0x3F)
                if rx is not None:
                    rx[i + 1] = v
            if tx[n - 1] != 0:
                raise RuntimeError("read burst must end with 0x00")
        else:
            addr = (first >> 1) & 0x3F
            for i in range(1, n):
                self._write(addr, tx[i])

    def _read(self, addr):
        r = self.regs
        if addr == FIFODATA:
            if self.fifo:
                v = self.fifo[0]
                self.fifo[:] = self.fifo[1:]
                return v
            return 0
        if addr == FIFOLEVEL:
            return len(self.fifo)
        return r[addr]

    def _irq_write(self, addr, v):
        if v & 0x80:
            self.regs[addr] |= v & 0x7F
        else:
            self.regs[addr] &= ~v & 0x7F

    def _write(self, addr, v):
        r = self.regs
        if addr == FIFODATA:
            if len(self.fifo) >= 64:
                r[ERROR] |= 0x10
            else:
                self.fifo.append(v)
        elif addr == FIFOLEVEL:
            if v & 0x80:
                self.fifo[:] = b""
                r[ERROR] &= ~0x10 & 0xFF
        elif addr == COMIRQ or addr == DIVIRQ:
            self._irq_write(addr, v)
        elif addr == COMMAND:
            self._command(v)
        elif addr == BITFRAMING:
            r[addr] = v
            if v & 0x80 and (r[COMMAND] & 0x0F) == TRANSCEIVE and not self.stuck:
                self._transceive()
        elif addr == TXCONTROL:
            r[addr] = v
            if v & 0x03 == 0:
                for t in self.tags:
                    t.power_off()
        elif addr in _READ_ONLY:
            pass  # read-only
        else:
            r[addr] = v

    def _command(self, v):
        cmd = v & 0x0F
        r = self.regs
        if cmd == SOFTRESET:
            self._reset()
            return
        r[COMMAND] = v & 0x3F
        if cmd == CALCCRC:
            lo, hi = crc_a(self.fifo, _CRC_PRESETS[r[MODE] & 0x03])
            self.fifo[:] = b""
            r[CRCRESULT_L] = lo
            r[CRCRESULT_H] = hi
            r[DIVIRQ] |= 0x04
            r[STATUS1] |= 0x20
        elif cmd == IDLE:
            pass

    def antenna_on(self):
        return self.regs[TXCONTROL] & 0x03 == 0x03

    def timeout_us(self):
        """The timer's timeout as programmed: (2 * prescaler + 1) * (reload + 1) / 13.56 MHz."""
        r = self.regs
        presc = ((r[TMODE] & 0x0F) << 8) | r[TPRESCALER]
        reload = (r[TRELOAD_H] << 8) | r[TRELOAD_L]
        return (2 * presc + 1) * (reload + 1) * 100 // 1356

    def _silence(self):
        # no answer: the timer runs out only if TAuto started it at the end of the transmission
        if self.regs[TMODE] & 0x80:
            self.regs[COMIRQ] |= 0x01

    def _transceive(self):
        r = self.regs
        last = r[BITFRAMING] & 0x07
        r[ERROR] = 0
        r[COLL] = 0x80
        r[CONTROL] = 0x10
        r[COMIRQ] |= 0x40  # TxIRq
        timeout = self.timeout_us()
        if not self.record and (not self.tags or not self.antenna_on()):
            # nobody in the field: the chip's timer runs out (this path allocates nothing, so
            # the driver's empty-field poll can be checked under heap_lock)
            self.fifo[:] = b""
            self._silence()
            return
        frame = bytes(self.fifo)
        self.fifo[:] = b""
        if self.record:
            self.frames.append((frame, last))
            self.timeouts.append((frame[0] if frame else None, timeout))
            if self.before_frame is not None:
                self.before_frame(frame)
        answers = []
        if self.antenna_on() and timeout >= FDT_US:  # a shorter timer fires before any answer
            for t in self.tags:
                a = t.respond(frame, last)
                if a is not None:
                    answers.append(a)
        if not answers:
            self._silence()  # TimerIRq: nothing came back before the timer ran out
            return
        data, rx_last, err = answers[0]
        if len(answers) > 1:
            # bitwise collision: first differing bit position (1-based) goes to CollReg
            merged = bytearray(data)
            pos = 0
            for other, _, _ in answers[1:]:
                for i in range(min(len(merged), len(other))):
                    diff = merged[i] ^ other[i]
                    if diff and not pos:
                        bit = 0
                        while not diff & (1 << bit):
                            bit += 1
                        pos = i * 8 + bit + 1
                    merged[i] |= other[i]
            if pos:
                data = bytes(merged)
                err |= 0x08
                r[COLL] = pos & 0x1F if pos < 32 else 0
        self.fifo[:] = data[:64]
        r[CONTROL] = 0x10 | (rx_last & 0x07)
        r[ERROR] = err
        r[COMIRQ] |= 0x20  # RxIRq
        if err:
            r[COMIRQ] |= 0x02  # ErrIRq
