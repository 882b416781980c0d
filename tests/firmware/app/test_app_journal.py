"""The journal inside the real App under MicroPython (64 KB data heap): a corrupted journal at
boot latches journal_corrupt and voids the open round; a burst of 53 reads queued in the reader
never holds the event loop (the host task runs between cards; the ticker feeds the watchdog)."""

import json
import struct

import pytest

from shoe.journal import log
from tests.firmware.app.appscript import APP_PRELUDE, APP_ROOM
from tests.mpy import run_mpy

SCRIPT = (
    APP_PRELUDE
    + r"""
import gc

root, phase = sys.argv[1], sys.argv[2]
if phase != "read":
    provision(root, "J-0001")


HOST_RUNS = []


class Host(io.IOBase):
    # a host line that is always readable (poll ioctl) and yields nothing: the host task wakes
    # whenever the event loop lets it, and each wake is recorded
    def ioctl(self, req, arg):
        return arg & 1 if req == 3 else -1

    def readinto(self, buf):
        HOST_RUNS.append(1)
        return 0

    def write(self, b):
        pass


class Burst:
    # a reader with every read already queued: read() returns at once, as a UART with 53
    # buffered reads does
    def __init__(self, reads):
        self.reads = reads

    async def read(self):
        if self.reads:
            return self.reads.pop(0)
        await asyncio.sleep_ms(100000)


reads = [("card", card_code(c)) for c in deck() + [52]]
app = App(Hardware(host=Host(), reader=Burst(reads if phase == "burst" else []), state_dir=root,
                   board_name="inproc"))
_ballast = _data_heap(64 * 1024)
if phase == "write":
    app.boot()
    assert app.on_command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe",
                                        "paytable": "fcf-public-1"}, "supervisor")["ok"]
    assert app.on_command("load_deck", {"serial": "3A7F", "back": "R"})["ok"]
    for k, code in reads:
        app.on_read(k, code)
    wag = {"ante": 10, "odds": 10}
    seats = {"1": {"wagers": wag}, "2": {"wagers": wag}}
    assert app.on_command("open_round", {"seats": seats})["ok"]
    for c in deck(60)[:4]:
        app.on_read("card", card_code(c))
    print(json.dumps({"round": app.table.rnd.n, "eseq": app.journal.eseq, "ctr": app.journal.ctr}))
elif phase == "read":
    out = [k for k, b in app.table.out]
    print(json.dumps({"latched": [i["reason"] for i in app.table.latched], "events": out,
                      "open": app.table.rnd is not None, "eseq": app.journal.eseq,
                      "ctr": app.journal.ctr, "recovery": app.journal.recovery}))
else:  # burst: the deck check's 53 reads arrive at once
    assert app.on_command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe",
                                        "paytable": "fcf-public-1"}, "supervisor")["ok"]
    assert app.on_command("load_deck", {"serial": "3A7F", "back": "R"})["ok"]
    seq = []
    on_read = app.on_read

    def rd(kind, data):
        seq.append("h" * len(HOST_RUNS))   # host task runs since the previous card
        HOST_RUNS.clear()
        seq.append("c")
        on_read(kind, data)

    app.on_read = rd

    async def main():
        tasks = [asyncio.create_task(app.reader_task()), asyncio.create_task(app.host_task())]
        while seq.count("c") < 53:
            await asyncio.sleep_ms(5)
        for t in tasks:
            t.cancel()

    asyncio.run(main())
    s = "".join(seq)
    s = s[s.index("c"):s.rindex("c") + 1]
    print(json.dumps({"cards": s.count("c"), "host_during_burst": s.count("h"),
                      "longest_run": max(len(r) for r in s.split("h")),
                      "phase": app.table.current_phase()}))
"""
)


def _run(tmp_path, fw_build, state, phase):
    script = tmp_path / "appj.py"
    script.write_text(SCRIPT)
    out = run_mpy(
        str(script), heap=APP_ROOM, extra_path=(str(fw_build),), args=(str(state), phase)
    )
    return json.loads(out.splitlines()[-1])


@pytest.mark.clause("irr:journal-corrupt")
def test_a_corrupted_journal_at_boot_latches_journal_corrupt_and_voids_the_round(
    tmp_path, fw_build
):
    state = tmp_path / "state"
    state.mkdir()
    w = _run(tmp_path, fw_build, state, "write")
    # damage a record of the open round beyond repair (a card; good records follow it; one
    # flipped bit would be repaired: tests/firmware/journal/test_damage.py)
    path = state / "journal.log"
    data = bytearray(path.read_bytes())
    offs, pos = [], 0
    while pos < len(data):
        offs.append(pos)
        pos += log.HEAD + struct.unpack(">H", bytes(data[pos + 1 : pos + 3]))[0]
    mid = offs[-2]
    data[mid + 9 : mid + 11] = b"\x00\x00"
    path.write_bytes(bytes(data))
    r = _run(tmp_path, fw_build, state, "read")
    assert r["recovery"] is not None and r["recovery"]["holes"] == 1
    assert "journal_corrupt" in r["latched"]
    assert "round_void" in r["events"] and "irregularity" in r["events"] and not r["open"]
    assert r["eseq"] >= w["eseq"] and r["ctr"] > w["ctr"]


def test_a_burst_of_53_reads_lets_the_host_task_run_between_cards(tmp_path, fw_build):
    state = tmp_path / "state"
    state.mkdir()
    r = _run(tmp_path, fw_build, state, "burst")
    assert r["cards"] == 53 and r["phase"] == "open_round"
    # without a yield between cards the reader task keeps the loop for the whole burst
    assert r["host_during_burst"] >= 5 and r["longest_run"] <= 20, r
