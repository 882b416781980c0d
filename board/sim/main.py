"""Entry point of the virtual board: the unmodified firmware on the MicroPython unix port.

    micropython board/sim/main.py --state DIR --host-port N --reader-port M [--firmware DIR]

Its UARTs are TCP endpoints on 127.0.0.1 (host: pyserial socket://; reader: the world
simulator), its flash is the state directory. Prints `SHOE-SIM READY host=N reader=M` once both
endpoints listen, then runs the app until killed (SIGTERM/SIGKILL) like a board loses power.
"""
import sys

import wiring
from sockuart import SocketUART
from shoe.drivers.optical import OpticalReader
import shoe.app


def _args(argv):
    opts = {"--state": "state", "--host-port": "0", "--reader-port": "0", "--firmware": None}
    i = 1
    while i < len(argv):
        key = argv[i]
        if key not in opts or i + 1 >= len(argv):
            print("sim: unknown or incomplete option %s" % key)
            sys.exit(2)
        opts[key] = argv[i + 1]
        i += 2
    return opts


def build(argv):
    o = _args(argv)
    host = SocketUART(int(o["--host-port"]), wiring.host_uart["host"])
    reader_uart = SocketUART(int(o["--reader-port"]), wiring.reader_uart["host"])
    r = wiring.reader
    reader = OpticalReader(reader_uart, dedup_ms=r["dedup_ms"], noread=r["noread"],
                           poll_ms=r["poll_ms"])
    hw = shoe.app.Hardware(host=host, reader=reader, state_dir=o["--state"],
                           board_name=wiring.board, firmware_root=o["--firmware"])
    return hw, host.port, reader_uart.port


def main():
    hw, host_port, reader_port = build(sys.argv)
    print("SHOE-SIM READY host=%d reader=%d" % (host_port, reader_port))
    shoe.app.run(hw)


main()
