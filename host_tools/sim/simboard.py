"""Start, stop, power-cut and restart the virtual board (a MicroPython unix-port process).

The board runs board/sim/power_on.py under SHOE_MICROPYTHON with SHOE_HEAP of data heap (and room
for the code besides: host_tools/runtime.py), which boots through the same board/main.py and
drivers/hwbuild.py as a Pico (board/sim/simmachine.py is its `machine`). Its host UART and
code-reader UART are TCP endpoints on 127.0.0.1; its flash is the state directory. Ports default to
free ones. The board prints one line `SHOE-SIM READY host=N reader=M` once it listens; until then
we wait (bounded).

Two things the host plays for the board's hardware:
- the watchdog: once the firmware starts it (`SHOE-SIM WDT start MS`), a feed must come every
  MS or the board is killed and powered up again (`watchdog_resets`), as the chip would reset;
- power: with `power_returns=True`, a board process that dies from outside (SIGKILL from any
  process: a power failure) or crashes is powered up again on the same flash (`power_returns`
  counts them); the scripted power_cut()/start() of a test and stop() are not counted.
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
READY = "SHOE-SIM READY"
WDT_START = "SHOE-SIM WDT start "
WDT_FEED = "SHOE-SIM WDT feed"


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
    def __init__(
        self,
        state_dir,
        host_port=0,
        reader_port=0,
        heap=None,
        extra_args=(),
        log_path=None,
        boot_timeout=20.0,
        power_returns=False,
        service=False,
    ):
        self.state_dir = Path(state_dir)
        self.host_port = host_port
        self.reader_port = reader_port
        self.data_heap = runtime.heap_bytes(heap)  # the device's data heap (SHOE_HEAP)
        self.extra_args = list(extra_args)
        self.log_path = log_path
        self.boot_timeout = boot_timeout
        self.proc = None
        self.boots = 0
        self.log = deque(maxlen=400)
        self._reader = None
        self._ready = threading.Event()
        self.boot_seconds = None
        self.data_heap_free = None  # what the app had at READY (the device's data heap)
        self.power_returns_on = power_returns
        self.service = service
        self.power_returns = 0  # restarts after the process died from outside
        self.watchdog_resets = 0
        self._wdt = None  # [timeout_s, last feed (monotonic)] once started
        self._lock = threading.RLock()
        self._down = False  # True between a scripted power_cut() and start()
        self._closed = False
        self._watcher = None
        self.on_restart = None  # f(reason) after the host powered the board up again

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
                    raise ShoeError(
                        "port %d is busy: choose another with --%s"
                        % (port, name.replace("_", "-"))
                    )
            else:
                taken = {self.host_port, self.reader_port}
                port = free_port()
                while port in taken:  # the OS may hand the same free port out twice
                    port = free_port()
                setattr(self, name, port)
        if self.host_port == self.reader_port:
            raise ShoeError("host and reader ports must differ")

    def _drain(self, stream):
        logf = open(self.log_path, "a", buffering=1) if self.log_path else None
        try:
            for line in stream:
                line = line.rstrip("\n")
                if line.startswith(WDT_FEED):  # once a second: not worth a log line
                    if self._wdt:
                        self._wdt[1] = time.monotonic()
                    continue
                self.log.append(line)
                if logf:
                    logf.write(line + "\n")
                if line.startswith(WDT_START):
                    self._wdt = [int(line[len(WDT_START) :]) / 1000.0, time.monotonic()]
                if line.startswith(READY):
                    free = line.partition("data_heap_free=")[2].split(" ")[0]
                    self.data_heap_free = int(free) if free.isdigit() else None
                    self._ready.set()
        finally:
            if logf:
                logf.close()

    def start(self):
        with self._lock:
            self._closed = False
            for attempt in range(3 if self.power_returns_on else 1):
                try:
                    self._start()
                    break
                except ShoeError:
                    if attempt == 2 or not self.power_returns_on:
                        raise  # (killed from outside while booting: power returns)
            self._down = False
            if self._watcher is None or not self._watcher.is_alive():
                self._watcher = threading.Thread(target=self._watch, daemon=True)
                self._watcher.start()
        return self

    def _start(self):
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._pick_ports()
        self._wdt = None
        cmd = runtime.command(
            [
                SIM_DIR / "power_on.py",
                "--state",
                self.state_dir,
                "--host-port",
                self.host_port,
                "--reader-port",
                self.reader_port,
                "--firmware",
                runtime.FIRMWARE / "shoe",
                "--data-heap",
                str(self.data_heap),
                "--service",
                "1" if self.service else "0",
                *self.extra_args,
            ],
            runtime.ballasted_heap(self.data_heap),
        )
        from host_tools.build import compile_shipped

        # The board imports the compiled firmware (.mpy), and only what ships to a real board
        # (no fallback to the source tree: a module missing from the list fails here too).
        env = dict(
            os.environ, MICROPYPATH=":".join([str(SIM_DIR), str(compile_shipped()), ".frozen"])
        )
        self._ready.clear()
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            cmd,
            env=env,
            cwd=runtime.ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True)
        self._reader.start()
        deadline = t0 + self.boot_timeout
        while not self._ready.wait(0.02):
            if self.proc.poll() is not None:
                self._reader.join(1)
                tail = "\n".join(list(self.log)[-15:])
                raise ShoeError(
                    "the virtual board exited during boot (code %s):\n%s"
                    % (self.proc.returncode, tail)
                )
            if time.monotonic() > deadline:
                self._stop(5.0)
                raise ShoeError(
                    "the virtual board did not come up within %.0f s" % self.boot_timeout
                )
        self.boot_seconds = time.monotonic() - t0
        self.boots += 1

    def _watch(self):
        """The board's hardware seen from outside: the watchdog timer and the power supply."""
        while True:
            time.sleep(0.05)
            with self._lock:
                if self._closed:
                    return
                if self._down or self.proc is None:
                    continue
                dead = self.proc.poll() is not None
                w = self._wdt
                starved = not dead and w is not None and time.monotonic() - w[1] > w[0]
                if not (dead or starved):
                    continue
                if starved:
                    self.watchdog_resets += 1
                    reason = "watchdog"
                    self.log.append("[host] watchdog not fed for %.1f s: board reset" % w[0])
                    self._kill()
                elif self.power_returns_on:
                    self.power_returns += 1
                    reason = "power"
                    self.log.append(
                        "[host] board process died (exit %s): power returns" % self.proc.returncode
                    )
                else:
                    continue
                for _attempt in range(3):
                    try:
                        self._start()
                        break
                    except ShoeError as e:
                        self.log.append("[host] power-up failed: %s" % e)
                else:
                    continue
            if self.on_restart:
                self.on_restart(reason)

    def _kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def power_cut(self):
        """SIGKILL: the process dies wherever it is, like pulling the plug (until start())."""
        with self._lock:
            self._down = True
            if self.alive():
                self._kill()

    def restart(self):
        self.power_cut()
        return self.start()

    def stop(self, timeout=5.0):
        with self._lock:
            self._closed = True
            self._stop(timeout)

    def _stop(self, timeout):
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
