"""Frames: the unit on the wire. Layout before COBS (all integers big-endian):

    version:1  type:1  seq:2  ack:2  payload:0..MAX_PAYLOAD  crc32:4 (of everything before it)

then COBS-encoded and terminated by one 0x00. `build(...)` makes the wire bytes of one frame;
`Deframer` turns a byte stream (any chunking, any garbage) back into verified frames using one
preallocated buffer: `feed(data, handler)` calls `handler(ftype, seq, ack, payload)` for each good
frame (payload is a memoryview into the buffer: valid only during the call) and counts every
rejected one in `errors` by reason: `cobs`, `crc`, `short`, `oversize`, `version`.
"""
import struct

from micropython import const

from shoe.link import cobs
from shoe.link.crc import crc32

VERSION = const(1)
HEADER = const(6)
MAX_FRAME = const(1024)  # decoded bytes, header and CRC included
MAX_PAYLOAD = const(1014)  # MAX_FRAME - HEADER - 4
MAX_WIRE = const(1030)  # COBS(MAX_FRAME) + delimiter

DATA = const(1)  # seq = transport sequence, payload = one message
ACK = const(2)  # ack only
HELLO = const(3)  # handshake, payload = codec map
REFUSE = const(4)  # handshake refused, payload = codec map {"reason": ..}
PING = const(5)  # heartbeat, carries ack
MORE = const(6)  # like DATA, but a fragment of a message whose next fragment follows

REASONS = ("cobs", "crc", "short", "oversize", "version", "type")


def build(ftype, seq, ack, payload=b"", version=VERSION):
    """The wire bytes of one frame (COBS + delimiter)."""
    out = bytearray()
    build_into(out, bytearray(MAX_FRAME), ftype, seq, ack, payload, version)
    return bytes(out)


def build_into(out, raw, ftype, seq, ack, payload=b"", version=VERSION):
    """Append one frame to `out` using `raw` (a bytearray(MAX_FRAME) scratch buffer, reused)."""
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise ValueError("too_big")
    raw[0] = version
    raw[1] = ftype
    raw[2] = (seq >> 8) & 0xFF
    raw[3] = seq & 0xFF
    raw[4] = (ack >> 8) & 0xFF
    raw[5] = ack & 0xFF
    raw[HEADER:HEADER + n] = payload
    m = HEADER + n
    struct.pack_into(">I", raw, m, crc32(memoryview(raw)[0:m]))
    cobs.encode_into(out, raw, m + 4)
    out.append(0)


class Deframer:
    """Byte stream -> verified frames, resynchronising at every 0x00."""

    def __init__(self):
        self.buf = bytearray(MAX_WIRE)
        self.mv = memoryview(self.buf)
        self.n = 0
        self.over = False
        self.errors = {}
        self.frames = 0
        self.bad_version = 0  # last wrong version byte seen (0: none)

    def _err(self, reason):
        self.errors[reason] = self.errors.get(reason, 0) + 1

    def reset(self):
        self.n = 0
        self.over = False

    def feed(self, data, handler):
        if not isinstance(data, (bytes, bytearray)):
            data = bytes(data)
        src = memoryview(data)
        p = 0
        end = len(data)
        cap = MAX_WIRE
        while p < end:
            j = data.find(b"\x00", p)
            stop = end if j < 0 else j
            k = stop - p
            if k:
                if self.over or self.n + k > cap:
                    self.over = True
                else:
                    self.buf[self.n:self.n + k] = src[p:stop]
                    self.n += k
            if j < 0:
                return
            p = j + 1
            self._frame(handler)

    def _frame(self, handler):
        n = self.n
        over = self.over
        self.n = 0
        self.over = False
        if over:
            self._err("oversize")
            return
        if n == 0:
            return
        m = cobs.decode_into(self.buf, n)
        if m < 0:
            self._err("cobs")
            return
        if m < HEADER + 4:
            self._err("short")
            return
        if m > MAX_FRAME:
            self._err("oversize")
            return
        buf = self.buf
        got = (buf[m - 4] << 24) | (buf[m - 3] << 16) | (buf[m - 2] << 8) | buf[m - 1]
        if crc32(self.mv[0:m - 4]) != got:
            self._err("crc")
            return
        if buf[0] != VERSION:
            self._err("version")
            self.bad_version = buf[0]
            return
        ftype = buf[1]
        if ftype < DATA or ftype > MORE:
            self._err("type")
            return
        self.frames += 1
        handler(ftype, (buf[2] << 8) | buf[3], (buf[4] << 8) | buf[5], self.mv[HEADER:m - 4])
