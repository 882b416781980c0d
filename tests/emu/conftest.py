"""Fixtures for tests on the emulated Pico (rp2040js + the real MicroPython rp2 firmware).

Every test here skips with one line when the emulator cannot run (no UF2 / boot ROM in
SHOE_PICO_UF2 / SHOE_RP2040_BOOTROM, rp2040js not installed): `.ci/run` points them at
../shared/pico. `pico_shoe` deploys and provisions once per session with the real CLI
(`shoectl deploy --board pico`, `shoectl provision`) and hands each test a copy of that flash;
the xdist workers share that one image (tests/support.built_once).
"""
import shutil
from pathlib import Path

import pytest

from host_tools.sim import emu as _emu
from tests.support import built_once


def pytest_collection_modifyitems(config, items):
    why = _emu.missing()
    if not why:
        return
    skip = pytest.mark.skip(reason="emulated Pico: " + why)
    for item in items:
        if "tests/emu/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)


@pytest.fixture
def emulator(tmp_path):
    """A fresh Pico: the UF2 on erased flash (no firmware of ours), booted to the REPL."""
    with _emu.Emulator(tmp_path / "pico") as e:
        yield e


def _assemble(d):
    keys = _emu.write_keys_file(d / "shoe.json")
    with _emu.Emulator(d / "state") as e:
        return {"keys": keys, "times": _emu.assemble(e, keys, reset=False)}


@pytest.fixture(scope="session")
def pico_image(tmp_path_factory):
    """flash.bin of a Pico made a shoe with the CLI (deploy + provision), and the keys file: made
    once for the run (a minute of emulated chip), shared by the xdist workers (read-only: each
    test copies the flash)."""
    built = built_once(tmp_path_factory, "pico-image", _assemble)
    d = Path(built["dir"])
    return {"flash": d / "state" / "flash.bin", "unique_id": d / "state" / "unique_id",
            "keys": built["keys"], "times": built["times"]}


@pytest.fixture
def pico_shoe(tmp_path, pico_image):
    """A shoe on the emulated Pico, powered up: main.py -> hwbuild -> the app."""
    state = tmp_path / "pico"
    state.mkdir()
    shutil.copy(pico_image["flash"], state / "flash.bin")
    shutil.copy(pico_image["unique_id"], state / "unique_id")
    with _emu.Emulator(state) as e:
        e.keys_file = pico_image["keys"]
        yield e
