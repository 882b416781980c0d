"""Shared by tests/link and tests/journal: the firmware compiled with mpy-cross (as deployed to a
board: source modules this size do not even compile inside a 64 KB heap), run under MicroPython
with that build first on the path; a lossy in-memory channel; the protocol test vectors."""

import json
import random
from pathlib import Path

from host_tools import build
from host_tools.runtime import BOARD, ROOT
from tests.mpy import run_code

_BUILD = {}


def mpy_build(tmp_root):
    """Compile firmware/shoe into tmp_root/shoe/*.mpy once per session (host_tools/build.py, as
    for a board); returns the dir."""
    if "dir" not in _BUILD:
        _BUILD["dir"] = build.compile_firmware(Path(tmp_root))
    return _BUILD["dir"]


def vectors():
    text = (ROOT / "docs" / "protocol.md").read_text()
    block = text.split("```vectors\n", 1)[1].split("```", 1)[0]
    return [json.loads(line) for line in block.splitlines() if line.strip()]


def from_json(x):
    if isinstance(x, dict):
        if "$b" in x:
            return bytes.fromhex(x["$b"])
        if "$map" in x:
            return {from_json(k): from_json(v) for k, v in x["$map"]}
        return {k: from_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [from_json(v) for v in x]
    return x


class LossyChannel:
    """Bytes one way: corrupts `p_byte` of bytes, drops a transmit batch with `p_drop`, sometimes
    duplicates a batch, and delivers nothing while `cut` is true."""

    def __init__(self, seed, p_byte=0.01, p_drop=0.01, p_dup=0.01):
        self.rng = random.Random(seed)
        self.p_byte, self.p_drop, self.p_dup = p_byte, p_drop, p_dup
        self.cut = False

    def __call__(self, data):
        if not data or self.cut:
            return b""
        r = self.rng
        frames = []
        for part in data.split(b"\x00"):
            if not part:
                continue
            if r.random() < self.p_drop:  # a frame lost
                continue
            frames.append(part)
            if r.random() < self.p_dup:  # a frame duplicated
                frames.append(part)
        b = bytearray(b"\x00" + b"\x00".join(frames) + b"\x00") if frames else bytearray()
        if self.p_byte:
            n = len(b)
            i = int(r.expovariate(self.p_byte))
            while i < n:
                b[i] = r.randrange(256)
                i += 1 + int(r.expovariate(self.p_byte))
        return bytes(b)


def run_fw(build, code, **kw):
    return run_code(code, extra_path=(str(build),), **kw)


# As the virtual board does (board/sim/power_on.py): a real board keeps the firmware's bytecode
# frozen in flash, the unix port must hold it on its heap. So MicroPython runs with room for the
# code, the script imports its modules, then DATA_HEAP_PRELUDE pins ballast until exactly
# `data_heap` bytes are free: the script then works in a device-sized data heap.
CODE_ROOM = "192k"
DATA_HEAP_PRELUDE = r"""
def _data_heap(n):
    import sys
    sys.path.append(%r)
    import heapshape     # board/sim/heapshape.py: the virtual board's ballast, the one there is
    sys.path.pop()
    return heapshape.reserve(n)
""" % str(BOARD / "sim")
