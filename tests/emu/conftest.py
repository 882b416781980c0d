"""Fixtures for tests on the emulated Pico (rp2040js + the real MicroPython rp2 firmware).

Every test here skips with one line when the emulator cannot run (no UF2 / boot ROM in
SHOE_PICO_UF2 / SHOE_RP2040_BOOTROM, rp2040js not installed): `.ci/run` points them at
../shared/pico. `pico_shoe` deploys and provisions once per session with the real CLI
(`shoectl deploy --board pico`, `shoectl provision`) and hands each test a copy of that flash;
the xdist workers share that one image (tests/support.built_once).
"""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from host_tools.sim import emu as _emu
from tests.support import built_once

ROOT = Path(__file__).resolve().parents[2]


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
    return {
        "flash": d / "state" / "flash.bin",
        "unique_id": d / "state" / "unique_id",
        "keys": built["keys"],
        "times": built["times"],
    }


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


def _refit_optical(d, pico_image):
    state = d / "state"
    state.mkdir()
    shutil.copy(pico_image["flash"], state / "flash.bin")
    shutil.copy(pico_image["unique_id"], state / "unique_id")
    with _emu.Emulator(state) as e:
        e.control("pin", pin=22, value=0)  # service jumper: the REPL stays free
        e.control("reset")
        t0 = time.monotonic()
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "host_tools",
                "deploy",
                "--board",
                "pico",
                "--reader",
                "optical",
                "--port",
                e.urls["repl"],
                "--quiet",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert p.returncode == 0, p.stderr
        return {"redeploy_s": time.monotonic() - t0}


@pytest.fixture(scope="session")
def optical_image(tmp_path_factory, pico_image):
    """The same shoe refitted with the optical module, as a technician does it: on a copy of
    the deployed and provisioned flash, `shoectl deploy --board pico --reader optical` (files
    unchanged since the active version are copied on the chip, only wiring.mpy goes over USB);
    the provisioned keys stay. Made once for the run, shared by the xdist workers."""
    built = built_once(tmp_path_factory, "pico-optical", lambda d: _refit_optical(d, pico_image))
    state = Path(built["dir"]) / "state"
    return {
        "flash": state / "flash.bin",
        "unique_id": state / "unique_id",
        "redeploy_s": built["redeploy_s"],
    }
