"""Reading a flash ring's live epoch (ring.py): every good record in order, by log.Scan's rules
(a record with one flipped bit repaired, a bad region followed by good records a hole, a bad
region with nothing good after it a torn write or a damaged tail), across the sectors of the
epoch. docs/journal.md "Format on flash" and "One bad bit".
"""
import struct

from micropython import const

from shoe.journal import log

SECTOR = const(4096)
DATA = const(32)
ROOM = const(4064)  # SECTOR - DATA
_FF = b"\xff" * 256


class RingScan(log.Scan):
    """log.Scan over the live epoch of a Ring: the same attributes (good_end, torn, holes,
    lost, hole, damaged, fixed). A missing sector (a header beyond repair) is a bad region like
    damaged bytes."""

    def __init__(self, ring):
        log.Scan.__init__(self, None)
        self.r = ring

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
        if not self._get(slots, pos + log.HEAD, p) or log.crc32(p) != c:
            return None
        self._end = pos + log.HEAD + n
        return bytes(p)

    def _repair(self, slots, pos, total):
        def read(at, n):
            b = bytearray(n)
            return bytes(b) if self._get(slots, at, b) else None

        from shoe.journal import repair

        r = repair.record(read, pos, total)
        if r is None:
            return None
        self.fixed += 1
        self._end = r[1]
        return r[0]

    def _resync(self, slots, pos, total, head, limit):
        """The stream offset of the next good record after pos, or -1 (read a page at a time;
        a missing sector is skipped whole)."""
        buf = bytearray(256)
        q = pos + 1
        while q < limit:
            v = q // ROOM
            if slots[v] < 0:
                q = (v + 1) * ROOM
                continue
            k = min(256, ROOM - q % ROOM, limit - q)
            mv = memoryview(buf)[:k]
            self.r._read(slots[v], DATA + q % ROOM, mv)
            i = bytes(mv).find(b"\xa5")  # rare path (damage): allocation is fine
            if i < 0:
                q += k
            elif self._record(slots, q + i, total, head) is not None:
                return q + i
            else:
                q += i + 1
        return -1

    def _erased(self, slot, off):
        """Are the bytes from off to the end of the sector erased (0xFF), but for at most one
        flipped bit? Then the sector's data ends at off."""
        r = self.r
        page = r._page
        bad = 0
        while off < SECTOR:
            n = 256 - off % 256
            mv = memoryview(page)[:n]
            r._read(slot, off, mv)
            if mv != _FF[:n]:
                for x in mv:
                    if x != 0xFF:
                        bad += 1 if _near(x, 0xFF) else 2
                if bad > 1:
                    return False
            off += n
        return True

    def _next_zeroed(self):
        """Is the sector the ring would enter after its last live one zeroed? A cut leaves a
        sector erased, stamped, or half of either, never zeroed: the log's last sectors were
        lost to damage (their headers gone, so they are not in the live epoch)."""
        r = self.r
        s = r._next_free(r._live[-1]) if r._live else -1
        if s < 0:
            return False
        h = r._hdr
        r._read(s, 0, h)
        zeros = 0
        for i in range(16):
            if h[i] == 0:
                zeros += 1
        return zeros >= 15

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
            if slots[v] >= 0 and self._get(slots, pos, one) and _near(one[0], 0xFF) and \
                    self._erased(slots[v], DATA + pos % ROOM):
                pos = (v + 1) * ROOM  # this sector's data ends here
                continue
            p = self._record(slots, pos, total, head)
            if p is None:
                p = self._repair(slots, pos, total)
            if p is None:
                w = slots[v + 1] if v + 1 < len(slots) else -1
                if w >= 0 and r._tear[w] and _near(r._tear[w], DATA + pos % ROOM):
                    pos = (v + 1) * ROOM  # a tear found at an earlier boot, skipped then
                    continue
                nxt = self._resync(slots, pos, total, head, total)
                self.torn = True
                if nxt < 0:  # nothing good after it: a torn write, or a damaged tail
                    from shoe.journal import repair

                    self.damaged = repair.ring_tail(self, slots, pos, total) or \
                        self._next_zeroed()
                    r._place(end_off, last_slot)
                    return
                self.holes += 1
                self.lost += nxt - pos
                self.hole = True
                pos = nxt
                continue
            pos = self._end
            self.good_end = pos
            v = (pos - 1) // ROOM
            last_slot = slots[v]
            end_off = DATA + pos - v * ROOM
            yield p
            self.hole = False
        self.damaged = self._next_zeroed()
        r._place(end_off, last_slot)


def _near(x, want):
    """x is `want`, or `want` with one flipped bit."""
    d = x ^ want
    return d & (d - 1) == 0
