"""Lid (tamper) switch: polled, debounced, and latched until a supervisor clears it.

    lid = Lid(pin, open_level=1, debounce_ms=50)
    ev = lid.poll(now_ms)        # None | "lid_open" | "lid_closed"  (debounced changes only)
    ev = await lid.wait()        # the same as a task: polls every poll_ms
    lid.tampered                 # latched True from the first debounced opening
    lid.clear()                  # supervisor acknowledgement: only while the lid is closed

Polling rather than an IRQ: a mechanical switch bounces for milliseconds and a lid changes
state rarely, so a 10-20 ms poll costs nothing and needs no ISR (micropython-async INTERRUPTS.md
s.2). The level must hold for `debounce_ms` before it counts. A lid found open at the first poll
(opened while the power was off) reports "lid_open" too. Persisting the latch across a reset is
the app's job (it journals the event); `tampered` can be restored with `latch()`.
"""
import asyncio
from shoe.drivers import _ticks


class Lid:
    def __init__(self, pin, open_level=1, debounce_ms=50, poll_ms=20, ticks_ms=_ticks.ticks_ms,
                 ticks_diff=_ticks.ticks_diff):
        self._pin = pin
        self._open_level = 1 if open_level else 0
        self.debounce_ms = debounce_ms
        self.poll_ms = poll_ms
        self._now = ticks_ms
        self._diff = ticks_diff
        self.is_open = None  # debounced state; None until the first stable reading
        self._raw = None
        self._since = 0
        self.tampered = False
        self.openings = 0

    def poll(self, now):
        raw = self._pin.value() == self._open_level
        if raw != self._raw:
            self._raw = raw
            self._since = now
        if raw == self.is_open:
            return None
        if self.is_open is not None and self._diff(now, self._since) < self.debounce_ms:
            return None
        if self.is_open is None and not raw:
            self.is_open = False  # closed at start-up: nothing to report
            return None
        if self.is_open is None and self._diff(now, self._since) < self.debounce_ms:
            return None
        self.is_open = raw
        if raw:
            self.tampered = True
            self.openings += 1
            return "lid_open"
        return "lid_closed"

    def latch(self):
        self.tampered = True

    def clear(self):
        """Acknowledge the tamper latch. False (still latched) while the lid is open."""
        if self.is_open:
            return False
        self.tampered = False
        return True

    async def wait(self):
        while True:
            ev = self.poll(self._now())
            if ev is not None:
                return ev
            await asyncio.sleep_ms(self.poll_ms)
