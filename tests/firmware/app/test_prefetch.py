"""The first round after a boot, or after a configure in the same boot, costs no lazy imports:
the idle ticker loads them (shoe.app App._warm), checked on the unix port with the shipped .mpy
files and no preload, as a board."""

import pytest

from host_tools.build import compile_shipped
from host_tools.runtime import BOARD
from tests.mpy import json_lines, run_mpy

SCRIPT = "tests/firmware/app/prefetch_session.py"


def _run(state, *args):
    return json_lines(
        run_mpy(
            SCRIPT,
            heap="1m",
            args=(str(state),) + args,
            extra_path=(str(compile_shipped()), str(BOARD / "sim")),
        )
    )


@pytest.mark.parametrize(
    "game, name, settles",
    [
        ("fcf", "four-card-frenzy", "shoe.games.fcfround"),
        ("hcf", "high-card-flush", "shoe.games.hcfround"),
    ],
)
def test_first_round_after_boot_imports_nothing(tmp_path, game, name, settles):
    assert _run(tmp_path, "configure", game)[-1] == {"configured": name}
    idle, out = _run(tmp_path, "round", game)  # a boot: the configuration comes from the journal
    assert idle["idle_ms"] < 10000
    assert out["result"] is True
    assert out["imported"] == {"open_round": [], "decisions": [], "settle": []}
    # ... and without the idle time, the same round does import them (what the ticker saved)
    cold_state = tmp_path / "cold"
    cold_state.mkdir()
    _run(cold_state, "configure", game)
    cold = _run(cold_state, "round", "noidle", game)[-1]
    assert cold["result"] is True
    assert "shoe.games.engine" in cold["imported"]["open_round"]
    assert settles in cold["imported"]["settle"]


@pytest.mark.parametrize(
    "game, settles", [("fcf", "shoe.games.fcfround"), ("hcf", "shoe.games.hcfround")]
)
def test_first_round_after_a_configure_in_the_same_boot_imports_nothing(tmp_path, game, settles):
    """A shoe configured since it booted (a new shoe, or a new game) warms up too: the configure
    command sets the prefetch the boot sets for a table configured before it."""
    lines = _run(tmp_path, "both", game)
    assert lines[0]["configured"] and lines[1]["idle_ms"] < 10000
    assert lines[-1]["result"] is True
    assert lines[-1]["imported"] == {"open_round": [], "decisions": [], "settle": []}
