"""time.ticks_ms / ticks_diff / ticks_add: MicroPython's own, or the same semantics on CPython.

The drivers' pure parts (ExitMatcher, Watchdog, Lid, LedPlayer) take their clock as arguments;
these defaults let host-side tests import them under CPython too. MicroPython ticks wrap at
2**30 (TICKS_PERIOD); ticks_diff is signed within half a period.
"""
import time

try:
    ticks_ms = time.ticks_ms
    ticks_diff = time.ticks_diff
    ticks_add = time.ticks_add
except AttributeError:  # CPython
    _PERIOD = 1 << 30
    _HALF = _PERIOD >> 1

    def ticks_ms():
        return int(time.monotonic() * 1000) & (_PERIOD - 1)

    def ticks_diff(a, b):
        return ((a - b + _HALF) & (_PERIOD - 1)) - _HALF

    def ticks_add(a, d):
        return (a + d) & (_PERIOD - 1)
