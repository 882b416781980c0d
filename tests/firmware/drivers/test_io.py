"""Beam, exit matcher, lid, LED and watchdog under MicroPython at the device heap (64k): one
MicroPython run of tests/firmware/drivers/check_io.py, one test per check."""

import pytest

from tests.mpy import run_checks

CHECKS = [
    "beam_isr_no_alloc",
    "beam_overrun_and_merge",
    "beam_task",
    "matcher",
    "lid",
    "led",
    "watchdog",
]


@pytest.fixture(scope="module")
def io_checks():
    return run_checks("tests/firmware/drivers/check_io.py")


def test_every_check_ran(io_checks):
    assert io_checks.names == CHECKS and io_checks.done == len(CHECKS)


@pytest.mark.parametrize("name", CHECKS)
def test_check(io_checks, name):
    io_checks.assert_ok(name)


def test_figures(io_checks):
    assert io_checks.data["beam_isr_no_alloc"]["edges"] == 5
    assert io_checks.data["watchdog"]["feeds"] == 70
