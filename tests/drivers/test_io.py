"""Beam, exit matcher, lid, LED and watchdog under MicroPython at the device heap (64k)."""
from tests.mpy import json_lines, run_mpy


def test_io_drivers_under_micropython():
    lines = json_lines(run_mpy("tests/drivers/check_io.py"))
    assert lines[-1] == {"done": 7}
    checks = {d["check"]: d for d in lines if "check" in d}
    assert checks["beam_isr_no_alloc"]["edges"] == 5
    assert checks["watchdog"]["feeds"] == 70
