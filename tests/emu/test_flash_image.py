"""`shoectl flash` on the emulated Pico: a UF2 copied onto the BOOTSEL drive is programmed and
the chip restarts on it, the filesystem (keys, journal) kept; a UF2 the board must not take
never reaches the flash; and the frozen image (`make pico-firmware`) becomes the running shoe
firmware through the same command a technician types."""

import os
import subprocess
import sys

import pytest

from host_tools import frozen, uf2
from host_tools.deploy import Device
from host_tools.sim import emu as _emu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def repl(emu, timeout=60.0):
    return Device(emu.urls["repl"], timeout=timeout, op_timeout=120.0)


def patched_stock(tmp_path, old=b"1.27.0", new=b"1.27.9"):
    """The shared UF2 with the release string in os.uname() changed (same length): an image
    whose difference the running chip shows."""
    data = bytearray(open(os.environ["SHOE_PICO_UF2"], "rb").read())
    hits = 0
    for off in range(0, len(data), 512):
        body = bytes(data[off + 32 : off + 32 + 476])
        i = body.find(old)
        while i >= 0:
            data[off + 32 + i : off + 32 + i + len(new)] = new
            hits += 1
            i = body.find(old, i + 1)
    assert hits, "no %r in the UF2" % old
    p = tmp_path / "patched.uf2"
    p.write_bytes(bytes(data))
    return p


def wait_gone(path, emu, timeout=60):
    import time

    deadline = time.monotonic() + timeout
    while path.exists():
        assert time.monotonic() < deadline, "the emulated drive never took %s" % path.name
        time.sleep(0.1)


def test_a_uf2_on_the_drive_is_programmed_and_the_filesystem_stays(emulator, tmp_path):
    with repl(emulator) as dev:
        dev.write_file("kept.txt", b"keys and journal live here\n")
        assert dev.value("os.uname().release") == "1.27.0"
    drive = _emu.BootselDrive(emulator, tmp_path / "RPI-RP2").start()
    try:
        layout = uf2.board_layout("pico")
        assert uf2.is_drive(drive.path, layout)
        # refused: an image reaching into the storage region never touches the flash
        bad = bytearray(uf2.read(os.environ["SHOE_PICO_UF2"], layout).data[:512])
        bad[12:16] = (0x10000000 + layout["storage_offset"]).to_bytes(4, "little")
        bad[24:28] = (1).to_bytes(4, "little")
        (drive.path / "BAD.UF2").write_bytes(bytes(bad))
        wait_gone(drive.path / "BAD.UF2", emulator)
        assert "journal" in (drive.path / "BAD.UF2.refused").read_text()
        assert emulator.control("stats")["reset_causes"].get("uf2") is None
        # taken: programmed, the chip restarts on it
        img = uf2.read(patched_stock(tmp_path), layout)
        dst = uf2.copy_to_drive(img, drive.path)
        wait_gone(dst, emulator)
    finally:
        drive.stop()
    assert emulator.control("stats")["reset_causes"].get("uf2") == 1
    with repl(emulator) as dev:
        assert dev.value("os.uname().release") == "1.27.9"
        assert dev.value("open('kept.txt','rb').read()") == b"keys and journal live here\n"


@pytest.mark.skipif(
    not frozen.DEFAULT_UF2.is_file(),
    reason="no frozen image: `make pico-firmware` builds build/pico-firmware/firmware.uf2",
)
def test_shoectl_flash_makes_the_frozen_image_the_running_shoe(pico_shoe, tmp_path):
    """A shoe deployed with the .mpy set gets the frozen image with `shoectl flash`: main.py
    and the wiring installed, the deployed version retired, the keys kept; after a reset the
    app runs from flash and answers `status` with the same identity."""
    from tests.emu.test_pico_shoe import status  # `shoectl status` against the chip

    emu = pico_shoe
    emu.control("pin", pin=22, value=0)  # the service jumper, as for deploy
    emu.control("reset")
    drive = _emu.BootselDrive(emu, tmp_path / "RPI-RP2").start()
    try:
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "host_tools",
                "flash",
                "--drive",
                str(drive.path),
                "--port",
                emu.urls["repl"],
                "--timeout",
                "300",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=900,
        )
    finally:
        drive.stop()
    assert p.returncode == 0, p.stderr + p.stdout
    assert "retired the deployed version" in p.stdout
    emu.control("reset")  # jumper still fitted: main.py builds, no app
    with repl(emu) as dev:
        # a frozen module's __file__ is its manifest path; a deployed one's /shoe_fw/v-.../
        assert dev.value("__import__('shoe.app').app.__file__") == "shoe/app.py"
        assert dev.value("_shoe_read('shoe_fw/active')") is None
        assert dev.value("'shoe.json' in os.listdir('state')")
    emu.control("pin", pin=22, value=1)
    emu.control("reset")
    st = status(emu, tmp_path)
    assert st["shoe_id"] == _emu.EMU_SHOE_ID

    # the lab's check: the shoe hashes its firmware flash under a fresh nonce
    def verify(image):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "host_tools",
                "verify",
                "--port",
                emu.urls["uart0"],
                "--keys",
                str(emu.keys_file),
                "--no-chain",
                "--firmware-image",
                str(image),
                "--timeout",
                "300",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=900,
        )

    v = verify(frozen.DEFAULT_UF2)
    assert v.returncode == 0 and "firmware: VERIFIED" in v.stdout, v.stderr + v.stdout
    v = verify(os.environ["SHOE_PICO_UF2"])  # the stock image is not what runs
    assert v.returncode != 0 and "MISMATCH" in v.stdout, v.stderr + v.stdout
