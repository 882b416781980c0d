"""Deploy the firmware to a MicroPython board over its REPL, verify it, then switch to it.

    deploy(board="pico", port="/dev/ttyACM0")      # compile, stage, verify, switch, clean up
    provision(port, shoe_id, keys)                   # write <state>/shoe.json (keys never shown)

Works with anything that speaks the MicroPython raw REPL on a pyserial URL: a Pico or an ESP32
on USB, or the unix port behind a pseudo-terminal (how the tests run it). The device is never
soft-reset (mpremote "resume"): a running app is interrupted with Ctrl-C, which on a board with a
started watchdog means a reset within seconds, so boards are deployed in service mode (jumper).

Device layout (relative to the boot directory "/"):

    main.py                  board/main.py, shared by every board (replaced via main.py.new + rename)
    shoe_fw/v-<hash>/        this version: shoe/**/*.mpy, wiring.mpy, then DEPLOYED
    shoe_fw/active           the version main.py boots (fallback: shoe_fw/active.new)

Steps: check the device (MicroPython, platform of the board, .mpy version of our mpy-cross),
compile (host_tools/build.py, at the manifest's opt level), copy into a fresh version directory,
read back the SHA-256 of every file on the device and compare (any difference: stop, the old
version stays active), write the DEPLOYED marker, write main.py, then switch the pointer
(active.new, then active) and remove older versions. A file whose SHA-256 equals the active
version's (its DEPLOYED marker) is copied on the device instead of over the cable, and verified
like the others: a redeploy after a small change (a wiring edit, `--reader optical` for a shoe
refitted with the optical module) sends only what changed. An interruption at any point leaves
the old version or the new, verified one bootable, never a mix. Every failure is one ShoeError
line.
"""
import ast
import contextlib
import hashlib
import io
import json
import re
import tempfile
import time
from pathlib import Path

from host_tools import build
from host_tools.build import mpy_version
from host_tools.errors import ShoeError
from host_tools.runtime import BOARD
from shoe.config import KEY_NAMES

FW_DIR = "shoe_fw"
BOARDS = ("pico", "esp32")
READERS = ("rfid", "optical")
_CHUNK = 512


def wiring_source(board, reader=None):
    """board/<board>/wiring.py; reader: the fitted front end instead of the file's own."""
    if board not in BOARDS:
        raise ShoeError("unknown board %r: choose one of %s" % (board, ", ".join(BOARDS)))
    src = (BOARD / board / "wiring.py").read_text()
    if reader is not None:
        if reader not in READERS:
            raise ShoeError("unknown reader %r: choose one of %s" % (reader, ", ".join(READERS)))
        src += '\nreader = {"kind": %r}  # shoectl deploy --reader\n' % reader
    return src


def board_wiring(board, reader=None):
    ns = {}
    exec(wiring_source(board, reader), ns)
    return ns


def compile_firmware(board, progress=None, reader=None):
    """-> {device path (relative to the version dir): bytes}: the files board/manifest_common.py
    lists (FIRMWARE, compiled by host_tools/build.py at the manifest's opt level, the same .mpy
    the virtual board imports, with native code for the board's chip) and the board's wiring,
    nothing else."""
    arch = build.board_arch(board)
    out = build.compile_shipped(arch=arch)
    files = {p[:-3] + ".mpy": (out / (p[:-3] + ".mpy")).read_bytes()
             for p in build.shipped_files()}
    with tempfile.TemporaryDirectory() as tmp:
        wiring = Path(tmp) / "wiring.py"
        wiring.write_text(wiring_source(board, reader))
        build.compile_source(wiring, "wiring.py", Path(tmp) / "wiring.mpy", arch=arch)
        files["wiring.mpy"] = (Path(tmp) / "wiring.mpy").read_bytes()
    if progress:
        progress("compiled %d files with mpy-cross %s" % (len(files), " ".join(build.flags(arch))))
    return files


def version_name(files):
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode() + b"\0" + hashlib.sha256(files[path]).digest())
    return "v-" + h.hexdigest()[:10]


