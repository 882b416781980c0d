"""The transport to the board: a MicroPython raw REPL on a pyserial port, driven through mpremote's
serial transport (no soft reset), every operation under a deadline. Device defines the board
helpers (board_helpers.py) when it enters and offers file writes, hash read-back, free space and
directory creation; every failure is one ShoeError line.

    with Device(port, timeout=5.0, op_timeout=60.0) as dev:
        dev.identify(); dev.write_file(path, data); dev.hashes(root); dev.run(code)
"""

import ast
import base64
import contextlib
import functools
import io
import re
import time

from host_tools.deploy.board_helpers import HELPERS
from host_tools.errors import ShoeError

# bytes per raw REPL write of a file, sent as base64 (4/3 of the bytes, where repr() of .mpy
# bytecode was ~2.5x). Every write is a command the board compiles and answers, so the round
# trips and the lexing of the literal set a deploy's pace; a file of one chunk is one command.
# 4 KB: the literal (5.5 KB) and its bytes stay small beside a 64 KB board's heap.
CHUNK = 4096


class _Deadline:
    """Wraps the pyserial port: reads fail once the current operation's deadline has passed.

    mpremote's read loops only time out when the line goes quiet; a device that keeps sending
    garbage would hold them forever. Every Device operation sets `deadline` first."""

    def __init__(self, ser):
        self._ser = ser
        self._base = ser.timeout  # the port's per-read timeout (10 s, see Device)
        self.deadline = None

    def _check(self):
        if self.deadline is not None and time.monotonic() > self.deadline:
            from mpremote.transport import TransportError

            raise TransportError("the device kept talking past the deadline")

    def read(self, n=1, within=None):
        """Up to n bytes, waiting at most `within` seconds (default: the port's own timeout),
        and never past the deadline."""
        self._check()
        # a silent device: a read blocks no longer than the deadline (not the port's 10 s)
        t = self._base if within is None else within
        if self.deadline is not None and t is not None:
            t = min(t, max(0.05, self.deadline - time.monotonic()))
        cur = self._ser.timeout
        if t != cur and (within is not None or t == self._base or t < cur - 0.1):
            self._ser.timeout = t
        return self._ser.read(n)

    def inWaiting(self):
        self._check()
        return self._ser.inWaiting()

    def __getattr__(self, name):
        return getattr(self._ser, name)


@functools.cache
def _transport_class():
    """mpremote's SerialTransport with a read_until that waits for each byte on the port.
    mpremote's own asks whether a byte is waiting and sleeps 10 ms when none is: a deploy to an
    emulated Pico spent half its time in those sleeps (1,882 of them, 19 s of 39 s, with the
    chip idle meanwhile), and every command a real board answers pays up to 10 ms per wait.
    Same contract: returns on `ending`, after `timeout` s without a byte, or after
    `timeout_overall` s; one byte per read, so nothing after the ending is consumed."""
    from mpremote.transport_serial import SerialTransport

    class Transport(SerialTransport):
        def read_until(
            self, min_num_bytes, ending, timeout=10, data_consumer=None, timeout_overall=None
        ):
            data = b""
            begin_overall = begin_char = time.monotonic()
            while not data.endswith(ending):
                now = time.monotonic()
                waits = [10.0]
                if timeout is not None:
                    waits.append(begin_char + timeout - now)
                if timeout_overall is not None:
                    waits.append(begin_overall + timeout_overall - now)
                wait = min(waits)
                if wait <= 0:
                    break
                new = self.serial.read(1, within=wait)
                if new:
                    if data_consumer:
                        data_consumer(new)
                        data = new
                    else:
                        data += new
                    begin_char = time.monotonic()
            return data

    return Transport


