"""GcPacer: when the app's heap is collected: a threshold fitted to the heap it boots in, and a
collection in the pause after each card, so that the collector seldom runs inside a card's
path (docs/hardware.md section 8).

    c = GcPacer(least)     # collect after every 4 KB (or the board's least) while the app builds
    c.tune()                 # at boot: the threshold for the heap the app runs in
    c.collect_in_pause()     # in the pause after a card
"""
import gc

from micropython import const

_GC_MIN = const(4096)          # collection threshold (bytes allocated between collections) ...
_GC_ROOM = const(73728)        # ... plus what is free at boot beyond 72 KB (tune())


class GcPacer:
    def __init__(self, least=None):
        """While the app builds itself: collect after every 4 KB allocated, or after `least`
        (the board's own floor, see tune()) where that is more. A Pico running from .mpy
        files marks its whole loaded bytecode at each collection: at 4 KB its boot spent 15 %
        of its instructions collecting (bench/bench_pico.py --profile, its next boot)."""
        gc.collect()
        self.threshold = max(_GC_MIN, least or 0)
        if hasattr(gc, "threshold"):
            gc.threshold(self.threshold)
        self.idle_collections = 0

    def tune(self, least=None):
        """The collection threshold for the heap the app runs in. On a device-sized heap (64 KB
        of data) collect after every 4 KB allocated: freed holes are reused before long-lived
        objects get scattered between them. Measured on the 64 KB board: without it the heap
        fragments within the first six-seat round (36 KB free, largest block 1.2 KB) and a
        journal write fails; with it the peak stays near 36 KB (tests/firmware/app/app_session.py).
        A bigger heap may use what it has free beyond 72 KB between collections: a fixed 4 KB
        made a Pico (~240 KB heap, ~150 KB live) mark its whole heap every 4 KB allocated, 60 %
        of its time while dealing (docs/hardware.md section 8).

        `least`: the board's own floor (wiring `gc["threshold_min"]`). A board whose live heap
        is large (the Pico running the firmware from .mpy files: its bytecode is in RAM, a
        collection marks ~150 KB, ~30 ms) and which boots with little more than 72 KB free got
        4-10 KB from the rule above, and a collection fell inside most authenticated tags'
        read-and-check: at a card every 250 ms a deck check missed cards (CI, 2026-12-01)."""
        gc.collect()
        self.threshold = max(_GC_MIN, least or 0, gc.mem_free() - _GC_ROOM)
        if hasattr(gc, "threshold"):
            gc.threshold(self.threshold)

    def collect_in_pause(self):
        """Collect now, in the pause after a card (the app calls it once a read), so that the
        allocator seldom collects inside the next card's path. Waiting for half the threshold
        left the allocator to collect inside a card in 2 pauses of 3 (card -> frame 90th
        percentile 55 ms, 1 round, bench_pico.py). It asks nothing first: gc.mem_alloc() walks
        the whole allocation table, ~0.85 M instructions on the Pico, more than the collection
        itself on the frozen image (~1.4 M), and the pause after a read always followed more
        than the 2 KB it used to wait for (~28 KB a card cycle on the Pico, RFID, dealing)."""
        gc.collect()
        self.idle_collections += 1
