"""One record stream on a raw flash ring: records programmed in place, a 4 KiB sector erased only
when the ring enters it (or earlier, at an idle moment: `prepare()`).

    r = Ring(dev, blocks, ring_id, nonce)   # dev: rp2.Flash shape (readblocks/writeblocks/ioctl)
    for payload in r.scan(): ...            # the live epoch, every good record (log.Scan rules)
    r.append(payload)                       # one record, durable when it returns
    r.rewrite(records)                      # a new epoch (compaction), committed atomically
    r.prepare()                             # erase the next sector now (True if it did)

The sector format (stamp, header, epochs and their commit, after-tear), appends, erase ahead,
compaction and recovery: docs/journal.md "Format on flash".
"""
import array
import struct

from micropython import const

from shoe.errors import ShoeError
from shoe.journal import log
from shoe.link.crc import crc32

SECTOR = const(4096)
PAGE = const(256)
DATA = const(32)
ROOM = const(4064)  # SECTOR - DATA
_ERASE = const(6)  # MP_BLOCKDEV_IOCTL_BLOCK_ERASE
_MAGIC = b"SHRG"
_FF = b"\xff" * PAGE
_DIRTY = const(0)  # must be erased before use
_CLEAN = const(1)  # erased and stamped
_LIVE = const(2)  # a sector of the live epoch
_NEW = const(3)  # a sector of the epoch being written (not committed yet)


class RingFull(ShoeError):
    reason = "ring_full"


