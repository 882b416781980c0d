"""The journal's three record streams on raw flash rings (ring.py), with the FileStore interface
(store.py): what the Pico's journal runs on after boot. Making and checking the reserved extents
that hold the rings is boot work, in extents.py, which the app drops once the store is open.
See docs/journal.md "The flash ring"."""
from micropython import const

from shoe.journal.ring import Ring

# (stream, sectors, sectors kept free for a rewrite). The log: 64 KiB + one record live (17
# sectors of 4064 data bytes), a compaction's snapshot (state + an outbox of up to 8 KiB: 5 kept
# free), and room to spare. A rounds segment: 100 records of up to ~400 bytes in 10 sectors, and
# one free so that emptying it (a new epoch) always has a sector to start in. The marks
# (marks.py): at most 3 KiB live, rewritten into the other sector. Streams are only ever added
# at the end (extents.open_store grows an older map).
LOG_SECTORS = const(24)
ROUND_SECTORS = const(11)
MARK_SECTORS = const(2)
LAYOUT = (("journal.log", LOG_SECTORS, 5), ("rounds.0", ROUND_SECTORS, 1),
          ("rounds.1", ROUND_SECTORS, 1), ("marks", MARK_SECTORS, 1))


class RingStore:
    """The journal's streams on rings (store.FileStore's interface)."""

    def __init__(self, dev, nonce, blocks, layout=LAYOUT):
        self.rings = {}
        at = 0
        for rid, (name, n, reserve) in enumerate(layout):
            self.rings[name] = Ring(dev, blocks[at:at + n], rid, nonce, reserve)
            at += n

    def scan(self, name):
        return self.rings[name].scan()

    def append(self, name, payload):
        self.rings[name].append(payload)

    def size(self, name):
        return 0

    def abort(self, name):
        pass  # the ring never writes over what a failed append left

    def rewrite(self, name, records):
        return self.rings[name].rewrite(records)

    def drop_tail(self, name, n):
        pass  # the next record goes to a fresh sector (ring.py)

    def clear(self, name):
        self.rings[name].rewrite(())

    def fits(self, name, n):
        return self.rings[name].fits(n)

    def close(self):
        pass

    def idle(self):
        for r in self.rings.values():
            if r.prepare():
                return True
        return False

    def stats(self):
        e = p = 0
        for r in self.rings.values():
            e += r.erases
            p += r.programs
        return {"erases": e, "pages": p}
