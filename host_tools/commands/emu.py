"""shoectl emu: run an emulated Raspberry Pi Pico (rp2040js) as a bench board until stopped."""

from host_tools.errors import ShoeError
from host_tools.foreground import run_until_stopped

NAME = "emu"
HELP = "run an emulated Raspberry Pi Pico (real MicroPython rp2 firmware, UARTs/REPL on TCP)"
DESCRIPTION = (
    "Start the emulated Pico (npm rp2040js in host_tools/sim/emu, the MicroPython UF2 from "
    "SHOE_PICO_UF2 and the boot ROM from SHOE_RP2040_BOOTROM). "
    "Its flash is --state DIR/flash.bin, "
    "written through on every program/erase (stop it any way you like: that is a power cut). "
    "Printed socket:// URLs: the USB REPL (shoectl deploy --board pico / provision --port), "
    "UART0 = the host link (shoectl status --port), UART1 = the optical reader module, and a "
    "control channel (JSON lines: clock, pin, get_pin, card, tags, flash, reset, stats; see "
    "host_tools/sim/emu/rig.js). Runs until Ctrl-C or SIGTERM."
)


def configure(p):
    p.add_argument(
        "--state", required=True, help="state directory (flash.bin = the board's flash)"
    )
    p.add_argument("--uf2", help="MicroPython UF2 (default: env SHOE_PICO_UF2)")
    p.add_argument("--bootrom", help="RP2040 boot ROM B1 (default: env SHOE_RP2040_BOOTROM)")


def run(args):
    from host_tools.sim import emu as _emu

    if not (args.uf2 and args.bootrom):
        why = _emu.missing()
        if why:
            raise ShoeError("emulated Pico unavailable: %s" % why)
    import os

    board = _emu.Emulator(args.state, uf2=args.uf2, bootrom=args.bootrom)
    drive = _emu.BootselDrive(board, os.path.join(args.state, "RPI-RP2"))

    def announce():
        drive.start()
        u = board.urls
        print("emulated Pico up (rp2040js, pid %d), flash %s/flash.bin" % (board.pid, args.state))
        print("USB REPL:     %s" % u["repl"])
        print("UART0 (host): %s" % u["uart0"])
        print("UART1 (optical reader): %s" % u["uart1"])
        print("control:      %s" % u["control"])
        print("BOOTSEL drive: %s (shoectl flash --drive)" % drive.path)
        print(
            "next: shoectl deploy --board pico --port %s; shoectl provision --port %s ..."
            % (u["repl"], u["repl"])
        )

    def check():
        if not board.alive():
            raise ShoeError("the emulator stopped (exit %s)" % board.proc.returncode)

    try:
        run_until_stopped(board, announce, check)
    finally:
        drive.stop()
    print("emulated Pico stopped")
    return 0
