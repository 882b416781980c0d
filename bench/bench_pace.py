"""The fastest dealer's pace each reader holds on the frozen image (issue 19 item 1), emulated
time.

    .venv/bin/python bench/bench_pace.py [--reader rfid|optical|both] [--pitches 250,200,...]
                                         [--riffle-ms MS] [--rounds N] [--uf2 FILE] [--gaps]

For each reader, a shoe is made from the frozen image as a technician does (`shoectl flash
--no-image`, `shoectl provision`), then for each pitch, fastest last, from the same provisioned
flash: the deck check and N six-seat rounds with every card dealt every PITCH ms of emulated
time (the deck check and stub riffled at --riffle-ms, default the same pitch). A pitch HOLDS
when the results equal the unix virtual board's for the same script (a missed card is a misdeal,
a doubled one a duplicate: either voids a round), every event arrives once, no watchdog reset,
and no reader byte was lost to an overrun (the rig overruns as the chip does; host bytes so lost
are counted: the link sends their frames again). The run stops at the first pitch that does not
hold and prints the fastest that did, per reader. Needs `make pico-firmware`, SHOE_PICO_UF2 and
SHOE_RP2040_BOOTROM (README). A benchmark, not a test: tests/emu/test_pace.py asserts 250/120 ms.
"""

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host_tools import frozen  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402
from host_tools.sim.emu.table import EmuTable  # noqa: E402
from host_tools.sim.virtual_table import VirtualTable  # noqa: E402
from tests.emu.test_e2e import EventLog, results, script  # noqa: E402

GAME = {"rfid": "four-card-frenzy", "optical": "high-card-flush"}


def make_shoe(d, reader, uf2):
    keys = _emu.write_keys_file(d / "shoe.json")
    with _emu.Emulator(d / "state", uf2=uf2) as e:
        extra = ["--reader", "optical"] if reader == "optical" else []
        _emu.assemble(
            e, keys, reset=False, install=["flash", "--no-image", "--timeout", "300", *extra]
        )
    return d / "state"


