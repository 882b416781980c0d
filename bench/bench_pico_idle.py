"""What an idle shoe costs the chip: a shoe deployed from .mpy files (`shoectl deploy`, `shoectl
provision`, as tests/emu/conftest.pico_image makes it) or the frozen image (--frozen) boots on
the emulated Pico for each reader; then, with no host and with a ShoeLink holding a session
(heartbeats both ways), prints the chip's busy share and its instructions per emulated second.
An idle chip's instructions are also the rig's CPU: a README flow's shoe is idle most of the
time it waits for the next `shoectl` process, so this figure sets much of what the emulated
Pico tests cost `make test`.

    .venv/bin/python bench/bench_pico_idle.py [--seconds 8] [--frozen] [--readers optical,rfid]

Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (README). A benchmark, not a test.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_pace import make_shoe  # noqa: E402
from bench_pico import assemble, wait_chip  # noqa: E402

from host_tools import frozen  # noqa: E402
from host_tools.link.shoelink import ShoeLink  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402

SETTLE_S = 15.0  # emulated seconds after power-up before measuring (boot, first collections)


def measure(e, seconds):
    """(busy share, M instructions a second) over `seconds` of the chip's own time."""
    s0 = e.control("stats")
    wait_chip(e, s0["ns"] + seconds * 1e9)
    s1 = e.control("stats")
    dn = s1["ns"] - s0["ns"]
    busy = (s1["busy_ns"] - s0["busy_ns"]) / dn
    return busy, (s1["instructions"] - s0["instructions"]) / dn * 1e3


def idle(state, uf2, keys, seconds):
    """-> {"no host": (busy, M/s), "host": (busy, M/s)} of the shoe on `state`."""
    out = {}
    with _emu.Emulator(state, uf2=uf2) as e:
        wait_chip(e, SETTLE_S * 1e9)
        out["no host"] = measure(e, seconds)
        link = ShoeLink(
            e.urls["uart0"],
            bytes.fromhex(keys["shoe"]),
            supervisor_key=bytes.fromhex(keys["supervisor"]),
        )
        link.start()
        try:
            link.open(timeout=600)
            link.command("status", timeout=600)
            wait_chip(e, e.clock_ns() + 3e9)  # the status's work and the events' acks over first
            out["host"] = measure(e, seconds)
        finally:
            link.close()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=8.0, help="emulated seconds measured")
    ap.add_argument("--frozen", action="store_true", help="the frozen image, not a .mpy deploy")
    ap.add_argument("--readers", default="optical,rfid")
    a = ap.parse_args(argv)
    uf2 = str(frozen.DEFAULT_UF2) if a.frozen else os.environ.get("SHOE_PICO_UF2")
    if not uf2 or not Path(uf2).is_file() or not os.environ.get("SHOE_RP2040_BOOTROM"):
        print(
            "bench_pico_idle: needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM "
            "(--frozen: make pico-firmware)"
        )
        return
    d = Path(tempfile.mkdtemp(prefix="bench-pico-idle-"))
    image = "frozen image" if a.frozen else ".mpy deploy"
    for reader in a.readers.split(","):
        made = d / reader
        made.mkdir()
        if a.frozen:
            state = make_shoe(made, reader, uf2)
            keys_file = made / "shoe.json"
        else:
            keys_file = _emu.write_keys_file(made / "shoe.json")
            state = made / "state"
            assemble(state, reader, keys_file, uf2)
        keys = json.loads(Path(keys_file).read_text())["keys"]
        r = idle(state, uf2, keys, a.seconds)
        for k in ("no host", "host"):
            busy, mips = r[k]
            print(
                "%-7s %s, idle, %-7s: busy %4.1f %%, %5.2f M instructions a second"
                % (reader, image, k, 100 * busy, mips),
                flush=True,
            )


if __name__ == "__main__":
    main()
