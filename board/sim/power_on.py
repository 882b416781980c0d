"""Power-on of the virtual board: the unmodified firmware on the MicroPython unix port.

    micropython board/sim/power_on.py --state DIR --host-port N --reader-port M
        [--firmware DIR] [--data-heap BYTES] [--service 1]

Goes through the same assembly as a Pico or an ESP32: board/main.py (version selection, crash
guard, service jumper) -> drivers/hwbuild.py (wiring data: board/sim/wiring.py) -> the app,
with board/sim/simmachine.py as `machine` (UARTs on TCP at 127.0.0.1, a watchdog the host
enforces). Prints `SHOE-SIM READY host=N reader=M` once both endpoints listen, then runs the app
until killed (SIGTERM/SIGKILL) like a board loses power. In safe mode or service mode it stays
up without the app (as a board would, LED aside).

Memory: on a real board the firmware is frozen, so its bytecode sits in flash and the whole heap
is for data. The unix port has to hold the bytecode in its heap, so the host starts it with room
for the code (-X heapsize) and `--data-heap N`: after every firmware module is loaded, a ballast
block pins all but N bytes, leaving the app exactly the data heap of the device (SHOE_HEAP).
"""
import gc
import sys
import time

import heapshape
import simmachine
import wiring

sys.path.insert(1, sys.path[0].rsplit("/", 1)[0] if "/" in sys.path[0] else "..")  # board/
import main as board_main  # noqa: E402  board/main.py, shared by every board

_kept = []


def _args(argv):
    opts = {"--state": "state", "--host-port": "0", "--reader-port": "0", "--firmware": None,
            "--data-heap": "0", "--service": "0"}
    i = 1
    while i < len(argv):
        key = argv[i]
        if key not in opts or i + 1 >= len(argv):
            print("sim: unknown or incomplete option %s" % key)
            sys.exit(2)
        opts[key] = argv[i + 1]
        i += 2
    return opts


def _ballast(data_heap):
    """Leave `data_heap` contiguous bytes free: what a device with frozen firmware has."""
    if data_heap <= 0:
        return None
    import shoe.modules

    shoe.modules.preload()
    gc.collect()
    if gc.mem_free() < data_heap:
        print("sim: only %d bytes free after loading the firmware (data heap %d wanted)" % (
            gc.mem_free(), data_heap))
        return None
    return heapshape.reserve(data_heap)


def run():
    o = _args(sys.argv)
    host_port = int(o["--host-port"])
    reader_port = int(o["--reader-port"])
    simmachine.setup({wiring.host_uart["id"]: host_port, wiring.reader_uart["id"]: reader_port},
                     service_pin=wiring.service["pin"],
                     service_level=wiring.service["active_level"], service=o["--service"] == "1")

    def ready(hw):
        import os
        if os.getenv("SHOE_LINK_RECORD"):   # tests/transcripts: the app's link calls, recorded
            import linkrec
            linkrec.install(os.getenv("SHOE_LINK_RECORD"))
        _kept.append(hw)
        _kept.append(_ballast(int(o["--data-heap"])))   # bytes (host_tools/sim/simboard.py)
        gc.collect()
        print("SHOE-SIM READY host=%d reader=%d data_heap_free=%d%s" % (
            host_port, reader_port, gc.mem_free(),
            " service" if hw.service else (" safe" if not _app_runs(hw) else "")))

    board_main.main(simmachine, ready=ready, firmware_root=o["--firmware"],
                    state_dir=o["--state"])
    while True:          # safe or service mode: the board stays powered, the app does not run
        time.sleep(1)


def _app_runs(hw):
    from shoe import hardware

    return not hw.service and hw.crashes < hardware.MAX_CRASHES


run()
