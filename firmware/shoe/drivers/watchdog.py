"""Watchdog policy: feed machine.WDT only while every registered task checks in on time.

    dog = Watchdog(machine.WDT, timeout_ms=8000)   # a WDT object, or a factory started lazily
    dog.register("reader", 2000)                   # max silence per task, ms
    dog.checkin("reader")                          # each task, every loop
    fed = dog.service()                            # from a feeder task every ~1 s: feeds only
                                                   # if all are fresh; else `starved` names one

A task that hangs stops checking in, the policy stops feeding, the hardware resets the board,
and the journal makes the reset harmless. One healthy feeder task cannot keep a board alive
whose reader or ticker task is stuck (feeding from a timer IRQ would, so it is not done).

The hardware watchdog cannot be stopped once started (RP2040, ESP32), so it is started at the
first healthy service() rather than at construction: a slow boot (journal recovery) cannot
reset-loop the board, and a board in service mode (no app) never starts it. Pass a factory
(machine.WDT itself) for that; a ready WDT object (has .feed) is used as it is.
"""
from shoe.drivers import _ticks


class Watchdog:
    def __init__(self, wdt, timeout_ms=8000, ticks_ms=_ticks.ticks_ms,
                 ticks_diff=_ticks.ticks_diff):
        lazy = isinstance(wdt, type) or not hasattr(wdt, "feed")  # machine.WDT itself: a factory
        self._wdt = None if lazy else wdt
        self._factory = wdt if lazy else None
        self.timeout_ms = timeout_ms
        self._now = ticks_ms
        self._diff = ticks_diff
        self._names = []
        self._limits = []
        self._seen = []
        self.starved = None
        self.feeds = 0

    def register(self, name, max_silence_ms):
        if name in self._names:
            raise ValueError("task registered twice")
        self._names.append(name)
        self._limits.append(max_silence_ms)
        self._seen.append(self._now())
        return len(self._names) - 1

    def checkin(self, name):
        self._seen[self._names.index(name)] = self._now()

    def healthy(self, now=None):
        now = self._now() if now is None else now
        for i in range(len(self._names)):
            if self._diff(now, self._seen[i]) > self._limits[i]:
                self.starved = self._names[i]
                return False
        self.starved = None
        return bool(self._names)

    def service(self):
        """Feed if every task is fresh. -> True if fed."""
        if not self.healthy():
            return False
        if self._wdt is None:
            self._wdt = self._factory(timeout=self.timeout_ms)
        self._wdt.feed()
        self.feeds += 1
        return True

    @property
    def started(self):
        return self._wdt is not None
