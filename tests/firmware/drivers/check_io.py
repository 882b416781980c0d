"""MicroPython: beam ISR (allocation-free under heap_lock), exit matcher, lid, LED, watchdog.

Run by tests/firmware/drivers/test_io.py: every check runs (mpycheck.run), one pytest test each.
Clocks are fakes (a counter the test advances): no sleeps.
"""

import asyncio
import json
import micropython
import time

import machine
from mpycheck import run
from shoe.drivers.beam import Beam, ExitMatcher
from shoe.drivers.lid import Lid
from shoe.drivers.led import LedPlayer
from shoe.drivers.watchdog import Watchdog


class Clock:
    def __init__(self, t=1000):
        self.t = t

    def __call__(self):
        return self.t


def out(name, **kw):
    kw["check"] = name
    print(json.dumps(kw))


def check_beam_isr_no_alloc():
    pin = machine.Pin(14, machine.Pin.IN, machine.Pin.PULL_UP)
    beam = Beam(pin, machine.Pin.IRQ_FALLING, size=8)
    beam.start()
    failed = None
    micropython.heap_lock()
    try:
        for _ in range(5):  # five cards: break (falling) and restore (rising)
            pin.drive(0)
            pin.drive(1)
    except MemoryError as e:
        failed = e
    finally:
        micropython.heap_unlock()
    assert failed is None, "ISR allocated: %r" % failed
    assert beam.edges == 5
    # the ring holds them until the task drains it
    got = []
    while True:
        t = beam.pending()
        if t is None:
            break
        got.append(t)
    assert len(got) == 5
    out("beam_isr_no_alloc", edges=beam.edges)


def check_beam_overrun_and_merge():
    clock = Clock()
    pin = machine.Pin(14, machine.Pin.IN, machine.Pin.PULL_UP)
    beam = Beam(pin, machine.Pin.IRQ_FALLING, size=4, merge_ms=15, ticks_ms=clock)
    beam.start()
    for _i in range(6):  # 6 exits, ring of 4 holds 3: 3 overruns, never an exception
        clock.t += 100
        pin.drive(0)
        pin.drive(1)
    assert beam.overruns == 3
    n = 0
    while beam.take() is not None:
        n += 1
    assert n == 3
    # a bouncing edge: three falls within 10 ms are one exit
    for dt in (100, 4, 5):
        clock.t += dt
        pin.drive(0)
        pin.drive(1)
    assert beam.take() is not None and beam.take() is None
    out("beam_overrun_merge", overruns=beam.overruns)


async def _beam_task():
    pin = machine.Pin(14, machine.Pin.IN, machine.Pin.PULL_UP)
    beam = Beam(pin, machine.Pin.IRQ_FALLING)
    beam.start()
    t = asyncio.create_task(beam.wait())
    await asyncio.sleep_ms(2)
    assert not t.done()
    pin.drive(0)  # as from an interrupt: the flag wakes the waiting task
    return await asyncio.wait_for_ms(t, 1000)


def check_beam_task():
    t = asyncio.run(_beam_task())
    assert isinstance(t, int)
    out("beam_task", ok=True)


def check_matcher():
    m = ExitMatcher(window_ms=400)
    assert m.read(1000) is False and m.exit(1100) is True  # read then exit: paired
    assert m.exit(2000) is False and m.read(2300) is True  # exit then read: paired
    assert m.check(5000) is None
    m.exit(6000)  # an unreadable card
    assert m.check(6399) is None and m.check(6401) == "exit_without_read"
    m.read(7000)  # a read with no card leaving
    assert m.check(7401) == "read_without_exit" and m.check(7402) is None
    m.exit(8000)
    assert m.read(8500) is False  # too late to pair
    assert m.check(8500) == "exit_without_read"
    assert m.check(8901) == "read_without_exit"
    # ticks wrap (2**30 period on MicroPython): pairing still works across the wrap
    top = time.ticks_add(0, -100)
    assert m.read(top) is False and m.exit(time.ticks_add(top, 200)) is True
    # the pure class allocates nothing per event
    micropython.heap_lock()
    try:
        m.read(10000)
        m.exit(10010)
        m.exit(20000)
        r = m.check(30000)
    finally:
        micropython.heap_unlock()
    assert r == "exit_without_read"
    out("matcher", matched=m.matched)


