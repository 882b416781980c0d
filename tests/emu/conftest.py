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

from host_tools import frozen
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


def copy_image(image, state):
    """A shoe's own copy of a made image ({"flash", "unique_id"}) in a new directory `state`
    (what an Emulator runs on): tests never write the shared image."""
    state.mkdir()
    shutil.copy(image["flash"], state / "flash.bin")
    shutil.copy(image["unique_id"], state / "unique_id")
    return state


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
    state = copy_image(pico_image, tmp_path / "pico")
    with _emu.Emulator(state) as e:
        e.keys_file = pico_image["keys"]
        yield e


@pytest.fixture(scope="session")
def pico_first_boot(tmp_path_factory, pico_image):
    """The deployed image's first boot (main.py -> hwbuild -> the app, which makes the journal's
    ring extents: ~7.6 s of chip against ~3.9 s for a later boot), made once for the run and
    shared by the xdist workers: {"status": `shoectl status --json`'s reply after it, "flash",
    "unique_id", "keys"} (the flash as the rig left it when it stopped, the app running).
    test_pico_shoe checks the status; test_journal_ring boots the flash again."""
    from tests.emu.test_pico_shoe import status

    def build(d):
        state = copy_image(pico_image, d / "pico")
        with _emu.Emulator(state) as e:
            e.keys_file = pico_image["keys"]
            return {"status": status(e, d, timeout=600)}  # (the first boot: ~4 s more chip)

    built = built_once(tmp_path_factory, "pico-first-boot", build)
    d = Path(built["dir"]) / "pico"
    return {
        "status": built["status"],
        "flash": d / "flash.bin",
        "unique_id": d / "unique_id",
        "keys": pico_image["keys"],
    }


def _refit_optical(d, pico_image):
    state = copy_image(pico_image, d / "state")
    with _emu.Emulator(state) as e:
        # the service jumper, a reset, and the REPL answering (a condition, not deploy's 5 s:
        # a loaded run's chip was still booting main.py when deploy gave up on its REPL); then
        # deploy with the same patience for the REPL (closing the service REPL leaves the chip
        # busy for a while: both runs of a loaded round on a slow machine lost the refit there)
        with _emu.service_repl(e):
            pass
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
                "--timeout",
                "300",
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


def _flash_frozen(d, reader):
    """A fresh emulated Pico made a shoe the way docs/hardware.md section 5 says for the image
    that ships: `shoectl flash --no-image` on the frozen firmware (main.py, and a wiring.mpy for
    a reader other than the frozen wiring's), then `shoectl provision`."""
    keys = _emu.write_keys_file(d / "shoe.json")
    extra = ["--reader", "optical"] if reader == "optical" else []
    with _emu.Emulator(d / "state", uf2=str(frozen.DEFAULT_UF2)) as e:
        _emu.assemble(
            e, keys, reset=False, install=["flash", "--no-image", "--timeout", "300", *extra]
        )
    return {"keys": keys}


@pytest.fixture(scope="session")
def frozen_image(tmp_path_factory):
    """-> image(reader): the frozen image (build/pico-firmware/firmware.uf2, `make
    pico-firmware`; `.ci/run` builds it) flashed and provisioned for that reader, made once for
    the run and shared by the xdist workers ({"flash", "unique_id", "keys", "uf2"}), or None
    without the image. The firmware's bytecode then runs from flash: a collection does not mark
    it, so the chip idles at about half the .mpy deploy's load and a session takes less rig."""

    def image(reader):
        if not frozen.DEFAULT_UF2.is_file():
            return None
        built = built_once(
            tmp_path_factory, "frozen-" + reader, lambda d: _flash_frozen(d, reader)
        )
        state = Path(built["dir"]) / "state"
        return {
            "flash": state / "flash.bin",
            "unique_id": state / "unique_id",
            "keys": built["keys"],
            "uf2": str(frozen.DEFAULT_UF2),
        }

    return image


@pytest.fixture
def shipped_shoe(tmp_path, request, frozen_image):
    """A shoe on the emulated Pico running the firmware that ships, the frozen image (RFID
    wiring), powered up: what pico_shoe is for the .mpy deploy, at a fraction of the chip's work
    per boot (no bytecode to load into RAM). Without the image, pico_shoe itself."""
    img = frozen_image("rfid")
    if img is None:
        yield request.getfixturevalue("pico_shoe")
        return
    state = copy_image(img, tmp_path / "pico")
    with _emu.Emulator(state, uf2=img["uf2"]) as e:
        e.keys_file = img["keys"]
        yield e
