"""What one round costs the chip, by function: a shoe made from the frozen image plays one round
(deck check, round, stub) at the dealer's pace (tests/emu/test_e2e.rfid_pace: 250 ms a card,
riffles at 120 ms), with the rig's profile on; prints the chip's instructions and busy time, the
functions that took most of them, the bytes it allocated, and how often the named functions were
called and from where (the rig's `callers`).

    .venv/bin/python bench/bench_pico_calls.py [--reader rfid|optical] [--calls gc_info,gc_collect]
                                               [--uf2 FILE] [--elf FILE]

Names come from the ELF built beside the UF2 (`make pico-firmware`: firmware.elf). The same
round on two images (e.g. --uf2 of an older build, with its --elf) compares firmware changes in
emulated time. Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (README). A benchmark, not a test.
"""

import argparse
import bisect
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_pace import GAME, make_shoe, pace  # noqa: E402
from bench_pico import symbols  # noqa: E402

from host_tools import frozen  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402
from host_tools.sim.emu.table import EmuTable  # noqa: E402
from tests.emu.test_e2e import script  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", choices=("rfid", "optical"), default="rfid")
    ap.add_argument("--calls", default="gc_info,gc_collect", help="functions to count (ELF)")
    ap.add_argument("--uf2", default=str(frozen.DEFAULT_UF2))
    ap.add_argument("--elf", help="default: the UF2's name with .elf")
    a = ap.parse_args(argv)
    uf2 = Path(a.uf2)
    if not uf2.is_file():
        print("bench_pico_calls: no image %s (make pico-firmware)" % uf2)
        return
    syms = symbols(Path(a.elf) if a.elf else uf2.with_suffix(".elf"))
    if not syms:
        print("bench_pico_calls: no ELF beside %s to name functions" % uf2)
        return
    addrs = [x for x, _ in syms]
    by_name = {n: x for x, n in syms}

    def name(pc):
        i = bisect.bisect_right(addrs, pc) - 1
        return "%s+%d" % (syms[i][1], pc - syms[i][0]) if i >= 0 else hex(pc)

    watch = [by_name[n] for n in a.calls.split(",") if n in by_name]
    d = Path(tempfile.mkdtemp(prefix="bench-pico-calls-"))
    (d / "made").mkdir()
    made = make_shoe(d / "made", a.reader, str(uf2))
    with _emu.Emulator(made, uf2=str(uf2)) as e:
        with EmuTable(e, a.reader, event_timeout=900.0, pace=pace(a.reader, 250, 120)) as t:
            e.control("profile", on=True, callers=watch, bytes=[by_name["gc_alloc"]])
            s0 = e.control("stats")
            t.runner.play(script(GAME[a.reader]))
            s1 = e.control("stats")
            p = e.control("profile", on=False, top=5000)
    emulated = (s1["ns"] - s0["ns"]) / 1e9
    print(
        "one %s round through the %s reader at 250/120 ms a card, image %s: %.1f s emulated, "
        "chip busy %.1f s, %.0f M instructions, %d bytes allocated"
        % (
            GAME[a.reader],
            a.reader,
            uf2.name,
            emulated,
            (s1["busy_ns"] - s0["busy_ns"]) / 1e9,
            (s1["instructions"] - s0["instructions"]) / 1e6,
            sum(n for _, _, n in p["bytes"]),
        )
    )
    by = {}
    for pc, n in p["top"]:
        k = name(pc).rsplit("+", 1)[0]
        by[k] = by.get(k, 0) + n
    for k, n in sorted(by.items(), key=lambda kv: -kv[1])[:15]:
        print("  %5.1f %%  %s" % (100.0 * n / p["samples"], k))
    for f, c, n in p["callers"]:
        if f in watch:
            print("  %-20s <- %-32s %6d calls" % (name(f).split("+")[0], name(c), n))


if __name__ == "__main__":
    main()
