"""The app's deck check of authenticated tags (NTAG 424 DNA) on the emulated Pico, in emulated
time.

    .venv/bin/python bench/bench_pico_deckcheck.py [--pitch 250] [--dwell 200] [--plain]
                                                   [--clocks chip,wall]

The shoe is assembled as shipped (deploy + provision), booted as the app, configured for Four
Card Frenzy, a deck loaded, and its 53 tags (written with the shoe's card key by
host_tools/tagwriter.py; `--plain`: plain tags) dealt past the MFRC522 model one every --pitch
ms, each in the field --dwell ms, while the host holds the link (host_tools/sim/emu/table.py).
For each host clock in --clocks (chip: the emulated chip's, as the tests run; wall: the wall
clock, as until 2026-12-02) one fresh chip, and per run:

  reads            cards the app read (its `alive` log's count) and exits without a read
  deck_check       ok, and the cards the shoe counted missing
  host link        frames the host retransmitted, HELLOs it sent, duplicates it received
  emulated / wall  the deck check's emulated seconds and wall seconds (their ratio is how fast
                   this machine emulates; a loaded machine made the wall-clock host drown the chip)
  gc_threshold     the app's collection threshold (its boot log line; the Pico's wiring floor)

Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (see README). A benchmark, not a test.
"""

import argparse
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "firmware"))

from host_tools import tagwriter  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402
from host_tools.sim.emu import table as _table  # noqa: E402
from host_tools.sim.session import Deck, _default_paytable  # noqa: E402


def tap_repl(e, lines):
    """Keep the chip's console output (the app's log) in `lines`."""
    host, port = e.urls["repl"][len("socket://") :].split(":")
    s = socket.create_connection((host, int(port)))

    def run():
        buf = b""
        while True:
            try:
                d = s.recv(4096)
            except OSError:
                return
            if not d:
                return
            buf += d
            *done, buf = buf.split(b"\n")
            lines.extend(x.decode("latin-1") for x in done)

    threading.Thread(target=run, daemon=True).start()


def one(image, clock, tags, pitch, dwell):
    work = Path(tempfile.mkdtemp(prefix="bench-deckcheck-"))
    for name in ("flash.bin", "unique_id"):
        shutil.copy(image / name, work / name)
    events, lines = [], []
    try:
        with _emu.Emulator(work) as e:
            tap_repl(e, lines)
            pace = {"pitch_ms": pitch, "dwell_ms": dwell, "beam_at_ms": max(0, dwell - 25)}
            with _table.EmuTable(
                e,
                "rfid",
                event_timeout=900.0,
                pace=pace,
                tags=tags,
                on_event=lambda k, b: events.append((k, b)),
                wall_clock=clock == "wall",
            ) as t:
                hellos = [0]
                send_hello = t.link.ep._send_hello

                def counted(now_ms):
                    hellos[0] += 1
                    return send_hello(now_ms)

                t.link.ep._send_hello = counted
                t.runner.command(
                    "configure",
                    {
                        "game": "four-card-frenzy",
                        "procedure": "manual-shoe",
                        "paytable": _default_paytable("four-card-frenzy"),
                    },
                )
                t.runner.command("load_deck", {"serial": "3A7F", "back": "R"})
                ns0, w0 = e.clock_ns(), time.monotonic()
                t.runner.world.deck_check(Deck(0x3A7F, "R", seed=0.5))
                _, ev = t.runner.wait_for(("deck_check",), timeout=1800)
                ns1, w1 = e.clock_ns(), time.monotonic()
                errs = t.link.ep.errors()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    thr = [int(m.group(1)) for x in lines for m in [re.search(r"gc_threshold (\d+)", x)] if m]
    return {
        "clock": clock,
        "missing": len(ev.get("missing", [])),
        "ok": ev.get("ok"),
        "exits": sum(1 for k, _ in events if k == "exit_without_read"),
        "retransmit": errs.get("retransmit", 0),
        "dup": errs.get("dup", 0),
        "hellos": hellos[0],
        "emulated_s": (ns1 - ns0) / 1e9,
        "wall_s": w1 - w0,
        "gc_threshold": thr[-1] if thr else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pitch", type=int, default=250)
    ap.add_argument("--dwell", type=int, default=200)
    ap.add_argument("--plain", action="store_true", help="plain tags (no SUN check)")
    ap.add_argument("--clocks", default="chip,wall")
    a = ap.parse_args()
    why = _emu.missing()
    if why:
        print("bench_pico_deckcheck: skipped: emulated Pico unavailable: %s" % why)
        return
    tags = None if a.plain else tagwriter.simulated_deck(_emu.EMU_KEYS["card"])
    image = Path(tempfile.mkdtemp(prefix="bench-deckcheck-image-"))
    keys = _emu.write_keys_file(image / "shoe.json")
    with _emu.Emulator(image / "state") as e:
        _emu.assemble(e, keys, reset=False)
    rows = [one(image / "state", c, tags, a.pitch, a.dwell) for c in a.clocks.split(",")]
    print(
        "deck check of 53 %s tags, a card every %d ms, %d ms in the field:"
        % ("plain" if a.plain else "authenticated", a.pitch, a.dwell)
    )
    for r in rows:
        print(
            "  host on the %(clock)s clock: ok %(ok)s, missing %(missing)d, exits without a "
            "read %(exits)d; host retransmitted %(retransmit)d, HELLOs %(hellos)d, dups "
            "received %(dup)d; %(emulated_s).1f s emulated in %(wall_s).1f s wall; "
            "gc_threshold %(gc_threshold)s" % r
        )
    shutil.rmtree(image, ignore_errors=True)


if __name__ == "__main__":
    main()
