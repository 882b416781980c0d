"""`shoectl flash`: put the frozen firmware image (a UF2) on a Pico through its BOOTSEL drive."""

from host_tools import frozen as _frozen

NAME = "flash"
HELP = "put the frozen firmware image (make pico-firmware) on a Pico: UF2 onto its BOOTSEL drive"
DESCRIPTION = (
    "Check the UF2 (RP2040 family, every block, nothing inside the filesystem and journal "
    "region: the shoe's keys and journal stay), copy it onto the board's BOOTSEL drive (--drive, "
    "or a mounted RPI-RP2; with --port the board is asked to enter its boot loader), and with "
    "--port then check that the board runs the frozen firmware, install main.py and the wiring, "
    "and retire a deployed .mpy version (main.py prefers one). Fit the service jumper first, "
    "as for deploy; reset without it afterwards. The emulated Pico's drive is the RPI-RP2 "
    "directory `shoectl emu` prints."
)


def configure(p):
    p.add_argument(
        "--uf2",
        help="the image (default build/pico-firmware/firmware.uf2, from `make pico-firmware`)",
    )
    p.add_argument("--board", default="pico", choices=["pico"], help="the board (pico)")
    p.add_argument(
        "--drive",
        help="the mounted BOOTSEL drive (default: the one RPI-RP2 under "
        "/media/$USER, /run/media/$USER, /media, /mnt or /Volumes)",
    )
    p.add_argument(
        "--port",
        help="the board's REPL: ask it into its boot loader first, and "
        "install main.py and the wiring after",
    )
    p.add_argument(
        "--reader",
        choices=["rfid", "optical"],
        help="the fitted reader if not the frozen wiring's (RFID): writes /wiring.mpy",
    )
    p.add_argument(
        "--keep-deployed",
        action="store_true",
        help="leave a deployed .mpy version active (it then runs instead of the image)",
    )
    p.add_argument(
        "--no-image",
        action="store_true",
        help="only the REPL step (a board flashed by hand): main.py, wiring, retire",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds to wait for the drive and for the REPL after (default 60)",
    )


def run(args):
    _frozen.flash(
        args.uf2,
        board=args.board,
        drive=args.drive,
        port=args.port,
        reader=args.reader,
        timeout=args.timeout,
        keep_deployed=args.keep_deployed,
        image=not args.no_image,
    )
    return 0