class Device:
    """A MicroPython REPL on a port, driven through mpremote's serial transport (no reset)."""

    def __init__(self, port, timeout=5.0, op_timeout=60.0):
        self.port = port
        self.timeout = timeout
        self.op_timeout = op_timeout
        self.t = None

    def __enter__(self):
        from mpremote.transport import TransportError

        quiet = io.StringIO()
        try:
            with contextlib.redirect_stdout(quiet):
                # a read blocks up to 10 s: mpremote waits this long for a raw-paste window
                # from a slow chip (1 s failed on an emulated Pico on a loaded machine)
                self.t = _transport_class()(self.port, baudrate=115200, timeout=10)
        except (TransportError, OSError, ValueError) as e:
            raise ShoeError("cannot open port %s: %s" % (self.port, e)) from None
        self._guard = self.t.serial = _Deadline(self.t.serial)
        self._guard.deadline = time.monotonic() + self.timeout + 2
        try:
            with contextlib.redirect_stdout(quiet):
                self.t.enter_raw_repl(soft_reset=False, timeout_overall=self.timeout)
        except (TransportError, OSError):
            self.close()
            raise ShoeError(
                "no MicroPython REPL answers on %s (raw REPL handshake failed)" % self.port
            ) from None
        self.run(HELPERS)
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.t is None:
            return
        try:
            if self.t.in_raw_repl:
                # a failed transfer may have left a file open on the device: close it (briefly)
                self._guard.deadline = time.monotonic() + 2
                with contextlib.redirect_stdout(io.StringIO()):
                    self.t.exec("try:\n f.close()\nexcept Exception:\n pass")
        except Exception:
            pass
        self._guard.deadline = None
        try:
            if self.t.in_raw_repl:
                self.t.exit_raw_repl()
        except Exception:  # the port may be gone: closing must not raise over the real error
            pass
        try:
            self.t.close()
        except Exception:
            pass
        self.t = None

    def run(self, code, what="command"):
        """Execute code on the device -> its stdout (str). Device exceptions -> ShoeError."""
        from mpremote.transport import TransportError, TransportExecError

        self._guard.deadline = time.monotonic() + self.op_timeout
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                # mpremote's exec() gives up after 10 s of silence: removing an old version's
                # 60 files on a slow chip (littlefs commits, an emulated Pico on a loaded
                # machine) says nothing for longer; op_timeout is this operation's limit
                out, err = self.t.exec_raw(code, timeout=self.op_timeout)
            if err:
                raise TransportExecError(out, err.decode(errors="replace"))
        except TransportExecError as e:
            last = (e.error_output.strip().splitlines() or ["error"])[-1]
            raise ShoeError("the device failed a %s: %s" % (what, last)) from None
        except (TransportError, OSError) as e:
            raise ShoeError(
                "the device on %s stopped answering properly during a %s (%s)"
                % (self.port, what, e)
            ) from None
        try:
            return out.decode()
        except UnicodeError:
            raise ShoeError("the device answered garbage to a %s" % what) from None

    def value(self, expr, what="query"):
        out = self.run("print(repr(%s))" % expr, what).strip()
        try:
            return ast.literal_eval(out)
        except (ValueError, SyntaxError):
            raise ShoeError("the device answered garbage to a %s: %r" % (what, out[:60])) from None

    def identify(self):
        """-> dict(name, platform, mpy, sha256, cwd); ShoeError if it is not MicroPython."""
        info = self.value(
            "(sys.implementation.name, sys.platform, "
            "getattr(sys.implementation, '_mpy', 0), os.getcwd())",
            "probe",
        )
        if not (isinstance(info, tuple) and len(info) == 4):
            raise ShoeError("the device answered garbage to the probe")
        name, platform, mpy, cwd = info
        if name != "micropython":
            raise ShoeError("%s runs %s, not MicroPython" % (self.port, name))
        if platform != "linux" and cwd != "/":
            self.run("os.chdir('/')")
        return {"name": name, "platform": platform, "mpy": mpy, "cwd": cwd}

    def write_file(self, path, data):
        chunks = [base64.b64encode(data[i : i + CHUNK]) for i in range(0, len(data), CHUNK)]
        if len(chunks) <= 1:  # (most of the firmware's files): open, write and close at once
            self.run(
                "with open(%r,'wb') as f:\n f.write(__import__('binascii').a2b_base64(%r))\n"
                "del f" % (path, chunks[0] if chunks else b""),
                "file write",
            )
            return
        self.run(
            "from binascii import a2b_base64 as d\nf=open(%r,'wb')\nw=f.write" % path, "file open"
        )
        for c in chunks:
            self.run("w(d(%r))" % c, "file write")
        self.run("f.close()\ndel f, w, d", "file close")

    def hashes(self, root):
        out = self.run("_shoe_hashes(%r)" % root, "hash read-back")
        got = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 2 or not re.fullmatch(r"[0-9a-f]{64}", parts[1]):
                raise ShoeError(
                    "the device answered garbage to the hash read-back: %r" % line[:60]
                )
            got[parts[0]] = parts[1]
        return got

    def free_bytes(self):
        """-> (free bytes, block size) of the filesystem, or None if the port cannot tell."""
        st = self.value("os.statvfs('.') if hasattr(os, 'statvfs') else None", "free-space query")
        if st is None:
            return None
        if not (isinstance(st, tuple) and len(st) >= 5 and all(isinstance(x, int) for x in st)):
            raise ShoeError("the device answered garbage to the free-space query")
        return st[0] * st[4], max(st[1] or st[0], 1)

    def mkdirs(self, paths):
        self.run("for d in %r:\n try:\n  os.mkdir(d)\n except OSError:\n  pass" % (sorted(paths),))
