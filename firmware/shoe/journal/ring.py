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
from shoe.journal.ringscan import RingScan
from shoe.link.crc import crc32

SECTOR = const(4096)
PAGE = const(256)
DATA = const(32)
ROOM = const(4064)  # SECTOR - DATA
_ERASE = const(6)  # MP_BLOCKDEV_IOCTL_BLOCK_ERASE
_MAGIC = b"SHRG"
_FF = b"\xff" * PAGE
_PAGE_BUF = bytearray(2 * PAGE)  # two pages: a program covers up to two (_prog)
_ONE = memoryview(_PAGE_BUF)[:PAGE]
_HI = memoryview(_PAGE_BUF)[PAGE:]
_TWO = memoryview(_PAGE_BUF)
_DIRTY = const(0)  # must be erased before use
_CLEAN = const(1)  # erased and stamped
_LIVE = const(2)  # a sector of the live epoch
_NEW = const(3)  # a sector of the epoch being written (not committed yet)


def _set(x):
    """A flag byte written 0x00 (0xFF: never written), one flipped bit aside: four or fewer of
    its bits set."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n <= 4


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
        self._page = _PAGE_BUF  # one page buffer for every ring (used within one call)
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
        """Program data[i:i+k] at off of the slot's sector: whole pages, 0xFF elsewhere, two
        pages in one program where the bytes span two (a card's record mostly does: one call
        of the boot ROM's program costs ~0.2 ms of the RP2040 besides the flash's 0.4 ms a
        page; interrupts stay off for the whole program, ~1.1 ms for two pages, well inside
        the 2.8 ms a UART's receive FIFO holds at 115,200 baud)."""
        end = off + k
        p = off - off % PAGE
        while p < end:
            two = end > p + PAGE   # p + 2 pages <= SECTOR then: end <= SECTOR, p page-aligned
            _ONE[:] = _FF
            if two:
                _HI[:] = _FF
                page, n = _TWO, 2 * PAGE
            else:
                page, n = _ONE, PAGE
            a = off if off > p else p
            b = end if end < p + n else p + n
            page[a - p:b - p] = data[i + a - off:i + b - off]
            if hdr is not None and p == 0:
                page[16:DATA] = hdr[16:DATA]
            self.dev.writeblocks(self.blocks[slot], page, p)
            self.programs += 2 if two else 1
            p += n

    def _read(self, slot, off, buf):
        self.dev.readblocks(self.blocks[slot], buf, off)

    # ---- boot ---------------------------------------------------------------------------------
    def _open(self):
        h = self._hdr
        best = 0
        for s in range(self.n):
            self._read(s, 0, h)
            self._st[s] = _DIRTY
            if self._header(s, h):
                ep, k = struct.unpack("<II", h[16:24])
                self._ep[s] = ep
                self._k[s] = k
                # the commit flag, written after the header: 0x00 set, 0xFF not, read by
                # majority (one flipped bit never commits a half-written epoch)
                self._tear[s] = h[30] | h[31] << 8 if h[29] != 0xFF else 0
                self._st[s] = _NEW  # provisional: a valid header
                if ep > self.max_epoch:
                    self.max_epoch = ep
                if _set(h[28]) and ep > best:
                    best = ep
            elif h[:16] == self._stamp(s) and self._all_ff(s, 16):
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

    def _header(self, s, h):
        """Is h (the first 32 bytes of slot s) a valid header of this ring? One flipped bit in
        its stamp, epoch, index or CRC is repaired in h (repair.py)."""
        if h[:16] == self._stamp(s) and struct.unpack("<I", h[24:28])[0] == crc32(h[:24]):
            return h[16:24] != _FF[:8]
        if h[16:DATA] == _FF[:16]:
            return False  # erased after its stamp (or never stamped): no header to repair
        from shoe.journal import repair

        return repair.header(self, s, h)

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
    def _next_free(self, s=None):
        """The slot the ring enters after slot s (default: the current one), or -1."""
        if s is None:
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

