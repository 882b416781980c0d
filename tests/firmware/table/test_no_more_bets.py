"""No wager changes after "no more bets" (684a.7(c), 678a.7(c)) and the deck-age limits the shoe
applies by default (684a.3(c)): the checks of check_no_more_bets.py with the real engine, under
MicroPython (the unix port at a device-sized heap) and in CPython."""

import os

import pytest

from tests.firmware.table import check_no_more_bets as checks
from tests.mpy import run_checks

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def device():
    return run_checks(os.path.join(HERE, "check_no_more_bets.py"), heap="320k")


@pytest.mark.clause("684a.7(c)")
def test_fcf_wagers_are_fixed_at_open_round(device):
    device.assert_ok("fcf_wagers_fixed")
    checks.check_fcf_wagers_fixed()


@pytest.mark.clause("678a.7(c)")
def test_hcf_wagers_are_fixed_at_open_round(device):
    device.assert_ok("hcf_wagers_fixed")
    checks.check_hcf_wagers_fixed()


@pytest.mark.clause("rules:1.1-deck-age")
def test_deck_age_limits_default_to_four_hours_by_hand_eight_from_a_shoe(device):
    device.assert_ok("deck_age_defaults")
    checks.check_deck_age_defaults()
