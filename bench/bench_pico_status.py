"""What a `status` command costs the chip: a shoe deployed from .mpy files (`shoectl deploy`,
`shoectl provision`, as tests/emu/conftest.pico_image makes it; or the frozen image with
--frozen) boots on the emulated Pico, a ShoeLink opens a session and sends N statuses; prints
the chip's busy time per status, the bytes it allocated, its collections (allocator-made and
gc.collect()) and the host's link counters (retransmissions, duplicates: the host's timers run
in wall time, the emulated chip at a fraction of it).

    .venv/bin/python bench/bench_pico_status.py [--n 20] [--frozen] [--uf2 FILE] [--elf FILE]

Names come from the ELF of the image (the frozen build's firmware.elf; for the stock UF2,
build/pico-firmware/stock.elf from `SHOE_PICO_STOCK=1 make pico-firmware`). Needs SHOE_PICO_UF2
and SHOE_RP2040_BOOTROM (README). A benchmark, not a test.
"""

import argparse
import bisect
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_pace import make_shoe  # noqa: E402
from bench_pico import assemble, elf_for, symbols  # noqa: E402

from host_tools import frozen  # noqa: E402
from host_tools.link.shoelink import ShoeLink  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20, help="statuses")
    ap.add_argument("--frozen", action="store_true", help="the frozen image, not a .mpy deploy")
    ap.add_argument("--uf2", help="default: SHOE_PICO_UF2, or the frozen build with --frozen")
    ap.add_argument("--elf")
    a = ap.parse_args(argv)
    uf2 = a.uf2 or (str(frozen.DEFAULT_UF2) if a.frozen else os.environ.get("SHOE_PICO_UF2"))
    if not uf2 or not Path(uf2).is_file():
        print("bench_pico_status: no image (SHOE_PICO_UF2, or make pico-firmware for --frozen)")
        return
    syms = symbols(Path(a.elf) if a.elf else elf_for(uf2))
    names = {n: x for x, n in syms}
    addrs = [x for x, _ in syms]
    d = Path(tempfile.mkdtemp(prefix="bench-pico-status-"))
    (d / "made").mkdir()
    if a.frozen:
        state = make_shoe(d / "made", "rfid", uf2)
        keys_file = d / "made" / "shoe.json"
    else:
        keys_file = _emu.write_keys_file(d / "made" / "shoe.json")
        state = d / "made" / "state"
        assemble(state, "rfid", keys_file, uf2)
    keys = json.loads(Path(keys_file).read_text())["keys"]
    with _emu.Emulator(state, uf2=uf2) as e:
        link = ShoeLink(
            e.urls["uart0"],
            bytes.fromhex(keys["shoe"]),
            supervisor_key=bytes.fromhex(keys["supervisor"]),
        )
        link.start()
        link.open(timeout=600)
        link.command("status", timeout=600)  # the first one: lazy imports
        watch = [names[n] for n in ("gc_collect",) if n in names]
        alloc = [names["gc_alloc"]] if "gc_alloc" in names else None
        e.control("profile", on=True, callers=watch or None, bytes=alloc)
        s0 = e.control("stats")
        for _ in range(a.n):
            link.command("status", timeout=600)
        s1 = e.control("stats")
        p = e.control("profile", on=False, top=10)
        counters = link.stats()
        link.close()
    busy = (s1["busy_ns"] - s0["busy_ns"]) / 1e6
    print(
        "%d statuses on the %s image: %.1f ms of chip busy each (idle polling between them "
        "included), %.1f s emulated in all, %d bytes allocated each"
        % (
            a.n,
            "frozen" if a.frozen else ".mpy deploy",
            busy / a.n,
            (s1["ns"] - s0["ns"]) / 1e9,
            sum(n for _, _, n in p.get("bytes") or []) // max(a.n, 1),
        )
    )
    for f, c, n in p.get("callers") or []:
        if f in watch:  # gc_collect's callers: the allocator (threshold), gc.collect()
            i = bisect.bisect_right(addrs, c) - 1
            print("  collections from %s: %d" % (syms[i][1] if i >= 0 else hex(c), n))
    print("  host link: %s" % counters)


if __name__ == "__main__":
    main()