def check_lid():
    clock = Clock()
    pin = machine.Pin(15, machine.Pin.IN, machine.Pin.PULL_UP)
    pin.drive(0)  # closed
    lid = Lid(pin, open_level=1, debounce_ms=50, ticks_ms=clock)
    assert lid.poll(clock.t) is None and lid.is_open is False
    events = []
    # bounce: open for 10 ms, closed again: nothing
    pin.drive(1)
    clock.t += 10
    events.append(lid.poll(clock.t))
    pin.drive(0)
    clock.t += 10
    events.append(lid.poll(clock.t))
    clock.t += 100
    events.append(lid.poll(clock.t))
    assert events == [None, None, None], events
    # a real opening: held 60 ms
    pin.drive(1)
    assert lid.poll(clock.t) is None
    clock.t += 60
    assert lid.poll(clock.t) == "lid_open" and lid.tampered
    assert lid.clear() is False  # cannot acknowledge while open
    pin.drive(0)
    lid.poll(clock.t)
    clock.t += 60
    assert lid.poll(clock.t) == "lid_closed"
    assert lid.tampered  # latched after closing
    assert lid.clear() is True and not lid.tampered
    # open at power-up reports too (after the debounce)
    pin2 = machine.Pin(16, machine.Pin.IN)
    pin2.drive(1)
    lid2 = Lid(pin2, ticks_ms=clock)
    assert lid2.poll(clock.t) is None
    clock.t += 60
    assert lid2.poll(clock.t) == "lid_open"
    out("lid", openings=lid.openings)


def check_led():
    clock = Clock(0)
    pin = machine.Pin(25, machine.Pin.OUT)
    led = LedPlayer(pin, ticks_ms=clock)
    assert led.tick(0) == 1000 and pin.value() == 0
    led.show(LedPlayer.DEALING)
    led.tick(0)
    assert pin.value() == 1
    led.show(LedPlayer.ERROR)  # 100 ms on, 100 ms off
    seen = []
    for t in range(0, 400, 50):
        clock.t = t
        led.tick(t)
        seen.append(pin.value())
    assert seen == [1, 1, 0, 0, 1, 1, 0, 0], seen
    led.show(LedPlayer.READY, now=400)
    assert led.tick(400) == 100 and pin.value() == 1
    assert led.tick(500) == 1900 and pin.value() == 0
    assert led.tick(2400) == 100 and pin.value() == 1
    inv = machine.Pin(2, machine.Pin.OUT)
    LedPlayer(inv, active_low=True, ticks_ms=clock).tick(0)
    assert inv.value() == 1  # active-low LED: dark = high
    out("led", ok=True)


class FakeWDT:
    """Stands in for the board: resets when not fed for timeout ms (checked by the test)."""

    made = []

    def __init__(self, timeout=0):
        self.timeout = timeout
        self.fed = 0
        FakeWDT.made.append(self)

    def feed(self):
        self.fed += 1


def check_watchdog():
    clock = Clock()
    dog = Watchdog(FakeWDT, timeout_ms=8000, ticks_ms=clock)
    assert dog.service() is False  # nothing registered: never feed blindly
    dog.register("reader", 2000)
    dog.register("host", 500)
    assert not dog.started
    last_feed = clock.t
    reset = False
    for step in range(200):  # 20 s in 100 ms steps
        clock.t += 100
        dog.checkin("host")
        if step < 50:  # the reader hangs after 5 s
            dog.checkin("reader")
        if dog.service():
            last_feed = clock.t
        if clock.t - last_feed > 8000:
            reset = True
            break
    assert reset, "a hung task must stop the feeding"
    assert dog.starved == "reader"
    wdt = FakeWDT.made[-1]
    assert wdt.timeout == 8000 and wdt.fed == dog.feeds == 70
    # a ready WDT object is used as is
    w = machine.WDT(timeout=5000)
    d2 = Watchdog(w, ticks_ms=clock)
    d2.register("a", 100)
    assert d2.service() and w.fed == 1
    clock.t += 101
    assert not d2.service() and w.fed == 1
    try:
        d2.register("a", 5)
    except ValueError:
        pass
    else:
        raise AssertionError("duplicate registration accepted")
    out("watchdog", feeds=dog.feeds)


run(
    [
        check_beam_isr_no_alloc,
        check_beam_overrun_and_merge,
        check_beam_task,
        check_matcher,
        check_lid,
        check_led,
        check_watchdog,
    ]
)