class Ring:
    def __init__(self, dev, blocks, ring_id, nonce, reserve=0):
        self.dev = dev
        self.blocks = blocks
        self.n = len(blocks)
        self.rid = ring_id
        self.nonce = bytes(nonce)
        self.reserve = reserve  # sectors fits() keeps free for a compaction
        self._page = bytearray(PAGE)
        self._hdr = bytearray(DATA)
        self._st = bytearray(self.n)
        self._k = array.array("I", bytes(4 * self.n))  # index in its epoch, live sectors
        self._ep = array.array("I", bytes(4 * self.n))
        # after a tear: where the skipped bytes start in the sector before (0: none)
        self._tear = array.array("H", bytes(2 * self.n))
        self.erases = 0
        self.programs = 0
        self.max_epoch = 0
        self._open()

    # ---- flash primitives -----------------------------------------------------------------
    def _stamp(self, slot):
        return _MAGIC + self.nonce + bytes((self.rid, slot, 0, 0)) + b"\x00" * 4

    def _erase(self, slot):
        self.dev.ioctl(_ERASE, self.blocks[slot])
        self.erases += 1
        self._st[slot] = _DIRTY
        self._prog(slot, 0, self._stamp(slot), 0, 16)  # proof the erase completed
        self._st[slot] = _CLEAN

    def _prog(self, slot, off, data, i, k, hdr=None):
        """Program data[i:i+k] at off of the slot's sector: whole pages, 0xFF elsewhere."""
        page = self._page
        end = off + k
        p = off - off % PAGE
        while p < end:
            page[:] = _FF
            a = off if off > p else p
            b = end if end < p + PAGE else p + PAGE
            page[a - p:b - p] = data[i + a - off:i + b - off]
            if hdr is not None and p == 0:
                page[16:DATA] = hdr[16:DATA]
            self.dev.writeblocks(self.blocks[slot], page, p)
            self.programs += 1
            p += PAGE

    def _read(self, slot, off, buf):
        self.dev.readblocks(self.blocks[slot], buf, off)

    # ---- boot ---------------------------------------------------------------------------------
    def _open(self):
        h = self._hdr
        best = 0
        for s in range(self.n):
            self._read(s, 0, h)
            self._st[s] = _DIRTY
            if h[:16] != self._stamp(s):
                continue
            ep, k, c = struct.unpack("<III", h[16:28])
            if c == crc32(h[:24]) and h[16:24] != _FF[:8]:
                self._ep[s] = ep
                self._k[s] = k
                self._tear[s] = h[30] | h[31] << 8 if h[29] != 0xFF else 0
                self._st[s] = _NEW  # provisional: a valid header
                if ep > self.max_epoch:
                    self.max_epoch = ep
                if h[28] != 0xFF and ep > best:
                    best = ep
            elif self._all_ff(s, 16):
                self._st[s] = _CLEAN
        self.epoch = best
        for s in range(self.n):
            if self._st[s] == _NEW:
                self._st[s] = _LIVE if self._ep[s] == best else _DIRTY
        self._order()
        self._cur = -1
        self._off = SECTOR
        self._wk = (self._k[self._live[-1]] + 1) if self._live else 0
        self._tear_next = 0
        self._known = False  # the write position is known once a scan has run to its end
        self._wep = best
        self._committed = True

    def _order(self):
        live = [s for s in range(self.n) if self._st[s] == _LIVE]
        live.sort(key=lambda s: self._k[s])
        self._live = live

    def _all_ff(self, slot, off):
        page = self._page
        while off < SECTOR:
            n = PAGE - off % PAGE
            mv = memoryview(page)[:n]
            self._read(slot, off, mv)
            if mv != _FF[:n]:
                return False
            off += n
        return True

    # ---- reading ------------------------------------------------------------------------------
    def scan(self):
        return RingScan(self)

    def _place(self, end, last_slot):
        """After a full scan: the writer goes on after the last good record if nothing but
        erased bytes follows it; else the next record opens a new sector, flagged with where
        the skipped (torn) bytes start."""
        live = self._live
        if self._known or not live:
            self._known = True
            return
        self._known = True
        tail = live[-1]
        self._wk = self._k[tail] + 1
        self._cur = tail
        if last_slot != tail:
            end = DATA  # no good record in the last sector
        if end >= SECTOR:
            self._off = SECTOR
        elif self._all_ff(tail, end):
            self._off = end
        else:
            self._off = SECTOR  # sealed: never program over partly programmed bytes
            self._tear_next = end

    # ---- writing ------------------------------------------------------------------------------
    def _next_free(self):
        s = self._cur
        for _ in range(self.n):
            s = (s + 1) % self.n
            if self._st[s] < _LIVE:
                return s
        return -1

    def free_sectors(self):
        st = self._st   # _DIRTY and _CLEAN (0 and 1) are the free states: counted in C
        return st.count(b"\x00") + st.count(b"\x01")

    def fits(self, n):
        """Can n more bytes be appended and still leave `reserve` sectors for a compaction?"""
        if not self._known:
            for _ in self.scan():
                pass
        have = (SECTOR - self._off) if self._cur >= 0 else 0
        return n <= have + (self.free_sectors() - self.reserve) * ROOM

    def prepare(self):
        """Erase the sector the ring enters next, if it needs it (at an idle moment)."""
        s = self._next_free()
        if s >= 0 and self._st[s] == _DIRTY:
            self._erase(s)
            return True
        return False

    def _enter(self):
        s = self._next_free()
        if s < 0:
            raise RingFull()
        if self._st[s] != _CLEAN:
            self._erase(s)
        h = self._hdr
        h[:16] = self._stamp(s)
        struct.pack_into("<II", h, 16, self._wep, self._wk)
        struct.pack_into("<I", h, 24, crc32(h[:24]))
        h[28] = 0 if self._committed else 0xFF
        t = self._tear_next
        h[29] = 0 if t else 0xFF
        h[30] = t & 0xFF if t else 0xFF
        h[31] = t >> 8 if t else 0xFF
        self._st[s] = _LIVE if self._committed else _NEW
        self._ep[s] = self._wep
        self._k[s] = self._wk
        self._tear[s] = t
        self._tear_next = 0
        self._wk += 1
        self._cur = s
        self._off = DATA
        if self._committed:
            self._live.append(s)
        return s

    def _write(self, rec):
        n = len(rec)
        i = 0
        hdr = None
        while i < n:
            if self._cur < 0 or self._off >= SECTOR:
                self._enter()
                hdr = self._hdr
            k = n - i
            if k > SECTOR - self._off:
                k = SECTOR - self._off
            self._prog(self._cur, self._off, rec, i, k, hdr)
            hdr = None
            self._off += k
            i += k

    def append(self, payload):
        """One record; durable when this returns. -> bytes written."""
        if not self._known:
            for _ in self.scan():
                pass
        rec = log.pack(payload)
        cur, off = self._cur, self._off
        try:
            self._write(rec)
        except Exception:
            if self._cur == cur and off < SECTOR:  # never write over what got programmed
                self._tear_next = off
            self._off = SECTOR
            raise
        return len(rec)

    def rewrite(self, records):
        """A new epoch holding `records`, committed when complete (the old one stays live until
        then). -> (1, bytes)."""
        if not self._known:
            for _ in self.scan():
                pass
        saved = (self._cur, self._off, self._wk, self._tear_next)
        self.max_epoch += 1
        self._wep = self.max_epoch
        self._committed = False
        self._wk = 0
        self._off = SECTOR
        self._tear_next = 0
        nbytes = 0
        try:
            for p in records:
                rec = log.pack(p)
                self._write(rec)
                nbytes += len(rec)
            if self._off >= SECTOR:  # an empty epoch still needs a sector to exist
                self._enter()
                self._prog(self._cur, 16, self._hdr, 16, 16)
        except Exception:
            for s in range(self.n):
                if self._st[s] == _NEW:
                    self._st[s] = _DIRTY
            self._cur, self._off, self._wk, self._tear_next = saved
            self._wep = self.epoch
            self._committed = True
            raise
        mark = b"\x00"
        for s in range(self.n):  # the commit
            if self._st[s] == _NEW:
                self._prog(s, 28, mark, 0, 1)
        for s in range(self.n):
            if self._st[s] == _LIVE:
                self._st[s] = _DIRTY
            elif self._st[s] == _NEW:
                self._st[s] = _LIVE
        self.epoch = self._wep
        self._committed = True
        self._order()
        return 1, nbytes


