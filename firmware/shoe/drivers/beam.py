"""Card-exit beam on a GPIO interrupt, and the pure read/exit matcher the app uses with it.

    beam = Beam(pin, trigger=Pin.IRQ_FALLING)   # pin: machine.Pin (input, pulled as wired)
    beam.start()                                # installs the IRQ handler (hard IRQ)
    t = await beam.wait()                       # ticks_ms of the next card exit (beam broken)

The handler allocates nothing (tests run it under micropython.heap_lock()): it reads
time.ticks_ms(), stores it in a preallocated array ring and sets an asyncio.ThreadSafeFlag.
`wait()` (a task) drains the ring. Bounces within `merge_ms` of the previous exit are merged
there (one card blocks the beam for several ms; a flapping edge is one exit). A ring overrun
(more than `size` exits between two task runs) is counted in `overruns`, never raised.

ExitMatcher pairs card reads with beam breaks within `window_ms`:

    m = ExitMatcher(window_ms=400)
    m.read(now)   / m.exit(now)      # feed both streams as they happen
    m.check(now)  -> None | "read_without_exit" | "exit_without_read"   (call until None)

`exit_without_read`: a card left but no read arrived (an unreadable card). `read_without_exit`:
a read with no card leaving (a read from inside the shoe, a double-fed card, a blocked beam).
"""
from micropython import const
import array
import asyncio
from shoe.drivers import _ticks

_SIZE = const(16)


class Beam:
    def __init__(self, pin, trigger, size=_SIZE, merge_ms=15, ticks_ms=_ticks.ticks_ms,
                 ticks_diff=_ticks.ticks_diff):
        self._pin = pin
        self._trigger = trigger
        self._ticks = array.array("i", bytes(4 * size))
        self._size = size
        self._head = 0  # next slot the ISR writes
        self._tail = 0  # next slot the task reads
        self._flag = asyncio.ThreadSafeFlag()
        self._now = ticks_ms
        self._diff = ticks_diff
        self.merge_ms = merge_ms
        self._last = None
        self.overruns = 0
        self.edges = 0
        self.exits = 0
        self._isr = self._on_edge  # bound once: creating it in irq() at IRQ time would allocate

    def start(self):
        self._pin.irq(handler=self._isr, trigger=self._trigger, hard=True)

    def stop(self):
        self._pin.irq(handler=None)

    def _on_edge(self, pin):
        # interrupt context: no allocation, no floats, no prints
        t = self._now()
        self.edges += 1
        nxt = self._head + 1
        if nxt == self._size:
            nxt = 0
        if nxt == self._tail:
            self.overruns += 1
            return
        self._ticks[self._head] = t
        self._head = nxt
        self._flag.set()

    def pending(self):
        """Next raw exit tick in the ring, or None (task side)."""
        if self._tail == self._head:
            return None
        t = self._ticks[self._tail]
        nxt = self._tail + 1
        self._tail = 0 if nxt == self._size else nxt
        return t

    def take(self):
        """Next exit after merging bounces, or None."""
        while True:
            t = self.pending()
            if t is None:
                return None
            if self._last is not None and self._diff(t, self._last) < self.merge_ms:
                self._last = t
                continue
            self._last = t
            self.exits += 1
            return t

    async def wait(self):
        """ticks_ms of the next card exit."""
        while True:
            t = self.take()
            if t is not None:
                return t
            await self._flag.wait()


class ExitMatcher:
    """Pairs reads with exits; anything unpaired after window_ms is reported (pure logic)."""

    def __init__(self, window_ms=400, size=8, ticks_diff=_ticks.ticks_diff):
        self.window_ms = window_ms
        self._diff = ticks_diff
        self._reads = array.array("i", bytes(4 * size))
        self._exits = array.array("i", bytes(4 * size))
        self._nr = 0
        self._ne = 0
        self._size = size
        self.matched = 0
        self.dropped = 0  # pending items pushed out by a full queue (size) before check() ran

    @staticmethod
    def _pop(arr, n):
        for i in range(1, n):
            arr[i - 1] = arr[i]

    def _push(self, arr, n, t):
        if n == self._size:  # full: the oldest is dropped and counted (check() not called enough)
            self._pop(arr, n)
            n -= 1
            self.dropped += 1
        arr[n] = t
        return n + 1

    def read(self, now):
        """A valid or invalid read happened. True if it paired with a pending exit."""
        if self._ne and self._diff(now, self._exits[0]) <= self.window_ms:
            self._pop(self._exits, self._ne)
            self._ne -= 1
            self.matched += 1
            return True
        self._nr = self._push(self._reads, self._nr, now)
        return False

    def exit(self, now):
        """The beam saw a card leave. True if it paired with a pending read."""
        if self._nr and self._diff(now, self._reads[0]) <= self.window_ms:
            self._pop(self._reads, self._nr)
            self._nr -= 1
            self.matched += 1
            return True
        self._ne = self._push(self._exits, self._ne, now)
        return False

    def check(self, now):
        """One expired item -> "exit_without_read" / "read_without_exit", or None."""
        if self._ne and self._diff(now, self._exits[0]) > self.window_ms:
            self._pop(self._exits, self._ne)
            self._ne -= 1
            return "exit_without_read"
        if self._nr and self._diff(now, self._reads[0]) > self.window_ms:
            self._pop(self._reads, self._nr)
            self._nr -= 1
            return "read_without_exit"
        return None

    def pending(self):
        return self._nr, self._ne
