"""The host link's timers run on the clock it is given (ShoeLink clock_ms), and the emulated
board's clock for it (host_tools/sim/emu/table.py EmuClock).

On the wall clock, a chip emulated at a tenth of real time (a loaded CI machine) got the host's
retransmissions and HELLO repeats ten times as often as a real board would, spent its time on
them and missed the RFID tags in its field (CI, 2026-12-01: a deck check with 30 of 52 cards
unread, a power-cut round whose `status` went unanswered)."""

import threading

from host_tools.errors import ShoeError
from host_tools.link import ShoeLink
from host_tools.sim.emu.table import EmuClock
from tests.support import wait_for

KEY = b"k" * 32


class SilentPort:
    """A port nobody answers on: counts the link's reads and keeps what it writes."""

    def __init__(self):
        self.reads = 0
        self.written = []
        self.lock = threading.Lock()

    def read(self, n):
        with self.lock:
            self.reads += 1
        threading.Event().wait(0.002)
        return b""

    in_waiting = 0

    def write(self, b):
        with self.lock:
            self.written.append(bytes(b))

    def flush(self):
        pass

    def close(self):
        pass

    def hellos(self):
        with self.lock:
            return len(self.written)  # nothing but HELLOs goes out before a handshake


def test_the_links_timers_follow_its_clock_not_the_wall():
    port = SilentPort()
    now = [10000]
    link = ShoeLink("loop://", KEY, open_port=lambda u: port, clock_ms=lambda: now[0])
    link.start()
    try:
        assert wait_for(lambda: port.hellos() >= 1)
        seen = port.reads
        # hundreds of the link's loops, wall time far beyond its HELLO repeat (600 ms): on a
        # clock that stands still it repeats nothing
        assert wait_for(lambda: port.reads >= seen + 400, timeout=60)
        assert port.hellos() == 1
        now[0] += 5000  # the board's clock moves on: the repeat is due
        assert wait_for(lambda: port.hellos() >= 2)
    finally:
        link.close()


class FakeEmu:
    def __init__(self, answers):
        self.answers = list(answers)

    def clock_ns(self):
        a = self.answers.pop(0)
        if isinstance(a, Exception):
            raise a
        return a


def test_the_emulated_boards_clock_is_whole_ms_and_never_goes_back():
    # ns as the rig answers them: ints or floats; a power cut (no answer), then a new
    # power-up whose clock starts again near 0
    emu = FakeEmu(
        [5_000_000, 7_500_000.0, OSError("refused"), ShoeError("closed"), 1_000_000, 4_000_000.5]
    )
    clock = EmuClock(emu, every_s=0)
    got = [clock() for _ in range(6)]
    assert all(type(v) is int for v in got), got
    assert got == [0, 2, 2, 2, 2, 5], got
