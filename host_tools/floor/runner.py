"""Run a floor service in the foreground until Ctrl-C or SIGTERM (the shoectl commands)."""

import signal
import threading


def wait_for_signal(tick=None, every=5.0):
    """Block until SIGINT/SIGTERM; call tick() every `every` seconds meanwhile."""
    stop = threading.Event()
    old = signal.signal(signal.SIGTERM, lambda *a: stop.set())
    try:
        while not stop.wait(every):
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