def pace(reader, pitch, riffle):
    p = {"pitch_ms": pitch, "riffle_ms": riffle}
    if reader == "rfid":
        p.update(dwell_ms=pitch * 4 // 5, beam_at_ms=pitch * 7 // 10)
    else:
        p.update(beam_at_ms=40)
    return p


def show_gaps(stats, seen, cards):
    """Each of the reader's five longest waits between polls while cards passed, with what the
    host received around it, the cards put in the field and the flash erases (chip time)."""
    erases = stats["flash"].get("erase_at", [])

    def around(lo, hi):
        rows = [(t, "card in the field") for t in cards if lo <= t <= hi]
        rows += [(t, "flash erase began") for t in erases if lo <= t <= hi]
        rows += [(t, kind + " (received by the host)") for t, kind in seen if lo <= t <= hi]
        for t, what in sorted(rows):
            print("    %.3f  %s" % (t / 1e9, what))

    for gap, end in stats["rfid_polls"]["gaps"]:
        start = end - gap
        print(
            "  the reader waited %.1f ms, %.3f s -> %.3f s" % (gap / 1e6, start / 1e9, end / 1e9)
        )
        around(start - 300e6, end + 100e6)
    field = stats.get("rfid_field") or {}
    if field.get("worst_at"):
        at = field["worst_at"]
        print(
            "  the slowest first answer: %.1f ms, a tag placed at %.3f s"
            % (field["max_ns"] / 1e6, at / 1e9)
        )
        around(at - 300e6, at + field["max_ns"] + 100e6)


def try_pitch(made, d, reader, pitch, riffle, s, expected, uf2, host_lost, gaps=False):
    state = d / ("pitch-%d" % pitch)
    state.mkdir()
    for f in ("flash.bin", "unique_id"):
        shutil.copy(made / f, state / f)
    why = []
    t0 = time.monotonic()
    seen = []
    with _emu.Emulator(state, uf2=uf2) as e:
        on_event = (lambda kind, body: seen.append((e.clock_ns(), kind))) if gaps else None
        try:
            with EmuTable(
                e, reader, event_timeout=300.0, pace=pace(reader, pitch, riffle), on_event=on_event
            ) as t:
                log = EventLog(t.link)
                t.runner.play(s)
                outcomes = t.runner.outcomes
                cards = list(t.port.times)
        except Exception as ex:  # a stalled round: the pace does not hold
            return False, ["%s: %s" % (type(ex).__name__, str(ex)[:200])], time.monotonic() - t0
        stats = e.control("stats")
    if stats["resets"]:
        why.append("watchdog resets %s" % stats["reset_causes"])
    if stats["rx_overrun"][1]:
        why.append("reader bytes lost to overruns: %d" % stats["rx_overrun"][1])
    host_lost[0] += stats["rx_overrun"][0]
    if gaps and reader == "rfid":
        show_gaps(stats, seen, cards)
    field = stats.get("rfid_field") or {}
    if reader == "rfid" and field.get("cards"):
        if field["unheard"] or field["unread"]:
            why.append(
                "tags that left the field unheard: %d, heard and not read: %d"
                % (field["unheard"], field["unread"])
            )
        host_lost[1] = (
            "; a tag in the field -> its first answer: mean %.1f ms, worst %.1f ms (placed at "
            "%.3f s; dwell %d ms, riffled %d ms)"
            % (
                field["sum_ns"] / max(1, field["heard"]) / 1e6,
                field["max_ns"] / 1e6,
                field.get("worst_at", 0) / 1e9,
                pitch * 4 // 5,
                riffle * 4 // 5,
            )
        )
        gaps = (stats.get("rfid_polls") or {}).get("gaps", [])
        host_lost[1] += "; longest waits between polls while cards pass: " + ", ".join(
            "%.1f ms (at %.1f s)" % (g / 1e6, t / 1e9) for g, t in gaps
        )
    if results(outcomes) != expected:
        why.append("results differ from the unix board's: %s" % [k for _, k, _ in outcomes])
    try:
        log.check_once_and_none_missing()
    except AssertionError as ex:
        why.append(str(ex))
    return not why, why, time.monotonic() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", choices=["rfid", "optical", "both"], default="both")
    ap.add_argument("--pitches", default="250,200,160,120,100,80,60")
    ap.add_argument(
        "--riffle-ms",
        type=int,
        default=None,
        help="the deck check's and stub's pitch (default: the same as the deal)",
    )
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--uf2", default=str(frozen.DEFAULT_UF2))
    ap.add_argument(
        "--gaps",
        action="store_true",
        help="RFID: show what surrounds the reader's longest waits between polls",
    )
    a = ap.parse_args(argv)
    if not Path(a.uf2).is_file():
        raise SystemExit("no frozen image at %s: `make pico-firmware`" % a.uf2)
    pitches = sorted({int(x) for x in a.pitches.split(",")}, reverse=True)
    readers = ["rfid", "optical"] if a.reader == "both" else [a.reader]
    best = {}
    with tempfile.TemporaryDirectory() as tmp:
        for reader in readers:
            d = Path(tmp) / reader
            d.mkdir()
            s = script(GAME[reader], rounds=a.rounds)
            with VirtualTable(str(d / "unix"), event_timeout=30.0) as vt:
                vt.runner.play(s)
                expected = results(vt.runner.outcomes)
            made = make_shoe(d, reader, a.uf2)
            for pitch in pitches:
                riffle = a.riffle_ms or pitch
                lost = [0, ""]  # host bytes overrun; the RFID field's figures
                ok, why, wall = try_pitch(
                    made, d, reader, pitch, riffle, s, expected, a.uf2, lost, a.gaps
                )
                print(
                    "%-7s deal %4d ms, riffle %4d ms: %s  (host bytes overrun and recovered "
                    "by the link: %d; %.0f s wall%s)"
                    % (
                        reader,
                        pitch,
                        riffle,
                        "holds" if ok else "FAILS: " + "; ".join(why),
                        lost[0],
                        wall,
                        lost[1],
                    ),
                    flush=True,
                )
                if not ok:
                    break
                best[reader] = pitch
    for reader in readers:
        print(
            "fastest pace held, %s: %s"
            % (
                reader,
                ("%d ms a card" % best[reader]) if reader in best else "none of those tried",
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
