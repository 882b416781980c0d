"""Run a floor service in the foreground until Ctrl-C or SIGTERM (the shoectl commands)."""

import signal
import threading
import time


def wait_for_signal(tick=None, every=5.0, until=None):
    """Block until SIGINT/SIGTERM, or until the Event `until` is set (the service failed: the
    caller says why); call tick() every `every` seconds meanwhile."""
    stop = threading.Event()
    old = signal.signal(signal.SIGTERM, lambda *a: stop.set())
    try:
        next_tick = time.monotonic() + every
        while not stop.wait(0.2 if until is not None else every):
            if until is not None and until.is_set():
                return
            if time.monotonic() >= next_tick or until is None:
                next_tick = time.monotonic() + every
                if tick:
                    tick()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, old)


def http_address(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        from host_tools.errors import ShoeError

        raise ShoeError("--http must be HOST:PORT, e.g. 127.0.0.1:8080")
    return host, int(port)
