"""The app's collection threshold follows the heap it boots in (shoe.gcpacer.GcPacer.tune):
4 KB on the 64 KB data heap of a device-sized board (the anti-fragmentation setting), and what is
free beyond 72 KB on a bigger heap (a Pico), so a large heap is not marked every 4 KB allocated."""

import json

from tests.firmware.link.helpers import DATA_HEAP_PRELUDE
from tests.mpy import run_code

SCRIPT = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, json, gc
import shoe.modules
from shoe.app import App, Hardware

shoe.modules.preload()
root = %r
app = App(Hardware(host=None, reader=None, state_dir=root, board_name="inproc"))
_ballast = _data_heap(%d) if %d else None
app.boot()
gc.collect()
print(json.dumps({"threshold": app.gcpacer.threshold, "free": gc.mem_free()}))
"""
)


def _threshold(tmp_path, fw_build, data_heap):
    state = tmp_path / ("s%d" % data_heap)
    state.mkdir()
    out = run_code(
        SCRIPT % (str(state), data_heap, data_heap), heap="512k", extra_path=(str(fw_build),)
    )
    return json.loads(out.splitlines()[-1])


def test_a_64k_data_heap_collects_every_4k(tmp_path, fw_build):
    assert _threshold(tmp_path, fw_build, 64 * 1024)["threshold"] == 4096


def test_a_big_heap_collects_less_often_and_keeps_72k_after_a_collection(tmp_path, fw_build):
    r = _threshold(tmp_path, fw_build, 0)
    assert r["threshold"] > 64 * 1024, r
    assert r["free"] - r["threshold"] >= 72 * 1024 - 4096, r


def test_a_boards_floor_raises_the_threshold_of_a_64k_data_heap(tmp_path, fw_build):
    """A board whose collections are long (the Pico: ~150 KB of bytecode in RAM to mark) sets a
    floor in its wiring (gc threshold_min), which the app's boot applies."""
    state = tmp_path / "floor"
    state.mkdir()
    script = SCRIPT.replace('board_name="inproc"', 'board_name="inproc", gc_min=16384')
    out = run_code(
        script % (str(state), 64 * 1024, 64 * 1024), heap="512k", extra_path=(str(fw_build),)
    )
    assert json.loads(out.splitlines()[-1])["threshold"] == 16384


IDLE = (
    DATA_HEAP_PRELUDE
    + r"""
import json, gc
import shoe.modules
from shoe.app import App, Hardware

shoe.modules.preload()
app = App(Hardware(host=None, reader=None, state_dir=%r, board_name="inproc"))
app.boot()
import shoe.gcpacer


class Gc:  # gc as the pacer sees it: the calls it makes are counted
    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(gc, name)


junk = [bytes(64) for _ in range(64)]   # ~5 KB of garbage
junk = None
before = gc.mem_alloc()
spy = shoe.gcpacer.gc = Gc()
app.gcpacer.collect_in_pause()
after = gc.mem_alloc()
app.gcpacer.collect_in_pause()
shoe.gcpacer.gc = gc
print(json.dumps({"freed": before - after, "n": app.gcpacer.idle_collections,
                  "calls": spy.calls}))
"""
)


def test_the_app_collects_in_each_pause_without_walking_the_heap_first(tmp_path, fw_build):
    """In the pause after a card (the ticker, after a quiet moment) the app collects, so the
    collector seldom runs inside a card's path, and asks nothing of the heap first (mem_alloc
    and mem_free walk the whole allocation table: on the Pico more than a collection costs)."""
    state = tmp_path / "idle"
    state.mkdir()
    r = json.loads(
        run_code(IDLE % str(state), heap="512k", extra_path=(str(fw_build),)).splitlines()[-1]
    )
    assert r["freed"] > 4096 and r["n"] == 2, r
    assert r["calls"] == ["collect", "collect"], r


DEALING = (
    DATA_HEAP_PRELUDE
    + r"""
import json
import shoe.modules
from shoe.app import App, Hardware

class Reader:
    dealing = None

shoe.modules.preload()
r = Reader()
app = App(Hardware(host=None, reader=r, state_dir=%r, board_name="inproc"))
app.boot()
idle = r.dealing
app.on_command("configure_supervised", {"game": "four-card-frenzy", "procedure": "manual-shoe"},
               "supervisor")
app.on_command("load_deck", {"serial": "3A7F", "back": "R"})
checking = r.dealing
print(json.dumps({"idle": idle, "checking": checking, "phase": app.table.current_phase()}))
"""
)


def test_the_app_tells_a_polling_reader_when_cards_are_expected(tmp_path, fw_build):
    """The RFID reader polls fast (2 ms) only while a deck check, a round or its stub expects
    cards (RFIDReader.dealing, set by the app), and at its idle period otherwise."""
    state = tmp_path / "dealing"
    state.mkdir()
    r = json.loads(
        run_code(DEALING % str(state), heap="512k", extra_path=(str(fw_build),)).splitlines()[-1]
    )
    assert r == {"idle": False, "checking": True, "phase": "deck_check"}, r
