"""The outbox in RAM: unacknowledged durable messages in ONE preallocated ring buffer.

Durable messages have consecutive sequence numbers and are acknowledged oldest first, so the
outbox is the range first..last of eseq and their payloads lie one after another in a bytearray
(wrapping to the start when the end is too short). No heap object exists per message: a 64 KB
heap stays unfragmented however long the host is away.

One hole is allowed: after a damaged journal the event sequence jumps past every number that
may have been used (docs/journal.md "One bad bit"), while the events kept from before the damage
stay to be sent; `skip` numbers are missing before the message numbered `skip_at`.

    ob = Outbox(nbytes=8192, nmax=64)
    ob.fits(n) / ob.add(eseq, payload)      # add raises ValueError("outbox_full" | "outbox_order")
    ob.get(eseq) -> memoryview | None       # valid until the next add/prune
    ob.prune(upto); ob.first; ob.count; ob.last(); ob.items()
"""
import array


class Outbox:
    def __init__(self, nbytes=8192, nmax=64):
        self.buf = bytearray(nbytes)
        self.mv = memoryview(self.buf)
        self.size = nbytes
        self.nmax = nmax
        self.off = array.array("i", bytes(4 * nmax))
        self.len = array.array("i", bytes(4 * nmax))
        self.head = 0  # slot of the oldest message
        self.count = 0
        self.first = 1  # eseq of the oldest message (when count > 0)
        self.wpos = 0
        self.used = 0  # payload bytes held
        self.skip = 0  # numbers missing before skip_at (one hole at most)
        self.skip_at = 0

    def _at(self, n, w, count, start):
        """Offset for n more bytes after `count` messages ending at w, the oldest at `start`."""
        if count >= self.nmax or n > self.size:
            return -1
        if count == 0:
            return 0
        if w > start:
            if w + n <= self.size:
                return w
            return 0 if n <= start else -1
        return w if w + n <= start else -1

    def _place(self, n):
        return self._at(n, self.wpos, self.count, self.off[self.head] if self.count else 0)

    def fits(self, n):
        return self._place(n) >= 0

    def fits_all(self, lengths):
        """Would payloads of these lengths all fit, added in this order?"""
        w, count = self.wpos, self.count
        start = self.off[self.head] if count else 0
        for n in lengths:
            at = self._at(n, w, count, start)
            if at < 0:
                return False
            if count == 0:
                start = 0
            w = at + n
            count += 1
        return True

    def room(self, n=1030):
        """How many more messages of n bytes surely fit (0 when full)."""
        if not self.fits(n):
            return 0
        return self.nmax - self.count

    def add(self, eseq, payload):
        n = len(payload)
        at = self._place(n)
        if at < 0:
            raise ValueError("outbox_full")
        if self.count == 0:
            self.first = eseq
            self.head = 0
            self.skip = 0
        elif eseq != self.last() + 1:
            if self.skip or eseq < self.last():
                raise ValueError("outbox_order")
            self.skip = eseq - self.last() - 1
            self.skip_at = eseq
        slot = (self.head + self.count) % self.nmax
        self.buf[at:at + n] = payload
        self.off[slot] = at
        self.len[slot] = n
        self.wpos = at + n
        self.count += 1
        self.used += n

    def last(self):
        """The eseq of the newest message (first - 1 when empty)."""
        return self.first + self.count - 1 + self.skip

    def _index(self, eseq):
        if self.skip and eseq >= self.skip_at - self.skip:
            return eseq - self.first - self.skip if eseq >= self.skip_at else -1
        return eseq - self.first

    def get(self, eseq):
        i = self._index(eseq)
        if i < 0 or i >= self.count:
            return None
        slot = (self.head + i) % self.nmax
        o = self.off[slot]
        return self.mv[o:o + self.len[slot]]

    def prune(self, upto):
        while self.count and self.first <= upto:
            self.used -= self.len[self.head]
            self.head = (self.head + 1) % self.nmax
            self.count -= 1
            self.first += 1
            if self.skip and self.first == self.skip_at - self.skip:
                self.first = self.skip_at  # the hole is behind: consecutive again
                self.skip = 0
        if self.count == 0:
            self.wpos = 0
            self.head = 0
            self.skip = 0

    def clear(self):
        self.count = 0
        self.head = 0
        self.wpos = 0
        self.used = 0
        self.skip = 0

    def eseq_at(self, i):
        """The eseq of the i-th message, oldest first."""
        e = self.first + i
        return e + self.skip if self.skip and e >= self.skip_at - self.skip else e

    def items(self):
        """[(eseq, bytes)] oldest first (allocates: for snapshots and tests)."""
        return [(self.eseq_at(i), bytes(self.get(self.eseq_at(i)))) for i in range(self.count)]
