"""Every task App.main() runs survives an exception (the architecture: tasks survive; one
exception must not end the others). Under MicroPython, with the real asyncio tasks, main() runs
on fake parts that each raise once, in the reader, the host UART, the ticker's duties (the link's
timers, its own work, the beam pairing check and the lid's poll) and every peripheral task (beam,
LED, watchdog feeder); each task must report its fault under its own name (the lid's and the
pairing check's: "peripherals") and then do its work again (App.start starts it again). A task
that is not started again stays dead, and its test fails. A lid switch that fails at every poll
must not stop the table's timers that share the ticker task."""

import pytest

from tests.mpy import json_lines, run_mpy

SCRIPT = r"""
import sys, json, io, time
import asyncio
import shoe.modules
from shoe.app import App, Hardware
from host import make_endpoint

shoe.modules.preload()
KEYS = {"shoe": b"demo-shoe-key-0001", "supervisor": b"demo-supervisor-key",
        "card": b"demo-card-key"}
root = sys.argv[1]
with open(root + "/shoe.json", "w") as f:
    json.dump({"version": 1, "shoe_id": "T-0001",
               "keys": {k: "".join("%02x" % x for x in v) for k, v in KEYS.items()}}, f)
host = make_endpoint("host", KEYS["shoe"])
events = []
after = {}    # task -> calls of its work after its fault


def once(name):
    # True the first time: that call raises; later calls count as work done after the fault
    if name not in after:
        after[name] = 0
        return True
    after[name] += 1
    return False


class Host(io.IOBase):
    def __init__(self):
        self.rx = bytearray()

    def ioctl(self, req, arg):
        if req == 3:  # MP_STREAM_POLL
            return arg & 1 if self.rx else 0
        return -1

    def any(self):
        return len(self.rx)

    def readinto(self, buf, m=-1):
        if once("host"):
            raise OSError(5)   # EIO
        n = min(len(buf) if m < 0 else m, len(self.rx))
        if not n:
            return None
        buf[:n] = self.rx[:n]
        self.rx[:n] = b""
        return n

    def write(self, b):
        for ev in host.receive(bytes(b), time.ticks_ms()):
            events.append(ev)
        return len(b)


class Reader:
    async def read(self):
        if once("reader"):
            raise OSError(5)
        if after["reader"] == 1:
            return "noread", b""
        await asyncio.sleep(3600)


class Beam:
    def start(self):
        pass

    async def wait(self):
        if once("beam"):
            raise OSError(5)
        await asyncio.sleep(3600)


ALWAYS = "lid-always" in sys.argv   # the lid's switch fails at every poll (a broken sensor)


class Lid:
    tampered = False

    def poll(self, now):
        if ALWAYS:
            raise OSError(5)
        if once("lid"):
            raise OSError(5)
        return None

    def clear(self):
        return True


class Led:
    READY = DEALING = ERROR = TAMPER = SERVICE = OFF = b"\x01"

    def show(self, pattern):
        pass

    async def run(self):
        if once("led"):
            raise OSError(5)
        while True:
            await asyncio.sleep_ms(20)


class Dog:
    starved = None

    def register(self, name, ms):
        pass

    def checkin(self, name):
        if once({"host": "link", "ticker": "ticker"}[name]):
            raise RuntimeError("checkin " + name)

    def service(self):
        if once("feeder"):
            raise RuntimeError("feed")
        return True


app = App(Hardware(host=Host(), reader=Reader(), state_dir=root, board_name="inproc",
                   beam=Beam(), lid=Lid(), led=Led(), wdt=Dog()))
app.per.feed_ms = 20
check = app.per.check


def pairing_check(now=None):
    if once("pairing"):
        raise RuntimeError("pairing")
    return check(now)


app.per.check = pairing_check
faults = []
fault = app.fault


def record(where, exc):
    faults.append(where)
    fault(where, exc)


app.fault = record
table_tick = app.table.tick
table_ticks = [0]


def counted_tick(now):
    table_ticks[0] += 1
    return table_tick(now)


app.table.tick = counted_tick
NAMES = [n for n, _ in app.tasks()]
DUTIES = NAMES + ["link", "pairing"] + ([] if ALWAYS else ["lid"])   # the ticker's duties


async def main():
    run = asyncio.create_task(app.main())
    t0 = time.ticks_ms()
    ctr = None
    answered = False
    while time.ticks_diff(time.ticks_ms(), t0) < 10000:
        out = host.transmit(time.ticks_ms())
        if out:
            app.hw.host.rx.extend(out)
        if host.up and ctr is None:
            ctr = host.command("status", {})
        answered = ctr is not None and any(k == "reply" and b.get("re") == ctr
                                           for k, b, _, _ in events)
        if (answered and app.reads == 1 and all(after.get(n, 0) > 0 for n in DUTIES)
                and table_ticks[0] >= 5):
            break
        await asyncio.sleep_ms(5)
    live = sorted(n for t, n in app._running.items() if not t.done())
    print(json.dumps({"names": NAMES, "faults": faults, "after": after, "reads": app.reads,
                      "answered": answered, "running": not run.done(), "live": live,
                      "table_ticks": table_ticks[0]}))
    run.cancel()
    for t in app._running:
        t.cancel()


asyncio.run(main())
"""

TASKS = ("reader", "host", "ticker", "beam", "led", "feeder")
# the ticker's duties besides its own work (one task step a tick for all of them: firmware/shoe/
# app.py ticker_task), and the name their faults are reported under
IN_TICKER = {"link": "ticker", "lid": "peripherals", "pairing": "peripherals"}


def run_app(tmp_path_factory, *args):
    root = tmp_path_factory.mktemp("app_tasks")
    script = root / "app_tasks.py"
    script.write_text(SCRIPT)
    return json_lines(run_mpy(str(script), heap="512k", args=(str(root), *args), timeout=120))[-1]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory):
    return run_app(tmp_path_factory)


def test_main_runs_every_task_and_all_are_running_after_their_faults(outcome):
    assert sorted(outcome["names"]) == sorted(TASKS), outcome
    assert outcome["running"] and outcome["live"] == sorted(TASKS), outcome


@pytest.mark.parametrize("task", TASKS + tuple(IN_TICKER))
def test_a_task_survives_an_exception(outcome, task):
    name = IN_TICKER.get(task, task)
    assert name in outcome["faults"], outcome  # reported under its name
    assert outcome["after"].get(task, 0) > 0, outcome  # ... and it went on working
    assert (name if task not in IN_TICKER else "ticker") in outcome["live"], outcome
    if task == "reader":
        assert outcome["reads"] == 1, outcome  # the read after the fault reached the app
    if task == "host":
        assert outcome["answered"], outcome  # a command after the fault was answered


def test_a_lid_switch_failing_at_every_poll_is_reported_once_and_stops_no_other_duty(
    tmp_path_factory,
):
    """The lid's poll runs in the ticker task beside the table's timers and the pairing check:
    a switch that fails at every poll is one "peripherals" fault, and the table keeps ticking
    (its jam and age timers), the pairing check runs, the link answers. With the poll inside
    tick() unguarded, the ticker task died at every tick and the table never ticked."""
    out = run_app(tmp_path_factory, "lid-always")
    assert out["faults"].count("peripherals") == 1, out
    assert out["table_ticks"] >= 5 and out["after"].get("pairing", 0) > 0, out
    assert out["answered"] and out["running"], out
