"""Append-only record files with per-record CRC: the power-loss-safe primitive of the journal.

A record on flash is   0xA5  length:2 (big-endian)  crc32:4 (of the payload)  payload:length
(length <= MAX_RECORD; a corrupted length is detected before anything is read or allocated)
and a file is a sequence of records (records written before the magic byte existed, without
it, are still read). A write cut by a power loss leaves a torn tail (a short header, a short
payload or a CRC mismatch, with nothing good after it); a flipped bit or a zeroed sector in the
middle leaves a hole FOLLOWED by good records. `Scan` yields every good record, repairing one flipped bit
in a record (repair.py), skipping holes (it finds the next record by its magic byte and CRC) and
counting them, and tells a torn write from a damaged tail, so the caller knows what may have
been lost and rewrites the file without the bad bytes. Only
open/read/readinto/seek/tell/write/flush/close, os.rename, os.remove and os.stat are used (all
present in MicroPython's VFS on littlefs/FAT and in the unix port).
"""
import os
import struct

from micropython import const

from shoe.link.crc import crc32

HEAD = const(7)
MAGIC = const(0xA5)
MAX_RECORD = const(16384)  # a bigger record (e.g. a huge state) is refused when written
_LEGACY_MAX_HI = const(0x40)  # a legacy record (no magic) starts with length >> 8 <= 0x40


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
    return struct.pack(">BHI", MAGIC, n, crc32(payload)) + payload


class Scan:
    """Iterate the good records of a file: `for payload in Scan(path)`. A record with one
    flipped bit (in its magic byte, length, CRC or payload) is repaired. A bad record (short
    header, impossible length, CRC mismatch) is skipped: the scan looks for the next record
    that starts with the magic byte and passes its CRC, so damage loses only the record(s) it
    hit, never the valid ones after it. Afterwards:
        good_end  the byte offset after the last good record
        torn      anything at all was discarded (a torn tail or corruption)
        holes     bad regions FOLLOWED by a good record: corruption, not a power cut
        lost      bytes discarded in holes (a torn tail not included)
        damaged   the bad tail is not what a cut write leaves (repair.file_tail): complete
                  records that do not check, zeroed or garbled bytes where a record should begin
        fixed     records repaired (one flipped bit each)
    `hole` is True while the record just yielded is the first good one after a hole."""

    def __init__(self, path):
        self.path = path
        self.good_end = 0
        self.torn = False
        self.holes = 0
        self.lost = 0
        self.hole = False
        self.damaged = False
        self.fixed = 0
        self._legacy = False
        self._end = 0

    def _record(self, f, pos, total, legacy_ok):
        """The payload of a good record at pos, or None."""
        f.seek(pos)
        h = f.read(1)
        if not h:
            return None
        if h[0] == MAGIC:
            h = f.read(HEAD - 1)
            if len(h) < HEAD - 1:
                return None
            n, c = struct.unpack(">HI", h)
            end = pos + HEAD + n
        elif legacy_ok and h[0] <= _LEGACY_MAX_HI:  # a record written before the magic byte
            h = h + f.read(5)
            if len(h) < 6:
                return None
            n, c = struct.unpack(">HI", h)
            end = pos + 6 + n
        else:
            return None
        # a corrupted length must not make us allocate what is not there; no record is empty
        # (zeroed flash would otherwise read as empty legacy records: crc32(b"") == 0)
        if n == 0 or n > MAX_RECORD or end > total:
            return None
        try:
            p = f.read(n)
        except MemoryError:
            return None
        if len(p) < n or crc32(p) != c:
            return None
        self._end = end
        if end == pos + 6 + n:
            self._legacy = True  # an old log: its tail is judged by the old format's rules
        return p

    def _read(self, f, at, n):
        f.seek(at)
        b = f.read(n)
        return b if len(b) == n else None

    def _resync(self, f, pos, total):
        """The offset of the next good (magic) record after pos, or -1."""
        buf = bytearray(64)
        q = pos + 1
        while q < total:
            f.seek(q)
            k = f.readinto(buf)
            if not k:
                return -1
            i = bytes(buf[:k]).find(b"\xa5")  # rare path (corruption): allocation is fine
            if i < 0:
                q += k
                continue
            if self._record(f, q + i, total, False) is not None:
                return q + i
            q += i + 1
        return -1

    def __iter__(self):
        total = size(self.path)
        try:
            f = open(self.path, "rb")
        except OSError:
            return
        pos = 0
        try:
            while pos < total:
                p = self._record(f, pos, total, True)
                if p is None:
                    from shoe.journal import repair

                    r = repair.record(lambda at, n: self._read(f, at, n), pos, total)
                    if r is not None:
                        self.fixed += 1
                        p, self._end = r
                if p is None:
                    self.torn = True
                    nxt = self._resync(f, pos, total)
                    if nxt < 0:  # nothing good after it: a torn write, or a damaged tail
                        self.damaged = repair.file_tail(self, f, pos, total)
                        return
                    self.holes += 1
                    self.lost += nxt - pos
                    self.hole = True
                    pos = nxt
                    continue
                pos = self._end
                self.good_end = pos
                yield p
                self.hole = False
        finally:
            f.close()


SECTOR = const(4096)


def sectors(size, n):
    """Flash erases modelled for appending n bytes to a file of `size` bytes: the number of 4 KiB
    sectors the write enters for the first time (each is erased once before it is programmed;
    a new file starts on a fresh sector). See docs/journal.md "Flash budget" for the model."""
    return (size + n + SECTOR - 1) // SECTOR - (size + SECTOR - 1) // SECTOR


class Appender:
    """An open append handle: `append(payload)` writes one record and flushes (one flash write).
    `size` is the file's size (for the erase model)."""

    def __init__(self, path):
        self.path = path
        self.size = size(path)
        self.f = open(path, "ab")
        self.writes = 0
        self.bytes = 0

    def append(self, payload):
        rec = pack(payload)
        self.f.write(rec)
        self.f.flush()
        self.writes += 1
        self.bytes += len(rec)
        self.size += len(rec)

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
