"""Single-bit correction for the journal's CRC-32 checked words (a record's payload, a ring
sector's header): one flipped bit in flash is repaired at boot instead of losing what it hit.

    p = fix(data, crc)       # data as read and the CRC stored with it -> the corrected bytes
                             # (data itself if it checks), or None (not one flipped bit)
    near(x, want)            # x is want, or want with one bit flipped
    mostly_zero(x)           # a flag byte written 0x00 (0xFF: never written), one bit aside
(log.repair uses them for a record with one flipped bit anywhere in it.)

CRC-32 is linear: crc32(d ^ e) = crc32(d) ^ L(e) for words of one length, so the syndrome
s = crc32(read) ^ stored is L(e) of the error e. A flipped bit of the stored CRC gives a syndrome
of one bit; a flipped bit b of byte i of n gives x^(8(n-i)) * (1 << b) through the CRC's
register, so running the register BACKWARDS from s over zero bytes (one table step a byte)
reaches a single bit of the low byte after exactly n - i steps. CRC-32 (IEEE) has Hamming
distance 4 for words up to 11,450 bytes: no two-bit error looks like a one-bit error there, so
a correction is never a wrong guess for two flips; longer words are not corrected (MAX_WORD).
The tables (1.25 KB) are built for a correction and dropped with it: this runs only when a
check has failed (docs/journal.md "One bad bit").
"""
from micropython import const

from shoe.link.crc import _make_table, crc32

MAX_WORD = const(11400)  # Hamming distance 4 of CRC-32 up to 91,607 bits (Koopman)


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
    """Is byte x `want` or `want` with one bit flipped?"""
    d = x ^ want
    return d & (d - 1) == 0


def mostly_zero(x):
    """A byte written as 0x00 and never rewritten reads as 0x00 or, after one flip, one bit;
    0xFF (erased) after one flip has seven: four or fewer bits set count as written."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n <= 4
