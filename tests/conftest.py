"""Shared pytest set-up: the repo root on sys.path (for tests.mpy), the --device option, and the
fixtures many directories use (helpers they build on: tests/support.py)."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import host_tools  # noqa: E402,F401  (before any shoe import: the CPython `micropython` stand-in)
from hypothesis import settings  # noqa: E402

# Property tests: the same examples on every run (a failure reproduces), and no per-example
# deadline (the emulators share the 2 cores). SHOE_HYPOTHESIS=explore draws fresh examples.
settings.register_profile("shoe", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile("explore" if __import__("os").environ.get("SHOE_HYPOTHESIS") == "explore"
                      else "shoe")

# the one-process-per-port locks (host_tools/link/portlock.py) of this test run alone: other
# runs on the machine (same user, same /tmp) get the same 127.0.0.1 port numbers in turn
__import__("os").environ.setdefault("SHOE_LOCK_DIR", __import__("tempfile").mkdtemp(
    prefix="shoe-locks-"))


def pytest_addoption(parser):
    parser.addoption("--device", default=None, help="serial port of a real board for hardware tests")


def pytest_collection_modifyitems(config, items):
    # the emulated-Pico tests first: they are the longest (minutes of emulated chip each) and
    # with xdist they then run beside the rest of the suite instead of alone at its end
    items.sort(key=lambda it: 0 if "tests/emu/" in str(it.fspath).replace("\\", "/") else 1)
    if config.getoption("--device"):
        return
    skip = pytest.mark.skip(reason="needs --device PORT (a real board)")
    for item in items:
        if "hardware" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def sim_board(tmp_path):
    """A fresh virtual board (the real firmware under MicroPython) on flash in tmp_path/board."""
    from tests.support import virtual_board

    with virtual_board(tmp_path / "board") as b:
        yield b


@pytest.fixture(scope="session")
def fw_build(tmp_path_factory):
    """The firmware compiled with mpy-cross once per session (as for a board)."""
    from tests.firmware.link.helpers import mpy_build

    return mpy_build(tmp_path_factory.mktemp("fwbuild"))
