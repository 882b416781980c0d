"""The real-board extras as asyncio tasks, ready for the app: beam pairing, lid, LED, watchdog.

    per = Peripherals(hw, emit)                # emit(kind, body): the app's event sink
    for coro in per.tasks():                   # create them inside the app's main()
        asyncio.create_task(coro)              # (or per.loops(): (name, loop) pairs to restart)
    per.on_read()                              # the app calls this for every reader result
    per.checkin("host")                        # each watched app task, every loop
    per.show("dealing")                        # LED: "ready" | "dealing" | "error" | "tamper"

Events emitted (kind, body):
    "exit_without_read"  {}                    a card left and no read came within the window
    "read_without_exit"  {}                    a read came and no card left within the window
    "lid_open" / "lid_closed"  {"tampered": bool}   (tampered stays True until clear_tamper())
    "watchdog_starved"   {"task": name}        once, when feeding stops; the reset follows

Parts the board does not have (hw.beam/lid/led/wdt None) are skipped. Watched tasks are given
to the constructor: `watch={"host": 2000, "ticker": 2000}` (max silence in ms). Only watch tasks
that loop on their own: a task awaiting the reader can be quiet for minutes between cards. The
feeder itself runs every `feed_ms`.
"""
import asyncio

from shoe.drivers import _ticks
from shoe.drivers.beam import ExitMatcher

_PATTERNS = ("ready", "dealing", "error", "tamper", "service", "off")


class Peripherals:
    def __init__(self, hw, emit, watch=None, check_ms=50, feed_ms=1000,
                 ticks_ms=_ticks.ticks_ms):
        self.hw = hw
        self.emit = emit
        self.check_ms = check_ms
        self.feed_ms = feed_ms
        self._now = ticks_ms
        beam = getattr(hw, "beam", None)
        self.matcher = ExitMatcher(getattr(hw, "beam_window_ms", 400)) if beam else None
        self.dog = getattr(hw, "wdt", None)
        self._starved_reported = False
        if self.dog is not None:
            for name in watch or {}:
                self.dog.register(name, watch[name])

    def on_read(self, now=None):
        """Every reader result (card, noread, garbled) is one card passing the reader."""
        if self.matcher is not None:
            self.matcher.read(self._now() if now is None else now)

    def checkin(self, name):
        if self.dog is not None:
            self.dog.checkin(name)

    def show(self, name):
        led = getattr(self.hw, "led", None)
        if led is None:
            return
        if name not in _PATTERNS:
            raise ValueError("unknown LED pattern")
        led.show(getattr(led, name.upper()))

    def clear_tamper(self):
        """Supervisor acknowledgement of the lid latch: False while the lid is still open."""
        lid = getattr(self.hw, "lid", None)
        return True if lid is None else lid.clear()

    def loops(self, ticked=False):
        """The tasks as (name, loop) pairs; `loop()` makes a fresh coroutine, so the app can
        start a task again after it failed (App.start). ticked: the caller's own periodic task
        calls tick() (the app's ticker, every 20 ms), so the pairing check and the lid's poll
        get no task of their own: each task step costs the Pico's scheduler a 72-byte heap
        frame (asyncio's wait_io_event), and every allocation counts towards the next
        collection (docs/hardware.md section 8)."""
        out = []
        if self.matcher is not None:
            out.append(("beam", self._beam))
            if not ticked:
                out.append(("pairing", self._pairing))
        if getattr(self.hw, "lid", None) is not None and not ticked:
            out.append(("lid", self._lid))
        if getattr(self.hw, "led", None) is not None:
            out.append(("led", self.hw.led.run))
        if self.dog is not None:
            out.append(("feeder", self._feeder))
        return out

    def tasks(self):
        return [loop() for _, loop in self.loops()]

    async def _beam(self):
        beam = self.hw.beam
        beam.start()
        while True:
            t = await beam.wait()
            self.matcher.exit(t)

    def check(self, now=None):
        """Report every expired read/exit (the pairing task calls this every check_ms)."""
        now = self._now() if now is None else now
        while True:
            r = self.matcher.check(now)
            if r is None:
                return
            self.emit(r, {})

    def tick(self, now):
        """The pairing check and the lid's poll, from the caller's periodic task (loops(ticked=
        True)): what the pairing and lid tasks do at each of their steps."""
        if self.matcher is not None:
            self.check(now)
        lid = getattr(self.hw, "lid", None)
        if lid is not None:
            ev = lid.poll(now)
            if ev is not None:
                self.emit(ev, {"tampered": lid.tampered})

    async def _pairing(self):
        while True:
            self.check()
            await asyncio.sleep_ms(self.check_ms)

    async def _lid(self):
        lid = self.hw.lid
        while True:
            ev = await lid.wait()
            self.emit(ev, {"tampered": lid.tampered})

    def feed(self):
        """One feeder step: feed if healthy, else report the starved task once."""
        if self.dog.service():
            self._starved_reported = False
            return True
        if self.dog.starved is not None and not self._starved_reported:
            self._starved_reported = True
            self.emit("watchdog_starved", {"task": self.dog.starved})
        return False

    async def _feeder(self):
        while True:
            self.feed()
            await asyncio.sleep_ms(self.feed_ms)