# Helpers defined once in the raw REPL session (its globals persist between commands).
_HELPERS = """
import os, sys
def _shoe_isdir(p):
    try:
        return os.stat(p)[0] & 0x4000 != 0
    except OSError:
        return False
def _shoe_rm(p):
    if _shoe_isdir(p):
        for e in os.ilistdir(p):
            _shoe_rm(p + '/' + e[0])
        os.rmdir(p)
    else:
        try:
            os.remove(p)
        except OSError:
            pass
def _shoe_hashes(d):
    import hashlib, binascii
    b = bytearray(512)
    st = [d]
    while st:
        p = st.pop()
        for e in os.ilistdir(p):
            q = p + '/' + e[0]
            if e[1] & 0x4000:
                st.append(q)
                continue
            h = hashlib.sha256()
            with open(q, 'rb') as f:
                while True:
                    n = f.readinto(b)
                    if not n:
                        break
                    h.update(b if n == 512 else b[:n])
            print(q[len(d) + 1:], binascii.hexlify(h.digest()).decode())
def _shoe_read(p):
    try:
        with open(p) as f:
            return f.read().strip()
    except OSError:
        return None
def _shoe_copy(src, dst):
    b = bytearray(512)
    with open(src, 'rb') as f, open(dst, 'wb') as g:
        while True:
            n = f.readinto(b)
            if not n:
                break
            g.write(b if n == 512 else b[:n])
def _shoe_replace(new, dst):
    try:
        os.rename(new, dst)
    except OSError:
        os.remove(dst)
        os.rename(new, dst)
"""


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

    def read(self, n=1):
        self._check()
        # a silent device: a read blocks no longer than the deadline (not the port's 10 s)
        t = self._base
        if self.deadline is not None and t is not None:
            t = min(t, max(0.05, self.deadline - time.monotonic()))
        cur = self._ser.timeout
        if t != cur and (t == self._base or t < cur - 0.1):
            self._ser.timeout = t
        return self._ser.read(n)

    def inWaiting(self):
        self._check()
        return self._ser.inWaiting()

    def __getattr__(self, name):
        return getattr(self._ser, name)


class Device:
    """A MicroPython REPL on a port, driven through mpremote's serial transport (no reset)."""

    def __init__(self, port, timeout=5.0, op_timeout=60.0):
        self.port = port
        self.timeout = timeout
        self.op_timeout = op_timeout
        self.t = None

    def __enter__(self):
        from mpremote.transport import TransportError
        from mpremote.transport_serial import SerialTransport

        quiet = io.StringIO()
        try:
            with contextlib.redirect_stdout(quiet):
                # a read blocks up to 10 s: mpremote waits this long for a raw-paste window
                # from a slow chip (1 s failed on an emulated Pico on a loaded machine)
                self.t = SerialTransport(self.port, baudrate=115200, timeout=10)
        except (TransportError, OSError, ValueError) as e:
            raise ShoeError("cannot open port %s: %s" % (self.port, e)) from None
        self._guard = self.t.serial = _Deadline(self.t.serial)
        self._guard.deadline = time.monotonic() + self.timeout + 2
        try:
            with contextlib.redirect_stdout(quiet):
                self.t.enter_raw_repl(soft_reset=False, timeout_overall=self.timeout)
        except (TransportError, OSError) as e:
            self.close()
            raise ShoeError("no MicroPython REPL answers on %s (raw REPL handshake failed)"
                            % self.port) from None
        self.run(_HELPERS)
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
            raise ShoeError("the device on %s stopped answering properly during a %s (%s)"
                            % (self.port, what, e)) from None
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
        info = self.value("(sys.implementation.name, sys.platform, "
                          "getattr(sys.implementation, '_mpy', 0), os.getcwd())", "probe")
        if not (isinstance(info, tuple) and len(info) == 4):
            raise ShoeError("the device answered garbage to the probe")
        name, platform, mpy, cwd = info
        if name != "micropython":
            raise ShoeError("%s runs %s, not MicroPython" % (self.port, name))
        if platform != "linux" and cwd != "/":
            self.run("os.chdir('/')")
        return {"name": name, "platform": platform, "mpy": mpy, "cwd": cwd}

    def write_file(self, path, data):
        self.run("f=open(%r,'wb')\nw=f.write" % path, "file open")
        for i in range(0, len(data), _CHUNK):
            self.run("w(%r)" % bytes(data[i:i + _CHUNK]), "file write")
        self.run("f.close()\ndel f, w", "file close")

    def hashes(self, root):
        out = self.run("_shoe_hashes(%r)" % root, "hash read-back")
        got = {}
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 2 or not re.fullmatch(r"[0-9a-f]{64}", parts[1]):
                raise ShoeError("the device answered garbage to the hash read-back: %r"
                                % line[:60])
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


