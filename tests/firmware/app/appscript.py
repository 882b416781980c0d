"""The start of every MicroPython script that runs the real App on fake parts (tests/firmware/app,
tests/firmware/journal): the app's imports, the keys, the card codes, a shoe.json, a quiet host
UART and a seeded deck. A test's script is APP_PRELUDE + its own lines, run with run_mpy at
APP_ROOM (the whole app's bytecode, as frozen in flash on a board, then a 64 KB data heap from
_data_heap())."""

from tests.firmware.link.helpers import DATA_HEAP_PRELUDE

APP_ROOM = "512k"

APP_PRELUDE = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, json, io
import asyncio
import shoe.modules
from shoe.app import App, Hardware
from shoe.cardcode import CardCodes

shoe.modules.preload()
KEYS = {"shoe": b"demo-shoe-key-0001", "supervisor": b"demo-supervisor-key",
        "card": b"demo-card-key"}
codes = CardCodes(KEYS["card"])


def provision(root, shoe_id):
    # the shoe.json the App reads at boot: this id and KEYS
    with open(root + "/shoe.json", "w") as f:
        json.dump({"version": 1, "shoe_id": shoe_id,
                   "keys": {k: "".join("%02x" % x for x in v) for k, v in KEYS.items()}}, f)


class QuietHost(io.IOBase):
    # a host UART with nothing to read that takes every write whole; `sending`: its bytes are
    # still on the wire (machine.UART.txdone() False)
    sending = False

    def ioctl(self, req, arg):
        return 0 if req == 3 else -1

    def write(self, b):
        return len(b)

    def txdone(self):
        return not self.sending


def deck(n=52):
    # the same shuffled deck on every run, its first n cards
    x, d = 7, list(range(52))
    for i in range(51, 0, -1):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        j = x % (i + 1)
        d[i], d[j] = d[j], d[i]
    return d[:n]


def card_code(c):
    return codes.make(0x3A7F, "R", c).encode()
"""
)


# A host UART for a script's App (after APP_PRELUDE): Line records each write (`writes`; and
# `log`, if given, gets ["write", bytes]) and takes what `limits` says of the next writes (0:
# none; none left: all); wire() hands what it took to the host endpoint and the endpoint's
# answers to the app (the script's `line`, `host`, `app`, `got` and clock T[0]) (test_to_host.py,
# test_take_read.py)
HOST_LINE = r"""
class Line(io.IOBase):
    def __init__(self, log=None):
        self.writes = []
        self.limits = []
        self.log = log

    def ioctl(self, req, arg):
        return 0 if req == 3 else -1

    def write(self, b):
        n = len(b)
        if self.limits:
            n = min(n, self.limits.pop(0))
        self.writes.append(bytes(b[:n]))
        if self.log is not None:
            self.log.append(["write", bytes(b[:n])])
        return n or None


def wire():
    data = b"".join(line.writes)
    del line.writes[:]
    got.extend(host.receive(data, T[0]))
    back = host.transmit(T[0])
    if back:
        app.on_host_bytes(back, T[0])
"""


# APP_PRELUDE and an App whose clock the script sets (T[0], ms), on a quiet host UART and a reader
# that never reads (cards come from app.on_read), shoe.json in sys.argv[1], a 64 KB data heap: the
# ticker's decisions one call at a time (test_erase_ahead.py, test_quiet_tick.py)
CLOCKED_APP = (
    APP_PRELUDE
    + r"""
root = sys.argv[1]
provision(root, "E-0001")


class Reader:
    dealing = False

    async def read(self):
        await asyncio.sleep_ms(100000)


T = [0]
app = App(Hardware(host=QuietHost(), reader=Reader(), state_dir=root, board_name="inproc"),
          ticks_ms=lambda: T[0])
_ballast = _data_heap(64 * 1024)
"""
)

# APP_PRELUDE and an App whose link runs in-process against a host endpoint (`host`), its clock
# T[0] (ms) moved 5 ms a step: pump(n) exchanges n steps both ways (what reached the host goes to
# `events`), command(kind, body) -> the shoe's answer (kind, body); shoe.json in sys.argv[1], a
# 64 KB data heap (test_store_failure.py)
HOSTED_APP = (
    APP_PRELUDE
    + r"""
from host import make_endpoint

root = sys.argv[1]
provision(root, "M-0001")
host = make_endpoint("host", KEYS["shoe"])
app = App(Hardware(host=None, reader=None, state_dir=root, board_name="inproc"))
_ballast = _data_heap(64 * 1024)
app.boot()
T = [1000]
events = []


def pump(n=6):
    for _ in range(n):
        T[0] += 5
        out = app.link.transmit(T[0])
        if out:
            events.extend(host.receive(out, T[0]))
        back = host.transmit(T[0])
        if back:
            app.on_host_bytes(back, T[0])


def command(kind, body):
    ctr = host.command(kind, body, KEYS["supervisor"] if kind == "configure" else None)
    for _ in range(40):
        pump(1)
        for e in events:
            if e[0] in ("reply", "error") and e[1].get("re") == ctr:
                return e[0], e[1]
    raise RuntimeError("no answer to " + kind)
"""
)


def run_clocked(tmp_path, fw_build, script):
    """Run a CLOCKED_APP script under MicroPython at APP_ROOM -> the JSON of its last line."""
    import json

    from tests.mpy import run_mpy

    state = tmp_path / "state"
    state.mkdir()
    path = tmp_path / "clocked.py"
    path.write_text(script)
    out = run_mpy(str(path), heap=APP_ROOM, extra_path=(str(fw_build),), args=(str(state),))
    return json.loads(out.splitlines()[-1])
