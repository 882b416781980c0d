"""Frames: the unit on the wire (COBS-encoded, ended by one 0x00). The layout, the MAC's key and
tag per frame type, and the checks: docs/protocol.md section 2.

`build(...)` makes the wire bytes of one frame; `Deframer` turns a byte stream (any chunking,
any garbage) back into verified frames using one preallocated buffer: `feed(data, handler)` calls
`handler(ftype, seq, ack, payload)` for each good frame (payload is a memoryview into the buffer:
valid only during the call) and counts every rejected one in `errors` by reason: `cobs`, `crc`,
`short`, `oversize`, `version`, `type`, `mac` (the `check(ftype, signed, mac)` given to the
Deframer said no: a frame nobody holding the key made).
"""
import struct

from micropython import const

from shoe.link import cobs
from shoe.link.crc import crc32
from shoe.link.message import mac as _hmac

VERSION = const(3)
HEADER = const(6)
MAC = const(8)  # truncated HMAC-SHA256 per frame
TRAILER = const(12)  # MAC + CRC
MAX_FRAME = const(1024)  # decoded bytes, header, MAC and CRC included
MAX_PAYLOAD = const(1006)  # MAX_FRAME - HEADER - MAC - 4
MAX_WIRE = const(1030)  # COBS(MAX_FRAME) + delimiter

DATA = const(1)  # seq = transport sequence, payload = one message
ACK = const(2)  # ack only
HELLO = const(3)  # handshake, payload = codec map
REFUSE = const(4)  # handshake refused, payload = codec map {"reason": ..}
PING = const(5)  # heartbeat, carries ack
MORE = const(6)  # like DATA, but a fragment of a message whose next fragment follows

REASONS = ("cobs", "crc", "short", "oversize", "version", "type", "mac")


def frame_mac(key, tag, signed):
    """The 8-byte MAC of a frame: HMAC-SHA256(key, tag + signed)[:8]."""
    return _hmac(key, tag, signed)[:MAC]


def build(ftype, seq, ack, payload=b"", version=VERSION, key=None, tag=b""):
    """The wire bytes of one frame (COBS + delimiter); without a key the MAC is 8 zero bytes."""
    out = bytearray()
    build_into(out, bytearray(MAX_FRAME), ftype, seq, ack, payload, version, key, tag)
    return bytes(out)


try:  # the frozen image's C frame builder (cmodules/shoec): the same wire bytes
    from shoec import frame as _cframe
except ImportError:  # CPython, the unix port, a stock MicroPython image
    _cframe = None


def build_into(out, raw, ftype, seq, ack, payload=b"", version=VERSION, key=None, tag=b""):
    """Append one frame to `out` using `raw` (a bytearray(MAX_FRAME) scratch buffer, reused)."""
    if _cframe is not None:
        w = _cframe(version, ftype, seq, ack, payload, key, tag)
        if w is not None:   # None: too big, raised below
            out.extend(w)
            return
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
    mv = memoryview(raw)
    raw[m:m + MAC] = frame_mac(key, tag, mv[0:m]) if key else bytes(MAC)
    m += MAC
    struct.pack_into(">I", raw, m, crc32(mv[0:m]))
    cobs.encode_into(out, raw, m + 4)
    out.append(0)


class Deframer:
    """Byte stream -> verified frames, resynchronising at every 0x00."""

    def __init__(self, check=None):
        self.check = check  # check(ftype, signed, mac) -> bool, or None: no MAC check
        self.buf = bytearray(MAX_WIRE)
        self.mv = memoryview(self.buf)
        self.n = 0
        self.over = False
        self.errors = {}
        self.frames = 0
        self.bad_version = 0  # last wrong version byte seen (0: none)
        self.bad_hello = None  # the payload of that frame if it was a HELLO (its nonce: s.3)

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
        if m < HEADER + TRAILER:
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
            self.bad_hello = bytes(self.mv[HEADER:m - TRAILER]) if buf[1] == HELLO else None
            return
        ftype = buf[1]
        if ftype < DATA or ftype > MORE:
            self._err("type")
            return
        if self.check is not None and not self.check(ftype, self.mv[0:m - TRAILER],
                                                     self.mv[m - TRAILER:m - 4]):
            self._err("mac")  # forged, altered or replayed from another session: dropped
            return
        self.frames += 1
        handler(ftype, (buf[2] << 8) | buf[3], (buf[4] << 8) | buf[5],
                self.mv[HEADER:m - TRAILER])