def _check_compat(info, board, wiring, any_platform, tool_mpy):
    if not any_platform and info["platform"] != wiring["platform"]:
        raise ShoeError("the device is a %r board, not %s (%s): wrong --board?"
                        % (info["platform"], board, wiring["platform"]))
    mpy = info["mpy"]
    dev = (mpy & 0xFF, (mpy >> 8) & 3)
    if dev != tool_mpy:
        raise ShoeError("the device loads .mpy v%d.%d but mpy-cross emits v%d.%d: use the "
                        "mpy-cross of the board's MicroPython version" % (dev + tool_mpy))


def _compare(expected, got):
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    bad = sorted(p for p in expected if p in got and got[p] != expected[p])
    if missing or extra or bad:
        first = (bad or missing or extra)[0]
        raise ShoeError("verification failed: %d differ, %d missing, %d unexpected (first: %s); "
                        "the previous version stays active" % (len(bad), len(missing), len(extra),
                                                                 first))


def _active_files(dev, active):
    """{path: sha256} of the active version's verified files (its DEPLOYED marker), or {}."""
    if not active or not re.fullmatch(r"v-[0-9a-f]+", active):
        return {}
    raw = dev.value("_shoe_read(%r)" % (FW_DIR + "/" + active + "/DEPLOYED"))
    try:
        files = json.loads(raw).get("files") if raw else None
    except (ValueError, AttributeError):
        return {}
    return files if isinstance(files, dict) else {}


