"""Entry point of every board: pick the deployed firmware, build the hardware, run the app.

One file for the Pico, the ESP32 and the virtual board; what differs between them is data
(board/<name>/wiring.py, deployed as wiring.mpy) and the `machine` module: the real one on a
chip, board/sim/simmachine.py (TCP sockets for the UARTs, a watchdog the host enforces) on the
unix port. `shoectl deploy` copies this file to the board as main.py.

Deployed layout on flash (host_tools/deploy/flow.py writes it; paths relative to the boot cwd "/"):

    main.py                      this file
    shoe_fw/active               one line: the name of the verified version directory
    shoe_fw/v-<hash>/            shoe/*.mpy, wiring.mpy, DEPLOYED (written last, after the
                                 host verified every file's SHA-256)
    state/                       journal, shoe.json (keys and identity, `shoectl provision`)

A version is used only if its DEPLOYED marker exists; `active.new` (written before `active` is
replaced) is the fallback, so an interrupted deploy boots either the old or the new version,
never a mix. With no deployed version the frozen firmware (custom build, manifest.py) runs.

Boot: first reserve the emergency exception buffer (the beam's handler is a hard IRQ: an exception
raised there can allocate nothing, and without the buffer its traceback is lost), then build the
bundle (drivers/hwbuild.py); with the service jumper fitted, or after
MAX_CRASHES boots in a row that ended in an exception out of the app (crash guard), neither
the app nor the watchdog starts (LED service/error, REPL free); else the app runs.

    import main; hw = main.build()   # tests / REPL: the bundle without starting the app
    main.main(machine, ready=f)      # the virtual board: its machine, f(hw) once built
"""
import os
import sys

FW_DIR = "shoe_fw"


def firmware_dir():
    cwd = os.getcwd()
    base = ("" if cwd == "/" else cwd) + "/" + FW_DIR
    for pointer in ("active", "active.new"):
        try:
            with open(base + "/" + pointer) as f:
                name = f.read().strip()
            os.stat(base + "/" + name + "/DEPLOYED")
        except OSError:
            continue
        return base + "/" + name
    return None


def build(machine=None, firmware_root=None, state_dir=None):
    """The hardware bundle. firmware_root: what attestation hashes when no version is
    deployed here (the virtual board names its firmware directory)."""
    root = firmware_dir()
    if root and root not in sys.path:
        sys.path.insert(0, root)
    if machine is None:
        import machine
    import wiring
    from shoe.drivers.hwbuild import build as _build

    # "linux": the unix port standing in for a board (virtual board, deploy tests)
    if sys.platform not in (wiring.platform, "linux"):
        raise RuntimeError("firmware for %s/%s on a %s board" % (wiring.board, wiring.platform,
                                                                sys.platform))
    return _build(machine, wiring, firmware_root=root or firmware_root, state_dir=state_dir)


def main(machine=None, ready=None, firmware_root=None, state_dir=None):
    import micropython

    # before any IRQ is registered (no new names here: the Pico's qstr margin, tests/emu); a
    # port whose buffer is static (the unix port) has no alloc_emergency_exception_buf
    if hasattr(micropython, "alloc_emergency_exception_buf"):
        micropython.alloc_emergency_exception_buf(100)

    hw = build(machine, firmware_root, state_dir)
    from shoe import hardware   # not hwbuild: the app drops that module (boot work) once booted

    if hw.service or hw.crashes >= hardware.MAX_CRASHES:
        if hw.service:
            print("[shoe] service jumper fitted: app and watchdog not started (REPL free)")
        else:
            print("[shoe] safe mode: the app crashed %d boots in a row (see %s/%s); redeploy or "
                  "remove that file" % (hw.crashes, hw.state_dir, hardware.CRASH_FILE))
        if hw.led:
            hw.led.show(hw.led.SERVICE if hw.service else hw.led.ERROR)
            hw.led.tick(0)
        if ready:
            ready(hw)
        return hw
    import shoe.app

    if ready:
        ready(hw)
    try:
        shoe.app.run(hw)
    except Exception as e:  # a bug: record it so a crash loop ends in safe mode, then re-raise
        hardware.record_crash(hw.state_dir, e)
        if hw.led:
            hw.led.show(hw.led.ERROR)
            hw.led.tick(0)
        raise
    return hw


if __name__ == "__main__":
    main()
