"""Status LED pattern player: ready, dealing, error, ... on one Pin.

    led = LedPlayer(pin)                 # pin: machine.Pin(n, Pin.OUT) (or any .value(v))
    led.show(led.DEALING)                # switch pattern (restarts it from its first step)
    wait_ms = led.tick(now_ms)           # set the pin for `now`; ms until the next change
    await led.run()                      # the same as a task

A pattern is a bytes of step lengths in units of 10 ms, alternating on, off, on, off... and
repeating; a single step means "steady" (on if it is the only step). Patterns (chosen to be
told apart from across a table):

    OFF      b""            dark
    READY    heartbeat      b"\x0a\xbe"  (0.1 s on, 1.9 s off)
    DEALING  steady on      b"\x01"
    ERROR    fast blink     b"\x0a\x0a"  (5 Hz)
    TAMPER   double blink   b"\x0a\x0a\x0a\x46"
    SERVICE  slow blink     b"\x32\x32"  (1 Hz: service mode, app not running)
"""
import asyncio
from shoe.drivers import _ticks

OFF = b""
READY = b"\x0a\xbe"
DEALING = b"\x01"
ERROR = b"\x0a\x0a"
TAMPER = b"\x0a\x0a\x0a\x46"
SERVICE = b"\x32\x32"
_UNIT_MS = 10


class LedPlayer:
    OFF = OFF
    READY = READY
    DEALING = DEALING
    ERROR = ERROR
    TAMPER = TAMPER
    SERVICE = SERVICE

    def __init__(self, pin, active_low=False, ticks_ms=_ticks.ticks_ms,
                 ticks_diff=_ticks.ticks_diff):
        self._pin = pin
        self._on = 0 if active_low else 1
        self._now = ticks_ms
        self._diff = ticks_diff
        self.pattern = None
        self._step = 0
        self._start = 0
        self._level = None
        self.show(OFF)

    def show(self, pattern, now=None):
        if pattern == self.pattern:
            return
        self.pattern = pattern
        self._step = 0
        self._start = self._now() if now is None else now
        self._level = None

    def _set(self, on):
        level = self._on if on else 1 - self._on
        if level != self._level:
            self._level = level
            self._pin.value(level)

    def tick(self, now):
        p = self.pattern
        if len(p) == 0:
            self._set(False)
            return 1000
        if len(p) == 1:
            self._set(True)
            return 1000
        # advance over the steps that have fully elapsed since the step started
        while True:
            length = p[self._step] * _UNIT_MS
            gone = self._diff(now, self._start)
            if gone < length:
                break
            self._start = _ticks.ticks_add(self._start, length)
            self._step = (self._step + 1) % len(p)
        self._set(self._step % 2 == 0)
        return length - gone

    async def run(self):
        while True:
            await asyncio.sleep_ms(self.tick(self._now()))
