"""What the journal does at boot with bytes that do not check (imported only then, and by a
recall that meets one; the app's running code never holds it): one flipped bit is repaired,
and a bad end is told from a write cut short (docs/journal.md "One bad bit", "A damaged end is
not a tear").

    p = fix(data, crc)             # data as read and the CRC stored with it -> the corrected
                                   # bytes (data itself if it checks), or None
    record(read, pos, total)       # a record (log.pack) at pos with one flipped bit anywhere
                                   # -> (payload, end) or None; read(at, n) -> n bytes or None
    header(ring, slot, h)          # a ring sector header with one flipped bit, repaired in h
    file_tail(scan, f, pos, total) # log.Scan's bad tail at pos: damage (True) or a cut write
    ring_tail(scan, slots, pos, total)   # the same for a ring (ringscan.RingScan)

CRC-32 is linear: crc32(d ^ e) = crc32(d) ^ L(e) for words of one length, so the syndrome
s = crc32(read) ^ stored is L(e) of the error e. A flipped bit of the stored CRC gives a syndrome
of one bit; a flipped bit b of byte i of n gives x^(8(n-i)) * (1 << b) through the CRC's
register, so running the register BACKWARDS from s over zero bytes (one table step a byte)
reaches a single bit of the low byte after exactly n - i steps. CRC-32 (IEEE) has Hamming
distance 4 for words up to 11,450 bytes: no two-bit error looks like a one-bit error there, so
a correction is never a wrong guess for two flips; longer words are not corrected (MAX_WORD).
The tables (1.25 KB) are built for a correction and dropped with it.
"""
import struct

from micropython import const

from shoe.link.crc import _make_table, crc32

MAX_WORD = const(11400)  # Hamming distance 4 of CRC-32 up to 91,607 bits (Koopman)
# the record format (log.py: log imports this module when a record does not check)
HEAD = const(7)
MAGIC = const(0xA5)
MAX_RECORD = const(16384)
_LEGACY_MAX_HI = const(0x40)


def _tables():
    t = _make_table()
    top = bytearray(256)  # the top byte of t[i] -> i (a permutation for this polynomial)
    for i in range(256):
        top[t[i] >> 24] = i
    return t, top


def fix(data, c):
    """`data` corrected by one bit so that its CRC-32 is `c` (or the CRC itself had the flipped
    bit: data as it is), else None."""
    s = crc32(data) ^ c
    if s == 0 or s & (s - 1) == 0:
        return data  # intact, or one bit of the stored CRC flipped
    n = len(data)
    if n > MAX_WORD:
        return None
    t, top = _tables()
    for m in range(1, n + 1):
        i = top[s >> 24]  # undo one byte of the register: s = (r >> 8) ^ t[r & 0xFF]
        s = (((s ^ t[i]) << 8) | i) & 0xFFFFFFFF
        if s < 256 and s & (s - 1) == 0:
            b = bytearray(data)
            b[n - m] ^= s
            return bytes(b)
    return None


def near(x, want):
    """Is x `want`, or `want` with one bit flipped?"""
    d = x ^ want
    return d & (d - 1) == 0


def record(read, pos, total):
    """The record at pos (log.pack: magic, length, CRC, payload) with ONE flipped bit anywhere
    in it -> (payload, end), else None. `read(at, n)` returns n bytes or None; records end
    by `total`."""
    h = read(pos, HEAD)
    if h is None or not near(h[0], MAGIC):
        return None
    n, c = struct.unpack(">HI", h[1:])
    if h[0] == MAGIC and 0 < n <= MAX_RECORD and pos + HEAD + n <= total:
        p = read(pos + HEAD, n)
        p = fix(p, c) if p is not None else None   # a bit of the payload or of the CRC
        if p is not None:
            return p, pos + HEAD + n
    # the bit was the magic byte's or the length's: the rest checks as it is
    for m in ((n,) if h[0] != MAGIC else [n ^ (1 << j) for j in range(16)]):
        if 0 < m <= MAX_RECORD and pos + HEAD + m <= total:
            p = read(pos + HEAD, m)
            if p is not None and crc32(p) == c:
                return p, pos + HEAD + m
    return None


def header(ring, s, h):
    """h, the first 32 bytes of slot s, failed its check: repair one flipped bit of its stamp,
    epoch, index or CRC in h. -> True if it is then a valid header of this ring."""
    stamp = ring._stamp(s)
    bad = 0
    for i in range(16):
        if h[i] != stamp[i]:
            bad += 1
    if bad > 1:
        return False  # not this ring's (or erased, or another slot's)
    d = fix(bytes(h[:24]), struct.unpack("<I", h[24:28])[0])
    if d is None or d[:16] != stamp or d[16:24] == b"\xff" * 8:
        return False
    h[:24] = d
    return True


def file_tail(scan, f, pos, total):
    """The bad bytes from pos to the end of a file: damage (True), or a write cut short? A write
    cut short leaves a prefix of its record: the magic byte first, then a header or a payload
    that stops at the end of the file. Damage (more than one flipped bit, a zeroed or garbled
    tail: an event record that may have been sent already) leaves a record that is all there
    but does not check, or bytes where a record should begin that are not one."""
    f.seek(pos)
    h = f.read(HEAD)
    if h[0] != MAGIC and not (scan._legacy and h[0] <= _LEGACY_MAX_HI):
        return True
    if len(h) < (HEAD if h[0] == MAGIC else 6):
        return False
    if h[0] == MAGIC:
        n = struct.unpack(">H", h[1:3])[0]
        end = pos + HEAD + n
    else:
        n = struct.unpack(">H", h[0:2])[0]
        end = pos + 6 + n
    return n == 0 or n > MAX_RECORD or end <= total


def ring_tail(scan, slots, pos, total):
    """The bad bytes at stream offset pos of a ring, nothing good after them: damage (True), or
    a write cut short? Pages are programmed in order over erased flash, so a cut write leaves
    its record's start (the magic byte, maybe with bits still 1) and, from the cut on, erased
    bytes: the record's last byte reads 0xFF, or lies where no sector was entered. Damage the
    repair could not undo (zeroed or garbled flash) leaves anything else."""
    one = bytearray(1)
    if not scan._get(slots, pos, one) or one[0] & MAGIC != MAGIC:
        return True  # (a missing sector there: its header was beyond repair)
    head = bytearray(HEAD)
    if not scan._get(slots, pos, head):
        return False  # the header runs into a sector never entered
    n = struct.unpack(">H", head[1:3])[0]
    if n == 0:
        return True  # no write leaves a zero length (bits only go from 1 to 0)
    if n > MAX_RECORD or pos + HEAD + n > total:
        return False  # length bytes still (partly) erased
    if not scan._get(slots, pos + HEAD + n - 1, one):
        return False
    return one[0] != 0xFF
