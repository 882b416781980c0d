"""Run a board (virtual or emulated) in the foreground until SIGTERM or Ctrl-C, then stop it:
what `shoectl sim` and `shoectl emu` share."""

import signal
import sys
import time


def run_until_stopped(board, announce, check=None):
    """board.start(); announce(); wait (calling check() now and then) until SIGTERM or Ctrl-C;
    board.stop() whatever happened."""
    stop = {"flag": False}

    def _term(signum, frame):
        stop["flag"] = True

    old = signal.signal(signal.SIGTERM, _term)
    try:
        board.start()
        announce()
        sys.stdout.flush()
        while not stop["flag"]:
            if check:
                check()
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        board.stop()
        signal.signal(signal.SIGTERM, old)
