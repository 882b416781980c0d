"""shoectl sim: run the firmware on the virtual board until stopped."""

import sys
import tempfile

from host_tools.errors import ShoeError
from host_tools.foreground import run_until_stopped

NAME = "sim"
HELP = "run the firmware on the virtual board (MicroPython unix port, UARTs on TCP)"
DESCRIPTION = (
    "Start the unmodified firmware on the virtual board: the MicroPython unix port "
    "(SHOE_MICROPYTHON) at a device heap (SHOE_HEAP, default 64k). Its host UART and its "
    "code-reader UART are TCP endpoints on 127.0.0.1; both socket:// URLs are printed. Its flash "
    "is the --state directory (keys are provisioned there on first start: demo keys and a new "
    "shoe id SIM-xxxxxxxx, unless you provision your own). It boots like a Pico: board/main.py "
    "-> hwbuild -> the app, with a watchdog this command enforces (a hung board is reset). "
    "Power returns: if the board process dies from outside (killed: a power failure) or "
    "crashes, it is powered up again on the same flash and ports (after 3 crashes in a row the "
    "board stays in safe mode, as a real one). Runs until Ctrl-C or SIGTERM and leaves no "
    "process behind."
)


def configure(p):
    p.add_argument("--state", help="state directory = the board's flash (default: a new temp dir)")
    p.add_argument(
        "--host-port", type=int, default=0, help="TCP port of the host UART (default: free)"
    )
    p.add_argument(
        "--reader-port",
        type=int,
        default=0,
        help="TCP port of the code-reader UART (default: free)",
    )
    p.add_argument(
        "--service",
        action="store_true",
        help="boot with the service jumper fitted: neither app nor watchdog starts",
    )


def run(args):
    from host_tools.sim.provision_sim import ensure_demo_keys, shoe_id_of

    state = args.state or tempfile.mkdtemp(prefix="shoe-state-")
    for port in (args.host_port, args.reader_port):
        if port and not 0 < port < 65536:
            raise ShoeError("port %d out of range" % port)
    demo = ensure_demo_keys(state)
    from host_tools.sim.simboard import SimBoard

    board = SimBoard(
        state, args.host_port, args.reader_port, power_returns=True, service=args.service
    )

    def restarted(reason):
        print(
            "virtual board %s (pid %d)"
            % (
                "reset by its watchdog" if reason == "watchdog" else "powered up again",
                board.proc.pid,
            )
        )
        sys.stdout.flush()

    board.on_restart = restarted

    def announce():
        print(
            "virtual board up in %.2f s (MicroPython unix port, pid %d)"
            % (board.boot_seconds, board.proc.pid)
        )
        print("host UART:   %s" % board.host_url)
        print("reader UART: socket://127.0.0.1:%d" % board.reader_port)
        print(
            "state dir:   %s%s"
            % (state, "  (demo keys provisioned: not for a casino)" if demo else "")
        )
        print("shoe id:     %s" % shoe_id_of(state))

    run_until_stopped(board, announce)  # the board's supervisor (SimBoard) powers it up again
    print("virtual board stopped")
    return 0
