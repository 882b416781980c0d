"""`shoectl deploy`: compile, copy, verify and switch the firmware on a board."""

import sys

from host_tools import deploy as _deploy

# What the .mpy deploy leaves a Pico with the RFID reader (docs/hardware.md, "The `.mpy` deploy
# with the RFID wiring does not last"): said on every such deploy, the frozen image is the cure.
PICO_RFID_NOTE = (
    "note: a Pico with the RFID reader keeps ~66 KB of heap free after boot with the .mpy deploy "
    "and ~32 KB while dealing (20 rounds on the emulated Pico), short of the 100 KB a shoe in "
    "service should keep: that shoe runs the frozen image (make pico-firmware, then shoectl "
    "flash; ~166 KB while dealing): docs/hardware.md"
)


def memory_note(board, reader=None):
    """The warning this deploy deserves (PICO_RFID_NOTE), or None."""
    kind = (_deploy.board_wiring(board, reader).get("reader") or {}).get("kind")
    return PICO_RFID_NOTE if board == "pico" and kind == "rfid" else None


NAME = "deploy"
HELP = "deploy the firmware to a Pico or an ESP32 (mpy-cross + mpremote, verified by SHA-256)"
DESCRIPTION = (
    "Compile the firmware files that ship (the FIRMWARE list of board/manifest_common.py, "
    "host-only modules stay off the board) and the board's wiring with the pinned mpy-cross "
    "(-O1), copy them with mpremote into a new "
    "version directory on the board (shoe_fw/v-<hash>), read back the SHA-256 of every file on "
    "the device and stop on any difference, write main.py (board/main.py, the same for every "
    "board), then switch the version "
    "pointer. An interrupted deploy leaves the previous version (or the new, verified one) "
    "bootable, never a mix. The board is not reset: fit the service jumper first (see "
    "docs/hardware.md), deploy, remove the jumper and reset."
)


def configure(parser):
    parser.add_argument(
        "--board",
        required=True,
        metavar="BOARD",
        help="target board: %s" % " or ".join(_deploy.BOARDS),
    )
    parser.add_argument(
        "--port",
        required=True,
        help="serial port of the board's REPL (/dev/ttyACM0, COM3, any pyserial URL)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        help="seconds to wait for the REPL to answer (default 5)",
    )
    parser.add_argument(
        "--any-platform",
        action="store_true",
        help="skip the sys.platform check (e.g. testing on the unix port behind a pty)",
    )
    parser.add_argument(
        "--reader",
        choices=_deploy.READERS,
        help="the fitted card reader, instead of the wiring file's (a shoe "
        "refitted with the optical module: --reader optical)",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the result line")


def run(args):
    quiet = args.quiet
    summary = _deploy.deploy(
        args.board,
        args.port,
        any_platform=args.any_platform,
        timeout=args.timeout,
        progress=None if quiet else print,
        reader=args.reader,
    )
    if quiet:
        print("deployed %s" % summary["version"])
    note = memory_note(args.board, args.reader)
    if note:
        print(note, file=sys.stderr)
    return 0
