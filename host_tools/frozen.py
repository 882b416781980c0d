"""Put the frozen image (the firmware compiled into MicroPython itself) on a Pico: `shoectl flash`.

    flash(uf2="build/pico-firmware/firmware.uf2", port="/dev/ttyACM0")

Steps, each checked:
1. read the UF2 and refuse what the board must not take (host_tools/uf2.py: wrong chip, damaged,
   or reaching into the filesystem and journal region);
2. the BOOTSEL drive: --drive, or a mounted RPI-RP2; with --port and no drive, the board is
   asked to enter its boot loader (`machine.bootloader()` over the REPL);
3. copy the image onto the drive: the boot loader programs it and restarts the board (the
   filesystem, the shoe's keys and its journal are outside the image and stay);
4. with --port: wait for the REPL (fit the service jumper, as for `shoectl deploy`), check that
   the running MicroPython is the image's (`shoe.app` imports with `.frozen` alone on
   sys.path), install `main.py` (board/main.py), put the wiring for --reader in `/` (or
   remove one), and retire a deployed `.mpy` version (its pointer `shoe_fw/active`: main.py
   prefers a deployed version to the frozen firmware). Then reset without the jumper.

Without --port only steps 1-3 run; `shoectl flash --port PORT --no-image` runs step 4 alone
(a board flashed by hand by dragging the UF2 onto its drive).
"""

import hashlib
import time
from pathlib import Path

from host_tools import uf2
from host_tools.errors import ShoeError
from host_tools.runtime import BOARD, ROOT

DEFAULT_UF2 = ROOT / "build" / "pico-firmware" / "firmware.uf2"
FW_DIR = "shoe_fw"


_FROZEN_PROBE = """
def _shoe_frozen():
    import sys
    path = sys.path[:]
    mods = {}
    for k in list(sys.modules):
        if k == 'shoe' or k.startswith('shoe.'):
            mods[k] = sys.modules.pop(k)
    sys.path[:] = ['.frozen']
    try:
        import shoe.app
        return True
    except ImportError:
        return False
    finally:
        sys.path[:] = path
        for k in list(sys.modules):
            if k == 'shoe' or k.startswith('shoe.'):
                del sys.modules[k]
        sys.modules.update(mods)
"""


def enter_bootloader(port, timeout=5.0):
    """Ask the board on `port` to restart into its boot loader (the REPL goes away)."""
    from host_tools.deploy import Device

    dev = Device(port, timeout=timeout, op_timeout=5.0).__enter__()
    try:
        dev.t.exec_raw_no_follow("import machine\nmachine.bootloader()")
    except Exception as e:  # the port may vanish at once: that is the request's success
        if not isinstance(e, OSError):
            raise ShoeError(
                "the board on %s did not take the boot loader request: %s" % (port, e)
            ) from None
    finally:
        dev.close()


def wait_for_repl(port, timeout):
    """An entered host_tools.deploy.Device once the board's REPL answers again."""
    from host_tools.deploy import Device

    deadline = time.monotonic() + timeout
    while True:
        try:
            return Device(
                port, timeout=min(20.0, max(1.0, deadline - time.monotonic())), op_timeout=120
            ).__enter__()
        except ShoeError as e:
            if time.monotonic() > deadline:
                raise ShoeError(
                    "the board on %s did not answer after the image was written "
                    "(%s); is the service jumper fitted?" % (port, e)
                ) from None
            time.sleep(0.5)


def install(dev, board, reader=None, keep_deployed=False, progress=print):
    """On the REPL of a board running the frozen image: main.py, the wiring, no deployed
    version in the way. -> {"frozen": True, "retired": [...], "wiring": "frozen"|"/wiring.mpy"}"""
    import tempfile

    from host_tools import build
    from host_tools.deploy import wiring_source

    dev.identify()
    # main.py may have put a deployed version first on sys.path: ask the frozen modules alone
    dev.run(_FROZEN_PROBE, "frozen check")
    if dev.value("_shoe_frozen()", "frozen check") is not True:
        raise ShoeError(
            "the board's MicroPython has no shoe firmware frozen in (no shoe.app "
            "among its frozen modules): the image on it is not a shoe image"
        )
    main_src = (BOARD / "main.py").read_bytes()
    dev.write_file("main.py.new", main_src)
    h = dev.value(
        "__import__('binascii').hexlify(__import__('hashlib').sha256("
        "open('main.py.new','rb').read()).digest()).decode()",
        "main.py check",
    )
    if h != hashlib.sha256(main_src).hexdigest():
        raise ShoeError("verification of main.py failed (main.py.new left on the board)")
    dev.run("_shoe_replace('main.py.new', 'main.py')", "main.py switch")
    if reader is None:
        dev.run("_shoe_rm('wiring.mpy')", "wiring clean-up")
        wiring = "frozen"
    else:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "wiring.py"
            src.write_text(wiring_source(board, reader))
            build.compile_source(
                src, "wiring.py", Path(tmp) / "wiring.mpy", arch=build.board_arch(board)
            )
            data = (Path(tmp) / "wiring.mpy").read_bytes()
        dev.write_file("wiring.mpy", data)
        wiring = "/wiring.mpy (%s reader)" % reader
    retired = []
    if not keep_deployed:
        for p in ("active", "active.new"):
            name = dev.value("_shoe_read(%r)" % (FW_DIR + "/" + p))
            if name:
                retired.append(name)
                dev.run("_shoe_rm(%r)" % (FW_DIR + "/" + p), "version pointer removal")
    progress(
        "main.py installed; wiring: %s; %s"
        % (
            wiring,
            "retired the deployed version(s) %s (their files stay under %s/ until the next "
            "deploy)" % (", ".join(sorted(set(retired))), FW_DIR)
            if retired
            else "no deployed version in the way",
        )
    )
    return {"frozen": True, "retired": sorted(set(retired)), "wiring": wiring}


def flash(
    uf2_path=None,
    board="pico",
    drive=None,
    port=None,
    reader=None,
    timeout=60.0,
    keep_deployed=False,
    progress=print,
    image=True,
):
    progress = progress or (lambda msg: None)
    out, repl_s = {}, timeout
    if image:
        layout = uf2.board_layout(board)
        img = uf2.read(uf2_path or DEFAULT_UF2, layout)
        progress(
            "image %s: %d blocks, flash 0x%x-0x%x (storage from 0x%x untouched), sha256 %s"
            % (img.path, img.blocks, img.lo, img.hi, layout["storage_offset"], img.sha256)
        )
        if uf2.present_drive(layout, drive) is None and port:
            progress("asking the board on %s to enter its boot loader" % port)
            enter_bootloader(port)
        d = uf2.wait_for_drive(layout, drive, timeout)
        dst = uf2.copy_to_drive(img, d)
        progress("copied to %s; the board programs it and restarts" % dst)
        out = {"sha256": img.sha256, "blocks": img.blocks, "drive": str(d)}
        if port:
            deadline = time.monotonic() + timeout
            while dst.exists() and time.monotonic() < deadline:  # the drive takes the file
                time.sleep(0.2)
            repl_s = max(5.0, deadline - time.monotonic())
    elif not port:
        raise ShoeError("--no-image needs --port (the board's REPL)")
    if port:
        dev = wait_for_repl(port, repl_s)
        try:
            out.update(install(dev, board, reader, keep_deployed, progress))
        finally:
            dev.close()
        if image:
            progress(
                "the frozen image runs on the board. Reset it without the service jumper "
                "to start the shoe."
            )
    return out
