"""Start, stop, power-cut and restart the virtual board (a MicroPython unix-port process).

The board runs the unmodified firmware entry point board/sim/main.py under SHOE_MICROPYTHON at
SHOE_HEAP. Its host UART and code-reader UART are TCP endpoints on 127.0.0.1; its flash is the
state directory. Ports default to free ones. The board prints one line
`SHOE-SIM READY host=N reader=M` once it listens; until then we wait (bounded).
"""
import os
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

from host_tools import runtime
from host_tools.errors import ShoeError

SIM_DIR = runtime.BOARD / "sim"
# Room for the firmware's bytecode, which a real board keeps frozen in flash (measured ~150 KB).
CODE_ALLOWANCE = 256 * 1024


def heap_bytes(text):
    text = str(text).strip().lower()
    mult = {"k": 1024, "m": 1024 * 1024}.get(text[-1:], 1)
    try:
        return int(text.rstrip("km")) * mult
    except ValueError:
        raise ShoeError("SHOE_HEAP must look like 64k, 65536 or 1m, not %r" % text)
READY = "SHOE-SIM READY"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class SimBoard:
    def __init__(self, state_dir, host_port=0, reader_port=0, heap=None, extra_args=(),
                 log_path=None, boot_timeout=20.0):
        self.state_dir = Path(state_dir)
        self.host_port = host_port
        self.reader_port = reader_port
        self.data_heap = heap_bytes(heap or runtime.heap())
        self.extra_args = list(extra_args)
        self.log_path = log_path
        self.boot_timeout = boot_timeout
        self.proc = None
        self.boots = 0
        self.log = deque(maxlen=400)
        self._reader = None
        self._ready = threading.Event()
        self.boot_seconds = None

    @property
    def host_url(self):
        return "socket://127.0.0.1:%d" % self.host_port

    @property
    def reader_addr(self):
        return ("127.0.0.1", self.reader_port)

    def _pick_ports(self):
        for name in ("host_port", "reader_port"):
            port = getattr(self, name)
            if port:
                if not port_free(port) and self.boots == 0:
                    raise ShoeError("port %d is busy: choose another with --%s" % (
                        port, name.replace("_", "-")))
            else:
                setattr(self, name, free_port())
        if self.host_port == self.reader_port:
            raise ShoeError("host and reader ports must differ")

    def _drain(self, stream):
        logf = open(self.log_path, "a", buffering=1) if self.log_path else None
        try:
            for line in stream:
                line = line.rstrip("\n")
                self.log.append(line)
                if logf:
                    logf.write(line + "\n")
                if line.startswith(READY):
                    self._ready.set()
        finally:
            if logf:
                logf.close()

    def start(self):
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._pick_ports()
        cmd = runtime.command([SIM_DIR / "main.py", "--state", self.state_dir,
                               "--host-port", self.host_port, "--reader-port", self.reader_port,
                               "--firmware", runtime.FIRMWARE / "shoe",
                               "--data-heap", str(self.data_heap), *self.extra_args],
                              str(self.data_heap + CODE_ALLOWANCE))
        from host_tools.build import compile_firmware

        # The board imports the compiled firmware (.mpy) first, as a real board would.
        env = runtime.environment(SIM_DIR, compile_firmware())
        self._ready.clear()
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, env=env, cwd=runtime.ROOT, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self._reader = threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True)
        self._reader.start()
        deadline = t0 + self.boot_timeout
        while not self._ready.wait(0.02):
            if self.proc.poll() is not None:
                self._reader.join(1)
                tail = "\n".join(list(self.log)[-15:])
                raise ShoeError("the virtual board exited during boot (code %s):\n%s" % (
                    self.proc.returncode, tail))
            if time.monotonic() > deadline:
                self.stop()
                raise ShoeError("the virtual board did not come up within %.0f s" % self.boot_timeout)
        self.boot_seconds = time.monotonic() - t0
        self.boots += 1
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def power_cut(self):
        """SIGKILL: the process dies wherever it is, like pulling the plug."""
        if self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def restart(self):
        self.power_cut()
        return self.start()

    def stop(self, timeout=5.0):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout)
            except ProcessLookupError:
                pass
        if self._reader:
            self._reader.join(2)
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
