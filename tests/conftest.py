"""Shared pytest set-up: the repo root on sys.path (for tests.mpy), the --device option, and the
fixtures many directories use (helpers they build on: tests/support.py)."""

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hypothesis import settings  # noqa: E402

import host_tools  # noqa: E402,F401  (before any shoe import: the CPython `micropython` stand-in)

# Property tests: the same examples on every run (a failure reproduces), and no per-example
# deadline (the emulators share the 2 cores). SHOE_HYPOTHESIS=explore draws fresh examples.
settings.register_profile("shoe", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(
    "explore" if __import__("os").environ.get("SHOE_HYPOTHESIS") == "explore" else "shoe"
)

# the one-process-per-port locks (host_tools/link/portlock.py) of this test run alone: other
# runs on the machine (same user, same /tmp) get the same 127.0.0.1 port numbers in turn
__import__("os").environ.setdefault(
    "SHOE_LOCK_DIR", __import__("tempfile").mkdtemp(prefix="shoe-locks-")
)


def pytest_addoption(parser):
    parser.addoption(
        "--device", default=None, help="serial port of a real board for hardware tests"
    )


# Wall seconds of each emulated-Pico test file in `make test` (--durations, setup waits included,
# fresh clone, 2026-12-03 second stop); only how the files are dealt out to the xdist workers
# depends on them (an unknown file counts 30).
EMU_SECONDS = {
    "test_readme_flows.py": 300,
    "test_e2e.py": 260,
    "test_journal_ring.py": 215,
    "test_readme_by_hand.py": 175,
    "test_pace.py": 100,
    "test_pico_tags.py": 75,
    "test_attest.py": 55,
    "test_pico_shoe.py": 50,
    "test_qstr_margin.py": 30,
    "test_flash_image.py": 25,
    "test_rig.py": 15,
}
# files whose tests need no deployed image (pico_image): a worker starts with them while another
# deploys the one image they all share
EMU_NO_IMAGE = ("test_rig.py",)
# The other files of more than ~10 s (wall, quiet machine, 2026-12-03; under tests/): dealt out
# whole with the emulated-Pico files, longest first, each to the worker with the least so far,
# right after that worker's emulated-Pico files. Left to worksteal in file order, the soak tests
# (70 s, mostly waiting on a lossy link) ran last on one worker while the others had finished.
LONG_SECONDS = {
    "e2e/test_soak.py": 75,
    "e2e/test_faults.py": 45,
    "e2e/test_power.py": 35,
    "e2e/test_board_lossy.py": 30,
    "security/test_roles.py": 25,
    "host_tools/cert/test_firmware.py": 22,
    "host_tools/floor/test_secrecy.py": 20,
    "host_tools/cert/test_pack.py": 15,
    "e2e/test_board_power_cuts.py": 12,
    "firmware/games/test_micropython.py": 12,
}


def _is_emu(item):
    return "tests/emu/" in str(item.fspath).replace("\\", "/")


def _long_key(item):
    """The LONG_SECONDS key of an item's file, or None."""
    p = str(item.fspath).replace("\\", "/")
    i = p.rfind("/tests/")
    key = p[i + 7 :] if i >= 0 else p
    return key if key in LONG_SECONDS else None


def deal_out(items, workers):
    """The order in which `--dist worksteal` gives each worker its share of the emulated-Pico tests
    first. They are the longest (minutes of emulated chip each): started first, they run beside
    the rest of the suite instead of alone at its end, and dealt out by file (a file's tests share
    module fixtures) to balance the workers; alone (one process), they simply come first.
    worksteal's first deal gives worker i the i-th of `workers` slices of the list (by count):
    each slice here is a worker's emulated-Pico files, then its part of the rest."""
    emu = [it for it in items if _is_emu(it)]
    if workers < 2 or not emu:
        return emu + [it for it in items if not _is_emu(it)]
    files, seconds, rest = {}, {}, []  # file key -> its tests, its seconds; the other tests
    for it in emu + [it for it in items if not _is_emu(it)]:  # (emulated-Pico files win ties)
        if _is_emu(it):
            key = it.fspath.basename
            seconds[key] = EMU_SECONDS.get(key, 30)
        else:
            key = _long_key(it)
            if key is None:
                rest.append(it)
                continue
            seconds[key] = LONG_SECONDS[key]
        files.setdefault(key, []).append(it)
    emu_files = {it.fspath.basename for it in emu}
    load = [0] * workers
    dealt = [[] for _ in range(workers)]
    for name in sorted(files, key=lambda n: -seconds[n]):  # longest first
        w = load.index(min(load))
        load[w] += seconds[name]
        dealt[w].append(name)
    out, left = [], len(items)
    for w in range(workers):
        size = left // (workers - w)  # what worksteal sends worker w at the start
        # the files needing no image first, then the emulated-Pico files, then the other long
        names = sorted(dealt[w], key=lambda n: (n not in EMU_NO_IMAGE, n not in emu_files))
        mine = [it for n in names for it in files[n]]
        take = max(0, size - len(mine))
        out += mine + rest[:take]
        rest = rest[take:]
        left -= size
    return out + rest


def pytest_collection_modifyitems(config, items):
    items[:] = deal_out(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
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
