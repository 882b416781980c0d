"""How fast the emulated Pico runs: rp2040js as the library ships it against the rig's faster core
(host_tools/sim/emu/fastcore.js), in the same run.

    .venv/bin/python bench/bench_rig.py [--rounds N] [--seconds S]

A fresh emulated Pico (MicroPython's UF2, no firmware of ours) runs a busy loop at its REPL;
for S wall seconds the rig's own counters give the instructions executed and the emulated time
elapsed. Each round measures the library core (SHOE_EMU_CORE=library) then the faster one; the
printed ratio is faster / library, per round and in median. The machine is noisy: compare the
ratio, not the MIPS across runs. Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (see README).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def measure(core, seconds):
    """-> (MIPS, emulated seconds per wall second) of a busy REPL loop on a rig with `core`."""
    import serial

    from host_tools.sim import emu

    before = os.environ.get("SHOE_EMU_CORE")
    os.environ["SHOE_EMU_CORE"] = core
    try:
        with tempfile.TemporaryDirectory() as d, emu.Emulator(Path(d) / "pico") as e:
            r = serial.serial_for_url(e.urls["repl"], timeout=0.2)
            deadline = time.monotonic() + 60
            while b">>> " not in r.read(4096) and time.monotonic() < deadline:
                r.write(b"\r\x03")
            r.write(b"for i in range(100000000): pass\r\r")
            time.sleep(1.0)  # the loop has started
            c0, t0 = e.control("stats"), time.monotonic()
            time.sleep(seconds)
            c1, t1 = e.control("stats"), time.monotonic()
    finally:
        if before is None:
            os.environ.pop("SHOE_EMU_CORE", None)
        else:
            os.environ["SHOE_EMU_CORE"] = before
    wall = t1 - t0
    return (c1["instructions"] - c0["instructions"]) / wall / 1e6, (
        c1["ns"] - c0["ns"]
    ) / 1e9 / wall


def main(argv=None):
    from host_tools.sim import emu

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=6.0)
    a = ap.parse_args(argv if argv is not None else [])
    why = emu.missing()
    if why:
        print("bench_rig: skipped (%s)" % why)
        return 0
    print("emulated Pico, busy REPL loop: MIPS (emulated s per wall s)")
    ratios = []
    for n in range(a.rounds):
        lib = measure("library", a.seconds)
        fast = measure("fast", a.seconds)
        ratios.append(fast[0] / lib[0])
        print(
            "  round %d: library %.2f (%.3f)  fastcore %.2f (%.3f)  ratio %.2f"
            % (n + 1, lib[0], lib[1], fast[0], fast[1], ratios[-1])
        )
    print("  median ratio fastcore / library: %.2f" % statistics.median(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
