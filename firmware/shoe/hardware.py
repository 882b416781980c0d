"""What a board hands to the app: the hardware bundle (one class for every board), and the crash
count main.py keeps across boots.

    hw = Hardware(host=uart, reader=reader, state_dir="state", board_name="pico", ...)

`shoe.drivers.hwbuild.build()` makes one from a board's wiring (it alone constructs `machine`
objects); the virtual board and the tests make one from their fakes. Optional parts are None
on boards that lack them. The attributes, and the crash guard: docs/hardware.md section 3. This
module is small on purpose: the bundle lives as long as the app, hwbuild (boot work) need not.
"""

CRASH_FILE = "crashes"
MAX_CRASHES = 3


class Hardware:
    def __init__(self, host=None, reader=None, state_dir="state", board_name=None,
                 firmware_root=None, beam=None, lid=None, led=None, wdt=None, flash=None,
                 beam_window_ms=400, service=False, crashes=0, gc_min=None, image=None):
        self.host = host              # UART-like: any(), readinto(buf[, n]), write(b), poll
                                      # (and txdone(), where writes leave later: machine.UART)
        self.reader = reader          # `async read()` -> ("card", code)|("noread", b"")|("garbled", raw)
        self.state_dir = state_dir    # journal + provisioned config (shoe.json) directory
        self.board_name = board_name
        self.firmware_root = firmware_root   # the deployed version directory (attestation)
        self.beam = beam              # card-exit beam (Beam) or None
        self.beam_window_ms = beam_window_ms  # pairing window of a read and a beam break
        self.lid = lid
        self.led = led
        self.wdt = wdt                # Watchdog policy or None
        self.flash = flash            # raw flash (rp2.Flash) for the journal's rings, or None
        self.service = service        # the service jumper: main.py starts no app, no watchdog
        self.crashes = crashes        # boots in a row that ended in an exception out of the app
        self.gc_min = gc_min          # the board's least collection threshold (shoe.gcpacer)
        self.image = image            # the firmware image's flash (bytes-like) or None (attest)


def crash_count(state_dir):
    try:
        with open(state_dir + "/" + CRASH_FILE) as f:
            return int(f.readline().strip() or 0)
    except (OSError, ValueError):
        return 0


def record_crash(state_dir, exc):
    n = crash_count(state_dir) + 1
    try:
        with open(state_dir + "/" + CRASH_FILE, "w") as f:
            f.write("%d\n%s: %s\n" % (n, type(exc).__name__, exc))
    except OSError:
        pass  # no state dir / flash full: nothing more to do in a crash path
    return n


def clear_crashes(state_dir):
    import os

    try:
        os.remove(state_dir + "/" + CRASH_FILE)
    except OSError:
        pass
