"""The real App under MicroPython (64 KB data heap) after its journal's end was damaged: the
shoe keeps its latched irregularities (the journal's marks hold them), never numbers a round,
an irregularity or an event again, and reports each round once (issue 18 part 4). A flipped
bit in the last record is repaired: nothing is reported at all."""

import json

from tests.firmware.journal.test_corruption import records
from tests.firmware.app.appscript import APP_PRELUDE, APP_ROOM
from tests.mpy import run_mpy

SCRIPT = (
    APP_PRELUDE
    + r"""
root, phase = sys.argv[1], sys.argv[2]
if phase == "write":
    provision(root, "J-0002")


class Host(io.IOBase):
    def ioctl(self, req, arg):
        return -1

    def write(self, b):
        pass


app = App(Hardware(host=Host(), reader=None, state_dir=root, board_name="inproc"))
_ballast = _data_heap(64 * 1024)
j, t = app.journal, app.table
if phase == "write":
    app.boot()
    assert app.on_command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe",
                                        "paytable": "fcf-public-1"}, "supervisor")["ok"]
    assert app.on_command("load_deck", {"serial": "3A7F", "back": "R"})["ok"]
    for c in deck() + [52]:
        app.on_read("card", card_code(c))
    wag = {"ante": 10, "odds": 10}
    seats = {"1": {"wagers": wag}, "2": {"wagers": wag}}
    assert app.on_command("open_round", {"seats": seats})["ok"]
    for c in deck(60)[:4]:
        app.on_read("card", card_code(c))
    mark = j.eseq
    # the last records
    assert app.on_command("void_round", {"detail": "dealer error"}, "supervisor")["ok"]
    print(json.dumps({"round": t.n_round, "irq": t.n_irq, "eseq": j.eseq, "ctr": j.ctr,
                      "boot": j.boot, "void_from": mark,
                      "latched": [i["reason"] for i in t.latched]}))
else:
    print(json.dumps({"latched": [i["reason"] for i in t.latched],
                      "ids": [i["id"] for i in t.latched],
                      "events": [k for k, b in t.out],
                      "voids": [b["round"] for k, b in t.out if k == "round_void"],
                      "open": t.rnd is not None, "round": t.n_round, "irq": t.n_irq,
                      "eseq": j.eseq, "ctr": j.ctr, "boot": j.boot, "recovery": j.recovery}))
"""
)


def _run(tmp_path, fw_build, state, phase):
    (tmp_path / "appd.py").write_text(SCRIPT)
    return json.loads(
        run_mpy(
            str(tmp_path / "appd.py"),
            heap=APP_ROOM,
            args=(str(state), phase),
            extra_path=(str(fw_build),),
        ).splitlines()[-1]
    )


def test_a_damaged_end_of_the_journal_keeps_the_latched_irregularities(tmp_path, fw_build):
    state = tmp_path / "state"
    state.mkdir()
    w = _run(tmp_path, fw_build, state, "write")
    assert w["latched"] == ["void_supervisor"]
    path = state / "journal.log"
    full = path.read_bytes()
    # zero the log from the last two cards on (their records, the void's): in the stale state
    # the round is still open, and without the marks the latched void_supervisor would be gone
    recs = records(str(path))
    start = recs[-3][0]
    path.write_bytes(full[:start] + bytes(len(full) - start))
    r = _run(tmp_path, fw_build, state, "read")
    assert r["recovery"]["tail"] and r["recovery"]["state"] == "stale", r["recovery"]
    assert r["latched"] == ["void_supervisor", "journal_corrupt"], r
    # the round was voided once (its void is kept for recall): not again; its number is used
    assert r["voids"] == [] and not r["open"] and r["round"] >= w["round"]
    assert min(r["ids"]) == 1 and r["irq"] > w["irq"] and len(set(r["ids"])) == 2
    assert r["eseq"] > w["eseq"] + 1 and r["ctr"] >= w["ctr"] and r["boot"] == w["boot"] + 1


def test_a_flipped_bit_in_the_last_record_is_repaired(tmp_path, fw_build):
    state = tmp_path / "state"
    state.mkdir()
    w = _run(tmp_path, fw_build, state, "write")
    path = state / "journal.log"
    data = bytearray(path.read_bytes())
    off, n = records(str(path))[-1]
    data[off + n // 2] ^= 0x10
    path.write_bytes(bytes(data))
    r = _run(tmp_path, fw_build, state, "read")
    assert r["recovery"] is None and r["latched"] == ["void_supervisor"], r
    assert r["eseq"] == w["eseq"] and r["round"] == w["round"] and r["events"] == []