def deploy(board, port, any_platform=False, progress=print, timeout=5.0, on_file=None,
           op_timeout=60.0, reader=None):
    """Deploy; returns a summary dict. on_file(i, path) is called after each file is copied.
    reader: "rfid" or "optical" instead of the wiring file's fitted reader."""
    progress = progress or (lambda msg: None)
    wiring = board_wiring(board, reader)
    tool_mpy = mpy_version()
    files = compile_firmware(board, progress, reader)
    name = version_name(files)
    main_src = (BOARD / "main.py").read_bytes()
    expected = {p: hashlib.sha256(b).hexdigest() for p, b in files.items()}
    with Device(port, timeout, op_timeout) as dev:
        info = dev.identify()
        _check_compat(info, board, wiring, any_platform, tool_mpy)
        progress("device: MicroPython on %s, .mpy v%d.%d" % (info["platform"], info["mpy"] & 0xFF,
                                                             (info["mpy"] >> 8) & 3))
        active = dev.value("_shoe_read(%r)" % (FW_DIR + "/active"))
        fallback = dev.value("_shoe_read(%r)" % (FW_DIR + "/active.new"))
        vdir = FW_DIR + "/" + name
        unchanged = 0
        if active == name:
            progress("version %s is already active: verifying it" % name)
        else:
            fb = dev.free_bytes()
            if fb is not None:
                free, block = fb
                need = sum(-(-len(b) // block) * block for b in files.values()) + (
                    len(files) // 8 + 8) * block
                if free < need:
                    raise ShoeError("not enough flash: the new version needs about %d kB, %d kB "
                                    "free (the previous version stays active)"
                                    % (need // 1024, free // 1024))
            if fallback == name and active:
                dev.run("_shoe_rm(%r)" % (FW_DIR + "/active.new"))
            dev.run("_shoe_rm(%r)" % vdir, "clean-up")  # leftovers of an interrupted stage
            dirs = {FW_DIR, vdir}
            for p in files:
                parts = p.split("/")[:-1]
                for i in range(1, len(parts) + 1):
                    dirs.add(vdir + "/" + "/".join(parts[:i]))
            dev.mkdirs(dirs)
            same = _active_files(dev, active)
            for i, p in enumerate(sorted(files)):
                if same.get(p) == expected[p]:     # unchanged: copied on the device
                    dev.run("_shoe_copy(%r, %r)" % ("%s/%s/%s" % (FW_DIR, active, p),
                                                   vdir + "/" + p), "file copy")
                    unchanged += 1
                else:
                    dev.write_file(vdir + "/" + p, files[p])
                if on_file:
                    on_file(i, p)
                if (i + 1) % 10 == 0 or i + 1 == len(files):
                    progress("copied %d/%d files (%d unchanged, copied on the device)"
                             % (i + 1, len(files), unchanged))
        got = dev.hashes(vdir)
        got.pop("DEPLOYED", None)
        _compare(expected, got)
        progress("verified SHA-256 of %d files on the device" % len(got))
        marker = json.dumps({"version": name, "board": board, "files": expected},
                            sort_keys=True).encode()
        dev.write_file(vdir + "/DEPLOYED", marker)
        if dev.hashes(vdir).get("DEPLOYED") != hashlib.sha256(marker).hexdigest():
            raise ShoeError("verification of the DEPLOYED marker failed; previous version active")
        # main.py: staged, verified, then swapped in
        dev.write_file("main.py.new", main_src)
        h = dev.value("__import__('binascii').hexlify(__import__('hashlib').sha256("
                      "open('main.py.new','rb').read()).digest()).decode()")
        if h != hashlib.sha256(main_src).hexdigest():
            raise ShoeError("verification of main.py failed; previous version active")
        dev.run("_shoe_replace('main.py.new', 'main.py')", "main.py switch")
        # switch: active.new first (a fallback main.py boots), then active
        if active != name:
            dev.write_file(FW_DIR + "/active.new", name.encode())
            dev.run("_shoe_replace(%r, %r)" % (FW_DIR + "/active.new", FW_DIR + "/active"),
                    "version switch")
        dev.run("_shoe_rm(%r)" % (wiring.get("state_dir", "state") + "/crashes"))  # new code
        now = dev.value("_shoe_read(%r)" % (FW_DIR + "/active"))
        if now != name:
            raise ShoeError("the version pointer reads %r after the switch, expected %s"
                            % (now, name))
        old = [e for e in dev.value("[e[0] for e in os.ilistdir(%r)]" % FW_DIR)
               if e.startswith("v-") and e != name]
        for e in old:
            dev.run("_shoe_rm(%r)" % (FW_DIR + "/" + e), "clean-up")
        progress("active version %s on %s (%d files); removed %d old version(s). Reset the board "
                 "(without the service jumper) to start it." % (name, board, len(files), len(old)))
        return {"version": name, "previous": active, "files": len(files), "removed": old,
                "unchanged": unchanged}


def provision(port, shoe_id, keys, state_dir="state", force=False, progress=print, timeout=5.0):
    """Write <state_dir>/shoe.json on the device (keys: host_tools.keys.for_provisioning);
    secrets are never printed or returned."""
    progress = progress or (lambda msg: None)
    if not isinstance(shoe_id, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,32}", shoe_id):
        raise ShoeError("shoe id must be 1..32 characters of A-Z a-z 0-9 _ . -")
    doc = {"version": 1, "shoe_id": shoe_id, "keys": keys}
    from shoe import config as shoe_config

    try:
        shoe_config.parse(doc)
    except shoe_config.ConfigError as e:
        raise ShoeError("configuration rejected: %s" % e.reason) from None
    data = json.dumps(doc, sort_keys=True).encode()
    path = state_dir + "/" + shoe_config.FILE
    with Device(port, timeout) as dev:
        dev.identify()
        if dev.value("_shoe_read(%r) is not None" % path) and not force:
            raise ShoeError("%s already exists on the device: --force replaces the shoe's keys"
                            % path)
        dev.mkdirs([state_dir])
        dev.write_file(path + ".new", data)
        h = dev.value("__import__('binascii').hexlify(__import__('hashlib').sha256("
                      "open(%r,'rb').read()).digest()).decode()" % (path + ".new"))
        if h != hashlib.sha256(data).hexdigest():
            dev.run("_shoe_rm(%r)" % (path + ".new"))
            raise ShoeError("read-back of the configuration failed; nothing was changed")
        dev.run("_shoe_replace(%r, %r)" % (path + ".new", path), "config switch")
        progress("provisioned shoe %s: keys %s written to %s and verified (values not shown)"
                 % (shoe_id, ", ".join(KEY_NAMES), path))
    return {"shoe_id": shoe_id, "path": path, "sha256": hashlib.sha256(data).hexdigest()}
