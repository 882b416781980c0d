"""CRC-32 (IEEE 802.3, the zlib/binascii polynomial) for frame and journal integrity.

`crc32(data, crc=0)` equals CPython's `binascii.crc32`. MicroPython's binascii.crc32 is used when
the port has it (the unix port does); otherwise a 256-entry table kept as an `array` (built on
first use, 1 KiB) computes it in Python. `crc32_table` is always there so tests compare both.
"""
import array

_POLY = 0xEDB88320


def _make_table():
    t = array.array("I", bytes(1024))
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        t[i] = c
    return t


_TABLE = None


def crc32_table(data, crc=0):
    """CRC-32 of `data` (bytes-like) continuing from `crc`; pure Python, table driven."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _make_table()
    t = _TABLE
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


try:
    from binascii import crc32 as _native

    def crc32(data, crc=0):
        return _native(data, crc) & 0xFFFFFFFF
except ImportError:  # a port built without binascii.crc32
    crc32 = crc32_table
