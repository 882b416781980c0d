"""MicroPython: the Peripherals tasks on a Pico bundle (fake machine): beam pairing reports,
lid events, LED pattern, watchdog feeding and starvation report. Waits use deadlines."""

import asyncio
import json

import machine
import main

from shoe.drivers.peripherals import Peripherals

events = []


def emit(kind, body):
    events.append((kind, body))


async def until(cond, ms=5000):
    t = 0
    while not cond():
        await asyncio.sleep_ms(5)
        t += 5
        if t > ms:
            raise AssertionError("timed out waiting; events=%r" % (events,))


async def scenario():
    hw = main.build(machine)
    hw.beam_window_ms = 300
    hw.lid._pin.drive(0)  # lid shut (the switch pulls the pin to GND)
    per = Peripherals(hw, emit, watch={"host": 600}, check_ms=5, feed_ms=20)
    tasks = [asyncio.create_task(c) for c in per.tasks()]
    assert len(tasks) == 5  # beam, pairing, lid, led, feeder
    beat = [True]

    async def host():
        while beat[0]:
            per.checkin("host")
            await asyncio.sleep_ms(10)

    h = asyncio.create_task(host())
    await asyncio.sleep_ms(10)  # let the tasks start (the beam IRQ is installed by its task)
    # a card leaves with no read: reported after the window
    hw.beam._pin.drive(0)
    hw.beam._pin.drive(1)
    await until(lambda: ("exit_without_read", {}) in events)
    # a read and its exit: nothing reported
    n = len(events)
    per.on_read()
    await asyncio.sleep_ms(20)
    hw.beam._pin.drive(0)
    hw.beam._pin.drive(1)
    await until(lambda: per.matcher.matched == 1)
    assert per.matcher.pending() == (0, 0) and len(events) == n, events
    # a read with no card leaving
    per.on_read()
    await until(lambda: ("read_without_exit", {}) in events)
    # the lid opens (held past the debounce)
    hw.lid._pin.drive(1)
    await until(lambda: ("lid_open", {"tampered": True}) in events)
    assert per.clear_tamper() is False
    hw.lid._pin.drive(0)
    await until(lambda: ("lid_closed", {"tampered": True}) in events)
    assert per.clear_tamper() is True
    # LED: dealing = steady on
    per.show("dealing")
    await until(lambda: hw.led._pin.value() == 1)
    # watchdog: fed while the host task checks in; the hardware WDT was started lazily
    await until(lambda: hw.wdt.feeds >= 3)
    assert len(machine.WDT.instances) == 1 and machine.WDT.instances[0].timeout == 8000
    beat[0] = False
    await until(lambda: ("watchdog_starved", {"task": "host"}) in events)
    fed = machine.WDT.instances[0].fed
    await asyncio.sleep_ms(80)
    assert machine.WDT.instances[0].fed == fed  # no more feeding: the board will reset
    assert events.count(("watchdog_starved", {"task": "host"})) == 1
    for t in tasks + [h]:
        t.cancel()
    return per


per = asyncio.run(scenario())
print(json.dumps({"events": [e[0] for e in events]}))
