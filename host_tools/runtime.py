"""Where the MicroPython unix port is and how firmware runs on it (tests and shoectl share this).

SHOE_MICROPYTHON: the binary (default: .venv/bin/micropython next to the interpreter running us).
SHOE_HEAP: the heap size given as -X heapsize (default 64k: device-sized).
"""
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
if not (FIRMWARE / "shoe").is_dir():    # installed from the wheel: shoe sits beside host_tools
    FIRMWARE = ROOT
BOARD = ROOT / "board"
FAKES = ROOT / "tests" / "fakes"
DEFAULT_HEAP = "64k"


class RuntimeMissing(RuntimeError):
    pass


def micropython_binary():
    env = os.environ.get("SHOE_MICROPYTHON")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise RuntimeMissing("SHOE_MICROPYTHON=%s is not an executable file" % env)
        return env
    candidates = [Path(sys.executable).parent / "micropython", ROOT / ".venv" / "bin" / "micropython"]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("micropython")
    if found:
        return found
    raise RuntimeMissing("no MicroPython unix binary: run `make venv` or set SHOE_MICROPYTHON")


def heap():
    return os.environ.get("SHOE_HEAP", DEFAULT_HEAP)


def micropypath(*extra, fakes=False):
    """MICROPYPATH for firmware: extra dirs first, then fakes, firmware, and the frozen modules."""
    parts = [str(p) for p in extra]
    if fakes:
        parts.append(str(FAKES))
    parts += [str(FIRMWARE), ".frozen"]
    return ":".join(parts)


def command(script_or_args, heap_size=None):
    """argv for running a script (path) or ['-m', 'mod'] / ['-c', code] under MicroPython."""
    args = [script_or_args] if isinstance(script_or_args, (str, Path)) else list(script_or_args)
    return [micropython_binary(), "-X", "heapsize=%s" % (heap_size or heap())] + [str(a) for a in args]


def environment(*extra, fakes=False, base=None):
    env = dict(os.environ if base is None else base)
    env["MICROPYPATH"] = micropypath(*extra, fakes=fakes)
    return env
