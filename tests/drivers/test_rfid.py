"""The MFRC522 driver and RFID reader under MicroPython, against the register-level chip model."""
from tests.mpy import json_lines, run_mpy

SCRIPT = "tests/drivers/check_rfid.py"


def test_rfid_driver_under_micropython():
    lines = json_lines(run_mpy(SCRIPT, heap="256k"))
    checks = {d["check"]: d for d in lines if "check" in d}
    assert lines[-1] == {"done": 16}
    assert checks["idle_poll_no_alloc"]["polls"] == 50
    assert checks["random_field"]["cards"] >= checks["random_field"]["clean"] > 0
    assert checks["faults"]["reasons"]["crc"] == "rfid_crc"
    assert checks["reader_dedup"]["counts"]["card"] == 5
