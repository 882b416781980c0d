"""The RFID reader with authenticated tags (NTAG 424 DNA over ISO 14443-4) under MicroPython:
one run of tests/firmware/drivers/check_rfid_auth.py against a deck written by the host's own
provisioning code (host_tools/tagwriter.py on the simulated tags), one test per check."""

import pytest

from host_tools import runtime, tagwriter
from tests.mpy import run_checks

SCRIPT = "tests/firmware/drivers/check_rfid_auth.py"
CHECKS = [
    "auth_read",
    "repeat_is_read_again",
    "copies",
    "recovery",
    "not_a_card",
    "mixed_field_and_no_alloc",
    "guard_times",
]
KEY = b"casino-card-key-0123456789"


@pytest.fixture(scope="module")
def rfid(tmp_path_factory):
    d = tmp_path_factory.mktemp("tags")
    tagwriter.simulated_deck(KEY, count=10, path=d / "deck.json")
    return run_checks(
        SCRIPT,
        heap="256k",
        extra_path=(runtime.ROOT / "host_tools" / "sim",),
        args=(d / "deck.json", KEY.hex()),
    )


def test_every_check_ran(rfid):
    assert rfid.names == CHECKS and rfid.done == len(CHECKS)


@pytest.mark.parametrize("name", CHECKS)
def test_check(rfid, name):
    rfid.assert_ok(name)
