"""The MFRC522 driver and RFID reader under MicroPython, against the register-level chip model:
one MicroPython run of tests/firmware/drivers/check_rfid.py, one test per check."""

import pytest

from tests.mpy import run_checks

SCRIPT = "tests/firmware/drivers/check_rfid.py"
CHECKS = [
    "chip_edge_cases",
    "idle_poll_allocates_nothing",
    "idle_poll_frames_stay_off_the_heap",
    "random_field",
    "crc_vector",
    "init",
    "select_and_read_uid7",
    "select_and_read_uid4",
    "select_and_read_uid7_88",
    "faults",
    "reader_dedup",
    "reader_retries",
    "reader_chip_fault",
    "async_read",
    "mid_poll",
    "fast_period",
    "fast_read_loop",
    "air_waits",
    "poll_between",
    "by_uid",
]


@pytest.fixture(scope="module")
def rfid():
    return run_checks(SCRIPT, heap="256k")


def test_every_check_ran(rfid):
    assert rfid.names == CHECKS and rfid.done == len(CHECKS)


@pytest.mark.parametrize("name", CHECKS)
def test_check(rfid, name):
    rfid.assert_ok(name)


def test_figures(rfid):
    d = rfid.data
    assert d["idle_poll_no_alloc"]["polls"] == 50
    assert d["idle_poll_frames"]["polls"] == 50
    assert d["random_field"]["cards"] >= d["random_field"]["clean"] > 0
    assert d["faults"]["reasons"]["crc"] == "rfid_crc"
    assert d["reader_dedup"]["counts"]["card"] == 5
