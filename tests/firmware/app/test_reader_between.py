"""A polling reader is polled between the App's long steps (under MicroPython, the real App):
before a command's journal write and after it, after a round boundary's snapshot, and in the
ticker's pause work (shoe.drivers.rfid.RFIDReader.poll_between). On the RP2040 those steps took
80-250 ms, in which the reader task could not poll, and a card riffled past the reader stays
~100 ms (bench/bench_pace.py --gaps). A reader without poll_between (the optical module) is left
alone: the App runs as before."""

import json

from tests.firmware.app.appscript import APP_PRELUDE, APP_ROOM
from tests.mpy import run_mpy

SCRIPT = (
    APP_PRELUDE
    + r"""
root, kind = sys.argv[1], sys.argv[2]
provision(root, "B-0001")
LOG = []


class Polling:
    # a reader that polls (RFID): each poll_between() call is logged
    dealing = False

    async def read(self):
        await asyncio.sleep_ms(100000)

    def poll_between(self):
        LOG.append("poll")


class Stream:
    # a reader that does not (the optical module's shape)
    async def read(self):
        await asyncio.sleep_ms(100000)


T = [0]
reader = Polling() if kind == "polling" else Stream()
app = App(Hardware(host=QuietHost(), reader=reader, state_dir=root, board_name="inproc"),
          ticks_ms=lambda: T[0])
_ballast = _data_heap(64 * 1024)
_send_many = app.link.send_many
_checkpoint = app.journal.checkpoint


def send_many(*a, **k):
    LOG.append("write")
    return _send_many(*a, **k)


def checkpoint():
    LOG.append("snapshot")
    return _checkpoint()


app.link.send_many = send_many
app.journal.checkpoint = checkpoint
app.boot()
out = {}


def step(name, fn):
    del LOG[:]
    fn()
    out[name] = LOG[:]


def command(k, body, role="table"):
    r = app.on_command(k, body, role)
    if not r.get("ok", True):
        raise RuntimeError((k, r))


step("configure", lambda: command("configure", {"game": "four-card-frenzy",
     "procedure": "manual-shoe", "paytable": "fcf-public-1"}, "supervisor"))
step("load_deck", lambda: command("load_deck", {"serial": "3A7F", "back": "R"}))
for c in deck() + [52]:   # the deck check (its cards make no event each)
    app.on_read("card", card_code(c))
wag = {"ante": 10, "odds": 10}
step("open_round", lambda: command("open_round", {"seats": {"1": {"wagers": wag}}}))
step("card", lambda: app.on_read("card", card_code(deck()[0])))
step("void_round", lambda: command("void_round", {}, "supervisor"))


def pause():
    T[0] += 1000   # no card for a second: the ticker's pause work
    app.tick(1)


step("pause", pause)
step("idle_tick", lambda: app.tick(1))   # the same pause: its work is done
out["phase"] = app.table.current_phase()
print(json.dumps(out))
"""
)


def _run(tmp_path, fw_build, kind):
    state = tmp_path / kind
    state.mkdir()
    script = tmp_path / "between.py"
    script.write_text(SCRIPT)
    out = run_mpy(str(script), heap=APP_ROOM, extra_path=(str(fw_build),), args=(str(state), kind))
    return json.loads(out.splitlines()[-1])


def test_a_polling_reader_is_polled_before_and_after_each_journal_write_and_snapshot(
    tmp_path, fw_build
):
    r = _run(tmp_path, fw_build, "polling")
    # a command: its own work, then the journal's write, then whatever follows the reply
    for name in ("configure", "load_deck", "open_round"):
        assert r[name] == ["poll", "write", "poll"], (name, r)
    # a round boundary's snapshot (a full one: the longest step of all)
    assert r["void_round"] == ["poll", "write", "poll", "snapshot", "poll"], r
    # a card read: its record written, then the next card may already be in the field
    assert r["card"] == ["write", "poll"], r
    # the ticker's pause work (journal catch-up, then maybe a collection), once a pause
    assert r["pause"] == ["poll"] and r["idle_tick"] == [], r


def test_a_reader_that_does_not_poll_is_left_alone(tmp_path, fw_build):
    r = _run(tmp_path, fw_build, "stream")
    assert r["configure"] == ["write"] and r["void_round"] == ["write", "snapshot"], r
    assert "poll" not in json.dumps(r), r
