"""The firmware's RAM after import: what the shipped modules cost once loaded as .mpy (the
virtual board's form; a board with the modules frozen keeps their bytecode in flash instead).

    .venv/bin/python bench/bench_import.py [--tree DIR]

--tree DIR: the same total for another checkout (e.g. `git worktree add --detach DIR REV`), by
its own manifest, against this one, measured in the same run (one number each: every shipped
module imported, -O1 as the manifest says; the list and its per-module steps need this tree).

Runs the MicroPython unix port on the shipped set (board/manifest_common.py, compiled by
host_tools/build.py), imports shoe.app and then every other shipped module (shoe.modules.names():
what the virtual board preloads), collects, and prints gc.mem_alloc() before and after, with the
cost of each top-level import in turn.
Also prints the shipped source lines and .mpy bytes. Figures are bytes of the unix port's heap,
an upper bound of what the same imports cost on an RP2040 (the pointers are 8 bytes wide here,
4 there): the emulated Pico's `status` mem_free after boot (bench/bench_pico.py) is the chip's.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host_tools import runtime  # noqa: E402
from host_tools.build import compile_shipped, shipped_files  # noqa: E402

SCRIPT = r"""
import gc, json
gc.collect()
base = gc.mem_alloc()
steps = []
def step(name):
    __import__(name)
    gc.collect()
    steps.append((name, gc.mem_alloc() - base))
step("shoe.app")
step("shoe.modules")
import shoe.modules
names = shoe.modules.names()   # what shoe.modules.preload() imports
gc.collect()
steps.append(("(that list of %d names)" % len(names), gc.mem_alloc() - base))
for name in names:
    step(name)
gc.collect()
print(json.dumps({"base": base, "after": gc.mem_alloc(), "steps": steps}))
"""


def measure():
    out = compile_shipped()
    env = runtime.environment(out)
    proc = subprocess.run(
        runtime.command(["-c", SCRIPT], "1m"),
        env=env,
        capture_output=True,
        text=True,
        cwd=str(out),
    )
    if proc.returncode != 0:
        raise SystemExit("MicroPython failed:\n" + proc.stdout + proc.stderr)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    firmware = shipped_files()
    src = runtime.FIRMWARE
    res["source_lines"] = sum(len((src / p).read_text().splitlines()) for p in firmware)
    res["mpy_bytes"] = sum(f.stat().st_size for f in Path(out, "shoe").rglob("*.mpy"))
    res["modules"] = len(firmware)
    return res


TREE_SCRIPT = r"""
import gc, json
gc.collect()
base = gc.mem_alloc()
for name in NAMES:
    __import__(name)
    gc.collect()
print(json.dumps({"used": gc.mem_alloc() - base}))
"""


def measure_tree(tree):
    """RAM after importing every module of `tree`'s manifest, compiled with this tree's mpy-cross
    and flags into a temporary folder: comparable across checkouts."""
    import tempfile

    from host_tools import build

    tree = Path(tree).resolve()
    ns = {"metadata": lambda **kw: None, "module": lambda *a, **kw: None}
    exec((tree / "board" / "manifest_common.py").read_text(), ns)
    out = Path(tempfile.mkdtemp(prefix="shoe-import-"))
    names = []
    for rel in ns["FIRMWARE"]:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        build.compile_source(tree / "firmware" / rel, rel, out / (rel[:-3] + ".mpy"))
        mod = rel[:-3].replace("/", ".")
        names.append(mod[:-9] if mod.endswith(".__init__") else mod)
    code = "NAMES = %r\n" % names + TREE_SCRIPT
    proc = subprocess.run(
        runtime.command(["-c", code], "2m"),
        capture_output=True,
        text=True,
        env=runtime.environment(out),
        cwd=str(out),
    )
    if proc.returncode != 0:
        raise SystemExit("MicroPython failed on %s:\n%s%s" % (tree, proc.stdout, proc.stderr))
    return len(names), json.loads(proc.stdout.strip().splitlines()[-1])["used"]


def main():
    if "--tree" in sys.argv:
        other = sys.argv[sys.argv.index("--tree") + 1]
        for label, tree in (("this tree", ROOT), (other, other)):
            n, used = measure_tree(tree)
            print("  %-30s %3d modules, RAM after importing them all: %d B" % (label, n, used))
        return
    res = measure()
    print("firmware RAM after import (unix port, .mpy, 1 MB heap, after gc.collect())")
    print(
        "  %d shipped modules, %d source lines, %d bytes of .mpy"
        % (res["modules"], res["source_lines"], res["mpy_bytes"])
    )
    prev = 0
    for name, used in res["steps"]:
        if used != prev:
            print("  + %-28s %7d B  (total %d B)" % (name, used - prev, used))
        prev = used
    print(
        "  RAM after importing everything: %d B (heap in use before: %d B)"
        % (res["after"] - res["base"], res["base"])
    )


if __name__ == "__main__":
    main()
