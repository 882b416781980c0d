"""Where the MicroPython unix port is and how firmware runs on it (tests and shoectl share this).

SHOE_MICROPYTHON: the binary (default: .venv/bin/micropython next to the interpreter running us).
SHOE_HEAP: the device's data heap (default 64k), its one meaning: the RAM the firmware's data may
use on a device whose code is frozen in flash. A run that holds the firmware's bytecode in its
heap and then pins all but the data heap (board/sim/heapshape.py: the virtual board, the
ballasted test scripts) is started at -X heapsize = data heap + CODE_ALLOWANCE
(`ballasted_heap`). A run without a ballast (`shoectl eval`, plain test scripts) is started at
-X heapsize = SHOE_HEAP with its code inside: its data heap is smaller than the device's, never
larger.
"""

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
if not (FIRMWARE / "shoe").is_dir():  # installed from the wheel: shoe sits beside host_tools
    FIRMWARE = ROOT
BOARD = ROOT / "board"
# host modules that also run under MicroPython (tests, `shoectl eval`); not firmware: their
# folders go on MICROPYPATH, the modules import as top-level names (`import host`, `evalrun`)
HOST_LINK = ROOT / "host_tools" / "link"
HOST_ENGINE = ROOT / "host_tools" / "engine"
DEFAULT_HEAP = "64k"
# Room for the firmware's bytecode, which a real board keeps frozen in flash (~210 KB with the
# objects loading leaves behind), and for the small holes loading it leaves (~75 KB): heapshape
# fills the holes, so the app's data heap is only what lies contiguous after them.
CODE_ALLOWANCE = 384 * 1024


class RuntimeMissing(RuntimeError):
    pass


def micropython_binary():
    env = os.environ.get("SHOE_MICROPYTHON")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise RuntimeMissing("SHOE_MICROPYTHON=%s is not an executable file" % env)
        return env
    candidates = [
        Path(sys.executable).parent / "micropython",
        ROOT / ".venv" / "bin" / "micropython",
    ]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("micropython")
    if found:
        return found
    raise RuntimeMissing("no MicroPython unix binary: run `make venv` or set SHOE_MICROPYTHON")


def heap():
    """SHOE_HEAP as given (e.g. "64k"): the device's data heap."""
    return os.environ.get("SHOE_HEAP", DEFAULT_HEAP)


def heap_bytes(text=None):
    """A heap size ("64k", "65536", "1m"; default SHOE_HEAP) in bytes."""
    text = str(heap() if text is None else text).strip().lower()
    mult = {"k": 1024, "m": 1024 * 1024}.get(text[-1:], 1)
    try:
        return int(text.rstrip("km")) * mult
    except ValueError:
        from host_tools.errors import ShoeError

        raise ShoeError("SHOE_HEAP must look like 64k, 65536 or 1m, not %r" % text) from None


def ballasted_heap(data_heap):
    """-X heapsize for a run that pins all but `data_heap` bytes after loading its code."""
    return str(int(data_heap) + CODE_ALLOWANCE)


def micropypath(*extra):
    """MICROPYPATH for firmware: extra dirs first (a test's fake `machine`), then the firmware and
    the frozen modules."""
    parts = [str(p) for p in extra]
    parts += [str(FIRMWARE), ".frozen"]
    return ":".join(parts)


def command(script_or_args, heap_size=None):
    """argv for running a script (path) or ['-m', 'mod'] / ['-c', code] under MicroPython."""
    args = [script_or_args] if isinstance(script_or_args, (str, Path)) else list(script_or_args)
    return [micropython_binary(), "-X", "heapsize=%s" % (heap_size or heap())] + [
        str(a) for a in args
    ]


def environment(*extra, base=None):
    env = dict(os.environ if base is None else base)
    env["MICROPYPATH"] = micropypath(*extra)
    return env
