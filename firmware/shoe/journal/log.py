"""Append-only record files with per-record CRC: the power-loss-safe primitive of the journal.

A record on flash is   length:2 (big-endian)  crc32:4 (of the payload)  payload:length
(length <= MAX_RECORD; a corrupted length is detected before anything is read or allocated)
and a file is a sequence of records. A write cut by a power loss leaves a torn tail (a short
header, a short payload or a CRC mismatch); `scan()` yields the good records and stops at the first
bad one, reporting the offset where the good prefix ends, so the caller can rewrite the file
without the tail. Only open/read/write/flush/close, os.rename, os.remove and os.stat are used
(all present in MicroPython's VFS on littlefs/FAT and in the unix port).
"""
import os
import struct

from micropython import const

from shoe.link.crc import crc32

HEAD = const(6)
MAX_RECORD = const(16384)  # a bigger record (e.g. a huge state) is refused when written


def exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def size(path):
    try:
        return os.stat(path)[6]
    except OSError:
        return 0


def remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def pack(payload):
    n = len(payload)
    if n > MAX_RECORD:
        raise ValueError("record_too_big")
    return struct.pack(">HI", n, crc32(payload)) + payload


class Scan:
    """Iterate the good records of a file: `for payload in Scan(path)`; afterwards `good_end` is
    the byte offset after the last good record and `torn` says whether anything followed it."""

    def __init__(self, path):
        self.path = path
        self.good_end = 0
        self.torn = False

    def __iter__(self):
        total = size(self.path)
        try:
            f = open(self.path, "rb")
        except OSError:
            return
        try:
            while True:
                h = f.read(HEAD)
                if not h:
                    return
                if len(h) < HEAD:
                    self.torn = True
                    return
                n, c = struct.unpack(">HI", h)
                # a corrupted length must not make us allocate what is not there
                if n > MAX_RECORD or self.good_end + HEAD + n > total:
                    self.torn = True
                    return
                try:
                    p = f.read(n)
                except MemoryError:
                    self.torn = True
                    return
                if len(p) < n or crc32(p) != c:
                    self.torn = True
                    return
                self.good_end += HEAD + n
                yield p
        finally:
            f.close()


class Appender:
    """An open append handle: `append(payload)` writes one record and flushes (one flash write)."""

    def __init__(self, path):
        self.path = path
        self.f = open(path, "ab")
        self.writes = 0
        self.bytes = 0

    def append(self, payload):
        rec = pack(payload)
        self.f.write(rec)
        self.f.flush()
        self.writes += 1
        self.bytes += len(rec)

    def close(self):
        if self.f is not None:
            self.f.close()
            self.f = None


def rewrite(path, records, tmp_suffix=".new"):
    """Atomically replace `path` by a file holding `records` (an iterable of payloads): write a
    temporary file, flush, close, rename over. Returns (writes, bytes)."""
    tmp = path + tmp_suffix
    f = open(tmp, "wb")
    nbytes = 0
    try:
        for p in records:
            rec = pack(p)
            f.write(rec)
            nbytes += len(rec)
        f.flush()
    finally:
        f.close()
    try:
        os.rename(tmp, path)
    except OSError:  # a filesystem that cannot rename over an existing file (FAT)
        remove(path)
        os.rename(tmp, path)
    return 1, nbytes
