"""A MicroPython REPL behind a pseudo-terminal: the unix port standing in for a board on USB.

    with PtyBoard(flash_dir) as board:      # board.port: "/dev/pts/N" for mpremote / shoectl
        ...
        board.power_cut()                    # kill the interpreter (the port stays open, silent)
        board.power_on()                     # a fresh interpreter on the same flash directory

The interpreter runs with its stdin/stdout on one pty (raw mode) and its cwd on `flash_dir`;
a relay thread copies bytes between that pty and a second one whose slave path is the "port".
mode="silent" (nothing answers), "echo" (a terminal echoing input) and "garbage" (a device
spewing noise) stand in for ports that are not MicroPython boards; "liar" is a real REPL whose
answers turn to noise once the raw REPL is entered (a board that answers garbage).
platform="rp2" (or "esp32") makes the REPL say so in sys.platform, with "/" as its cwd (paths
stay relative to the flash directory): a chip's REPL as `shoectl deploy --board pico` meets it.
"""

import os
import pty
import select
import subprocess
import threading
import tty

from host_tools import runtime

_AS_CHIP = """
import sys as _s, os as _o
class _Sys:
    def __getattr__(self, n):
        return %r if n == 'platform' else getattr(_s, n)
class _Os:
    def getcwd(self):
        return '/'
    def chdir(self, p):
        pass
    def __getattr__(self, n):
        return getattr(_o, n)
_s.modules['sys'] = _Sys()
_s.modules['os'] = _Os()
del _Sys, _Os
"""


class PtyBoard:
    def __init__(self, flash_dir, mode="repl", heap="256k", platform=None):
        self.flash_dir = str(flash_dir)
        self.platform = platform
        self.mode = mode
        self.heap = heap
        self.proc = None
        self._m1 = self._s1 = None
        self._stop = False

    def __enter__(self):
        self._m2, self._s2 = pty.openpty()
        tty.setraw(self._s2)
        self.port = os.ttyname(self._s2)
        os.set_blocking(self._m2, False)  # nobody reading the port must not block the relay
        self.power_on()
        self._thread = threading.Thread(target=self._relay, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop = True
        self.power_cut()
        self._thread.join(5)
        for fd in (self._m2, self._s2):
            os.close(fd)

    def power_on(self):
        self._seen = b""
        if self.mode not in ("repl", "liar"):
            return
        m1, s1 = pty.openpty()
        tty.setraw(s1)
        env = dict(os.environ)
        env.pop("MICROPYPATH", None)
        argv = [runtime.micropython_binary(), "-X", "heapsize=" + self.heap]
        if self.platform:
            argv += ["-i", "-c", _AS_CHIP % self.platform]
        self.proc = subprocess.Popen(
            argv, stdin=s1, stdout=s1, stderr=s1, cwd=self.flash_dir, env=env, close_fds=True
        )
        os.close(s1)
        self._m1 = m1

    def power_cut(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        m1, self._m1 = self._m1, None
        if m1 is not None:
            try:
                os.close(m1)
            except OSError:
                pass

    def _relay(self):
        noise = bytes(range(33, 127)) * 4
        while not self._stop:
            fds = [self._m2] + ([self._m1] if self._m1 is not None else [])
            try:
                r, _, _ = select.select(fds, [], [], 0.05)
            except (OSError, ValueError):
                continue
            if self.mode == "garbage":
                self._out(noise[:64])
            if self._m2 in r:
                try:
                    data = os.read(self._m2, 4096)
                except BlockingIOError:
                    data = b""
                if self.mode == "echo":
                    self._out(data)
                elif self._m1 is not None:
                    try:
                        os.write(self._m1, data)
                    except OSError:
                        pass
            m1 = self._m1
            if m1 is not None and m1 in r:
                try:
                    data = os.read(m1, 4096)
                except OSError:
                    data = b""
                if data and self.mode == "liar":
                    if b"raw REPL; CTRL-B to exit" in self._seen:
                        data = bytes(b ^ 0x5A for b in data)
                    else:
                        self._seen += data
                if data:
                    self._out(data)

    def _out(self, data):
        while data and not self._stop:
            try:
                n = os.write(self._m2, data)
            except BlockingIOError:
                if self.mode not in ("repl", "liar"):
                    return  # noise nobody reads is lost, as on a wire
                select.select([], [self._m2], [], 0.05)
                continue
            except OSError:
                return
            data = data[n:]