class RingScan:
    """log.Scan over the live epoch of a Ring: the same attributes (good_end, torn, holes,
    lost, hole). A missing sector (a damaged header) is a bad region like damaged bytes."""

    def __init__(self, ring):
        self.r = ring
        self.good_end = 0
        self.torn = False
        self.holes = 0
        self.lost = 0
        self.hole = False

    def _slots(self):
        r = self.r
        live = r._live
        if not live:
            return []
        last = r._k[live[-1]]
        slots = [-1] * (last + 1)  # virtual sector v -> slot (or -1: missing)
        for s in live:
            slots[r._k[s]] = s
        return slots

    def _get(self, slots, pos, buf):
        """Read len(buf) stream bytes at pos; False if any is in a missing sector."""
        n = len(buf)
        i = 0
        while i < n:
            v = pos // ROOM
            if v >= len(slots) or slots[v] < 0:
                return False
            o = pos % ROOM
            k = n - i
            if k > ROOM - o:
                k = ROOM - o
            self.r._read(slots[v], DATA + o, memoryview(buf)[i:i + k])
            i += k
            pos += k
        return True

    def _record(self, slots, pos, total, head):
        if not self._get(slots, pos, head) or head[0] != log.MAGIC:
            return None
        n, c = struct.unpack(">HI", head[1:])
        if n == 0 or n > log.MAX_RECORD or pos + log.HEAD + n > total:
            return None
        p = bytearray(n)
        if not self._get(slots, pos + log.HEAD, p) or crc32(p) != c:
            return None
        return bytes(p)

    def _resync(self, slots, pos, total, head, limit):
        one = bytearray(1)
        q = pos + 1
        while q < limit:
            if self._get(slots, q, one) and one[0] == log.MAGIC and \
                    self._record(slots, q, total, head) is not None:
                return q
            q += 1
        return -1

    def __iter__(self):
        r = self.r
        slots = self._slots()
        total = len(slots) * ROOM
        head = bytearray(log.HEAD)
        one = bytearray(1)
        pos = 0
        last_slot = -1
        end_off = SECTOR
        while pos < total:
            v = pos // ROOM
            if slots[v] >= 0 and self._get(slots, pos, one) and one[0] == 0xFF and \
                    r._all_ff(slots[v], DATA + pos % ROOM):
                pos = (v + 1) * ROOM  # this sector's data ends here
                continue
            p = self._record(slots, pos, total, head)
            if p is None:
                w = slots[v + 1] if v + 1 < len(slots) else -1
                if w >= 0 and r._tear[w] == DATA + pos % ROOM:
                    pos = (v + 1) * ROOM  # a tear found at an earlier boot, skipped then
                    continue
                nxt = self._resync(slots, pos, total, head, total)
                self.torn = True
                if nxt < 0:
                    r._place(end_off, last_slot)
                    return  # a torn tail: nothing good after it
                self.holes += 1
                self.lost += nxt - pos
                self.hole = True
                pos = nxt
                continue
            pos += log.HEAD + len(p)
            self.good_end = pos
            v = (pos - 1) // ROOM
            last_slot = slots[v]
            end_off = DATA + pos - v * ROOM
            yield p
            self.hole = False
        r._place(end_off, last_slot)
