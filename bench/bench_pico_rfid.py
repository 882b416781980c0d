"""RFID driver figures on the emulated Pico (RP2040 at 125 MHz, rp2040js), in emulated time.

    .venv/bin/python bench/bench_pico_rfid.py [--periods 20,5,2] [--cards 20] [--frozen]
                                              [--paces 400/250,200/120] [--deck]

The shoe is assembled as shipped (`shoectl deploy --board pico`, `shoectl provision`) and booted
with the service jumper (GP22 low): main.py builds the hardware and leaves the REPL free, and
the figures are taken on the chip through `hw.reader` (RFIDReader over the real machine.SPI and
the MFRC522 model of host_tools/sim/emu/mfrc522.js, air time at 106 kbit/s in emulated time):

  complete read    a tag already in the field: one `reader.poll()` (ticks_us on the chip) and
                   its SPI transfers (rig `stats`), HLTA included
  empty-field poll `reader.poll()` with nobody in the field: time and SPI transfers
  tag -> card      tags enter the field at known emulated instants (rig `card`, random phase)
                   while the chip awaits `reader.read()` at its poll period: the time to the
                   driver returning the card (the poll wait included)
  idle CPU         the chip's busy share while `reader.read()` waits on an empty field, minus
                   the same with the chip just sleeping (REPL overhead)
  pace             53 tags dealt at pitch/dwell ms through `reader.read()`: cards read, lost
  --deck           the app's deck check (host_tools.sim.emu.table.play) at the default dealing pace
  --auth           authenticated tags (NTAG 424 DNA, written by host_tools/tagwriter.py with the
                   shoe's card key): the complete read (REQA .. ISOReadBinary, one poll), the
                   SUN check (shoe.sun.check) and the card code's HMAC check on the chip, their
                   sum (target <= 30 ms), the DESELECT the next poll sends, and 53 of them
                   dealt at --auth-paces (pitch/dwell ms)

Beside them the unix-port figures of bench/bench_drivers.py and its 160x RP2040 estimate.
Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (see README).
"""

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from host_tools import frozen  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402

CODE = "3A7FRAs1d52a21b"
MASK = (1 << 30) - 1  # ticks_us wraps at 2**30 on MicroPython

SETUP = """
import main, asyncio, time, gc
hw = main.build()
r = hw.reader
def polls(n):
    t = time.ticks_us()
    for i in range(n):
        x = r.poll()
    return time.ticks_diff(time.ticks_us(), t) / n, x
def one():
    t = time.ticks_us()
    x = r.poll()
    return time.ticks_diff(time.ticks_us(), t), x
def reads(n, ms):
    out = []
    async def go():
        for i in range(n):
            k, c = await r.read()
            out.append((time.ticks_us(), k))
    t0 = time.ticks_us()
    try:
        asyncio.run(asyncio.wait_for_ms(go(), ms))
    except asyncio.TimeoutError:
        pass
    return t0, out
async def nap(ms):
    await asyncio.sleep_ms(ms)
def idle(ms, reader):
    d = r._detect
    acc = [0, 0]
    def timed():
        t = time.ticks_us()
        x = d()
        acc[0] += time.ticks_diff(time.ticks_us(), t)
        acc[1] += 1
        return x
    r._detect = timed
    t0 = time.ticks_us()
    try:
        asyncio.run(asyncio.wait_for_ms(r.read() if reader else nap(ms + 100), ms))
    except asyncio.TimeoutError:
        pass
    el = time.ticks_diff(time.ticks_us(), t0)
    del r._detect
    return acc[0], acc[1], el
"""


def ms(us):
    return us / 1000.0


class Chip:
    """The assembled shoe in service mode: REPL + control channel."""

    def __init__(self, emu, dev):
        self.emu = emu
        self.dev = dev
        self.uid = 0x04B00000

    def val(self, expr):
        return self.dev.value(expr)

    def long(self, expr, timeout=900):
        """dev.value for calls that run for many seconds of wall time (mpremote's default
        exec timeout is 10 s)."""
        import ast

        self.dev._guard.deadline = time.monotonic() + timeout + 5
        out, err = self.dev.t.exec_raw("print(repr(%s))" % expr, timeout=timeout)
        if err:
            raise RuntimeError("chip: %s" % err.decode()[-300:])
        return ast.literal_eval(out.decode().strip())

    def xfers(self):
        return self.emu.control("stats")["spi_transfers"]

    def tick_of(self, ns):
        """Rig ns -> this chip's time.ticks_us()."""
        c = self.emu.control("clock")
        return int((ns - (c["ns"] - c["chip_ns"])) // 1000) & MASK

    def new_uid(self):
        self.uid += 1
        return "%08x%06x" % (self.uid, 0x112233)  # 7-byte UIDs, as NTAG21x

    def busy(self, code):
        """-> (the chip's busy share while code ran (rig busy_ns over the chip's own elapsed
        time), the share of that time spent inside polls, polls)"""
        s0 = self.emu.control("stats")
        blocked, polls, el = self.long(code)
        s1 = self.emu.control("stats")
        return (s1["busy_ns"] - s0["busy_ns"]) / (el * 1000.0), blocked / float(el), polls


AUTH_SETUP = """
import shoe.sun as sun
from shoe.cardcode import CardCodes
K = bytes.fromhex(%r)
codes = CardCodes(K)
def auth_one():
    t0 = time.ticks_us()
    k, raw = r.poll()
    t1 = time.ticks_us()
    got = sun.check(K, raw)
    t2 = time.ticks_us()
    codes._known.clear()   # every card's code checked in full, as at its first read
    card = codes.parse(got[1])
    t3 = time.ticks_us()
    return (time.ticks_diff(t1, t0), time.ticks_diff(t2, t1), time.ticks_diff(t3, t2), k,
            got[0], card[2])
"""


def auth_tags(n):
    """n NTAG 424 DNA specs written with the emulated shoe's card key: [(code, spec)]."""
    from host_tools import tagwriter

    return list(tagwriter.simulated_deck(_emu.EMU_KEYS["card"], count=n).items())


def auth_figures(chip, tags):
    """One authenticated tag in the field per read, each a different card: read, SUN check,
    code check (chip time), SPI transfers; then the poll that deselects it."""
    chip.emu.control("tags", tags=[])
    chip.val("polls(3)")
    reads, checks, codes, xfs, desel = [], [], [], [], []
    for i, (_code, spec) in enumerate(tags):
        chip.emu.control("tags", tags=[spec])
        chip.dev.run("r._last_uid = None")
        x0 = chip.xfers()
        rd, ck, cc, kind, ok, card = chip.val("auth_one()")
        x1 = chip.xfers()
        assert kind == "tag" and ok == "card", (kind, ok)
        d, _ = chip.val("one()")  # DESELECT + REQA (the tag stays in the field, deselected)
        chip.emu.control("tags", tags=[])
        chip.val("polls(2)")
        if i:  # the first one loads the modules (lazy imports)
            reads.append(rd)
            checks.append(ck)
            codes.append(cc)
            xfs.append(x1 - x0)
            desel.append(d)
    return {
        "read_us": statistics.median(reads),
        "max_read_us": max(reads),
        "check_us": statistics.median(checks),
        "code_us": statistics.median(codes),
        "total_us": statistics.median([a + b + c for a, b, c in zip(reads, checks, codes)]),
        "max_total_us": max(a + b + c for a, b, c in zip(reads, checks, codes)),
        "xfers": statistics.median(xfs),
        "deselect_us": statistics.median(desel),
        "n": len(reads),
    }


def auth_pace(chip, tags, pitch, dwell, rng):
    chip.val("polls(4)")
    chip.dev.run("r._last_uid = None")
    starts = []
    for i, (_code, spec) in enumerate(tags):
        d = 1500 + i * pitch
        r = chip.emu.control(
            "card", reader="rfid", tag=spec, dwell_ms=dwell, pitch_ms=0, beam=False, delay_ms=d
        )
        starts.append(chip.tick_of(r["ns"]))
    t0, out = chip.long("reads(%d, %d)" % (len(tags), 1500 + pitch * len(tags) + 2000))
    kinds = [k for _, k in out]
    rel = sorted((x - t0) & MASK for x in starts)
    lat = []
    for t, kind in out:
        t = (t - t0) & MASK
        before = [x for x in rel if x <= t]
        if kind == "tag" and before:
            lat.append(t - before[-1])
    return kinds.count("tag"), len(kinds) - kinds.count("tag"), lat


def sync_figures(chip):
    chip.emu.control("tags", tags=[])
    chip.val("r.poll()")  # init
    chip.val("polls(3)")
    x0 = chip.xfers()
    us, _ = chip.val("polls(100)")
    idle_x = (chip.xfers() - x0) / 100.0
    reads, xfs = [], []
    for _i in range(8):
        chip.emu.control("tags", tags=[{"uid": chip.new_uid(), "code": CODE}])
        x0 = chip.xfers()
        d, got = chip.val("one()")
        x1 = chip.xfers()
        assert got == ("card", CODE.encode()), got
        chip.emu.control("tags", tags=[])
        chip.val("one()")  # the field empties (a deferred HLTA, if any, is sent here)
        extra = chip.xfers() - x1 - idle_x
        chip.val("polls(4)")
        reads.append(d)
        xfs.append(x1 - x0 + extra)
    return {
        "idle_us": us,
        "idle_xfers": idle_x,
        "read_us": statistics.median(reads),
        "read_xfers": statistics.median(xfs),
    }


def schedule(chip, n, pitch_ms, dwell_ms, delay_ms, rng, jitter_ms=0):
    starts = []
    for i in range(n):
        d = delay_ms + i * pitch_ms + (rng.uniform(0, jitter_ms) if jitter_ms else 0)
        r = chip.emu.control(
            "card",
            reader="rfid",
            code=CODE,
            uid=chip.new_uid(),
            dwell_ms=dwell_ms,
            pitch_ms=0,
            beam=False,
            delay_ms=d,
        )
        starts.append(chip.tick_of(r["ns"]))
    return starts


def mode(chip, period=None, fast=None):
    """period: poll every period ms, nothing faster; fast: `dealing` set, every fast ms; neither:
    the wiring's settings (period_ms, and fast_period_ms for fast_ms after a tag answered)."""
    if fast is not None:
        chip.dev.run(
            "r.period_ms, r.fast_ms, r.fast_period_ms, r.dealing = %d, %d, %d, True"
            % (
                chip.wired[0],
                chip.wired[1],
                fast,
            )
        )
    elif period is not None:
        chip.dev.run("r.period_ms, r.fast_ms, r.dealing = %d, 0, False" % period)
    else:
        chip.dev.run(
            "r.period_ms, r.fast_ms, r.fast_period_ms, r.dealing = %d, %d, %d, False" % chip.wired
        )


def latency(chip, period, n, rng, fast=None):
    mode(chip, period, fast)
    chip.val("polls(4)")
    starts = schedule(chip, n, 150, 100, 1500, rng, jitter_ms=40)
    t0, out = chip.long("reads(%d, %d)" % (n, 1500 + 150 * n + 2000))
    lat = []
    rel = sorted((x - t0) & MASK for x in starts)  # unwrapped, from the loop's start
    for t, kind in out:
        t = (t - t0) & MASK
        before = [x for x in rel if x <= t]
        if kind == "card" and before and before[-1] < (1 << 29):
            lat.append(t - before[-1])  # the card that entered last before this result
    return lat, sum(1 for _, k in out if k == "card")


def idle_cpu(chip, period, fast=None):
    mode(chip, period, fast)
    base, _, _ = chip.busy("idle(2000, False)")
    busy, blocked, polls = chip.busy("idle(2000, True)")
    return busy - base, base, blocked, polls / 2.0


def pace(chip, pitch, dwell, n, rng):
    chip.val("polls(4)")
    starts = schedule(chip, n, pitch, dwell, 1500, rng)
    t0, out = chip.long("reads(%d, %d)" % (n, 1500 + pitch * n + 2000))
    kinds = [k for _, k in out]
    return kinds.count("card"), len(kinds) - kinds.count("card"), starts


def deck(state, pace_ms):
    from host_tools.sim.emu.table import play

    script = {"game": "four-card-frenzy", "procedure": "manual-shoe", "seed": 5, "rounds": []}
    with _emu.Emulator(state) as e:
        e.control("pin", pin=22, value=1)
        c0 = e.clock_ns()
        e.control("reset")
        while not e.control("uart_log", uart=0, since=c0)["tx"]:  # the app's first frame
            time.sleep(0.2)
        t0 = time.monotonic()
        try:
            play(e, script, reader="rfid", event_timeout=300.0, pace=pace_ms)
            return "passed (%.0f s wall)" % (time.monotonic() - t0)
        except Exception as ex:  # noqa: BLE001 - a benchmark reports what happened
            import traceback

            traceback.print_exc()
            return "FAILED: %s: %s" % (type(ex).__name__, str(ex)[:300])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--periods", default="")
    ap.add_argument("--cards", type=int, default=20)
    ap.add_argument("--paces", default="400/250,200/120,120/60")
    ap.add_argument("--deck", action="store_true")
    ap.add_argument("--fast", default="", help="fast periods to measure with `dealing` set")
    ap.add_argument(
        "--wired",
        action="store_true",
        help="also the wiring's settings as shipped (the fast period after a tag)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--auth", action="store_true", help="authenticated tags (NTAG 424 DNA)")
    ap.add_argument("--auth-reads", type=int, default=12)
    ap.add_argument("--auth-paces", default="250/200,120/80")
    ap.add_argument(
        "--frozen",
        action="store_true",
        help="the image with the firmware frozen in (build/pico-firmware/firmware.uf2, what "
        "ships): main.py copied and provisioned as bench_pico.py --frozen does, no deploy",
    )
    args = ap.parse_args(argv if argv is not None else [])
    why = _emu.missing()
    if why:
        print("bench_pico_rfid: skipped: emulated Pico unavailable: %s" % why)
        return
    rng = random.Random(args.seed)
    try:
        import bench_drivers

        u = bench_drivers.figures()
    except Exception as ex:  # noqa: BLE001
        u = None
        print("unix port figures unavailable: %s" % ex)
    d = Path(tempfile.mkdtemp(prefix="bench-rfid-"))
    keys = _emu.write_keys_file(d / "shoe.json")
    state = d / "state"
    uf2 = None
    if args.frozen:
        from bench_pico import assemble_frozen

        uf2 = str(frozen.DEFAULT_UF2)
        assemble_frozen(state, "rfid", keys, uf2)  # the Pico's own wiring
    with _emu.Emulator(state, uf2=uf2) as e:
        if args.frozen:
            print("emulated Pico, the frozen image (main.py copied), service mode at the REPL")
        else:
            asm = _emu.assemble(e, keys, reset=False)
            print(
                "emulated Pico, shoe as shipped (deploy %.0f s wall), service mode at the REPL"
                % asm["deploy_s"]
            )
        dev = _emu.service_repl(e)  # the service jumper: main.py leaves the REPL free
        with dev:
            chip = Chip(e, dev)
            chip.dev._guard.deadline = time.monotonic() + 300
            out, err = dev.t.exec_raw(SETUP, timeout=300)  # imports: long on a loaded machine
            if err:
                raise RuntimeError("chip: %s" % err.decode()[-300:])
            period = chip.val("r.period_ms")
            chip.wired = (
                period,
                chip.val("getattr(r, 'fast_ms', 0)"),
                chip.val("getattr(r, 'fast_period_ms', 0)"),
            )
            f = sync_figures(chip)
            print(
                "  complete read (tag in the field, one poll): %.2f ms, %.0f SPI transfers"
                % (ms(f["read_us"]), f["read_xfers"])
            )
            if u:
                print(
                    "      unix port %.0f us, %.0f transfers; x160 estimate %.1f ms"
                    % (u["read_us"], u["read_xfers"], u["read_us"] * 160 / 1000)
                )
            print(
                "  empty-field poll: %.3f ms, %.1f SPI transfers"
                % (ms(f["idle_us"]), f["idle_xfers"])
            )
            if u:
                print(
                    "      unix port %.0f us, %.1f transfers; x160 estimate %.2f ms"
                    % (u["idle_us"], u["idle_xfers"], u["idle_us"] * 160 / 1000)
                )
            periods = [int(p) for p in args.periods.split(",") if p] or [period]
            runs = [
                ("period %2d ms%s" % (p, " (wiring)" if p == period else ""), p, None)
                for p in periods
            ]
            runs += [
                ("dealing, fast %d ms" % f, None, f)
                for f in (int(x) for x in args.fast.split(",") if x)
            ]
            if args.wired:
                runs.append(
                    (
                        "wiring as shipped (%d ms, %d ms for %d ms after a tag)"
                        % (chip.wired[0], chip.wired[2], chip.wired[1]),
                        None,
                        None,
                    )
                )
            for name, p, f in runs:
                lat, got = latency(chip, p, args.cards, rng, f)
                cpu, base, blocked, rate = idle_cpu(chip, p, f)
                print(
                    "  %s: tag enters -> card returned median %.2f ms, max %.2f "
                    "ms (%d of %d cards read); empty field: %.0f polls/s, %.1f %% of the time in "
                    "polls, chip busy %.1f %% more than asleep (%.1f %%)"
                    % (
                        name,
                        ms(med(lat)),
                        ms(max(lat or [float("nan")])),
                        len(lat),
                        args.cards,
                        rate,
                        blocked * 100,
                        cpu * 100,
                        base * 100,
                    )
                )
                sys.stdout.flush()
            mode(chip)
            if args.auth:
                chip.dev._guard.deadline = time.monotonic() + 300
                out, err = dev.t.exec_raw(AUTH_SETUP % _emu.EMU_KEYS["card"].hex(), timeout=300)
                if err:
                    raise RuntimeError("chip: %s" % err.decode()[-300:])
                tags = auth_tags(max(args.auth_reads + 1, 53))
                a = auth_figures(chip, tags[: args.auth_reads + 1])
                print(
                    "  authenticated tag (NTAG 424 DNA), %d reads: complete read %.2f ms (max "
                    "%.2f), %.0f SPI transfers; SUN check %.2f ms; card code HMAC %.2f ms; read "
                    "+ check %.2f ms (max %.2f; target 30 ms); the next poll's DESELECT + REQA "
                    "%.2f ms"
                    % (
                        a["n"],
                        ms(a["read_us"]),
                        ms(a["max_read_us"]),
                        a["xfers"],
                        ms(a["check_us"]),
                        ms(a["code_us"]),
                        ms(a["total_us"]),
                        ms(a["max_total_us"]),
                        ms(a["deselect_us"]),
                    )
                )
                sys.stdout.flush()
                mode(chip)
                for spec in args.auth_paces.split(","):
                    if not spec:
                        continue
                    pitch, dwell = (int(x) for x in spec.split("/"))
                    got, other, lat = auth_pace(chip, tags[:53], pitch, dwell, rng)
                    print(
                        "  authenticated tags at a card every %d ms, %d ms in the field: %d of "
                        "53 read, %d other, %d lost; tag enters -> read returned median %.2f "
                        "ms, max %.2f ms"
                        % (
                            pitch,
                            dwell,
                            got,
                            other,
                            53 - got - other,
                            ms(med(lat)),
                            ms(max(lat or [float("nan")])),
                        )
                    )
                    sys.stdout.flush()
            for spec in args.paces.split(","):
                if not spec:
                    continue
                pitch, dwell = (int(x) for x in spec.split("/"))
                cards, other, _ = pace(chip, pitch, dwell, 53, rng)
                print(
                    "  pace: a card every %d ms, %d ms in the field: %d of 53 read, %d noread, "
                    "%d lost" % (pitch, dwell, cards, other, 53 - cards - other)
                )
        e.control("pin", pin=22, value=1)
    if args.deck:
        from host_tools.sim.emu.table import EmuReaderPort

        print(
            "  app deck check at the default pace %s: %s"
            % (EmuReaderPort.PACE["rfid"], deck(state, None))
        )


def med(xs):
    return statistics.median(xs) if xs else float("nan")


if __name__ == "__main__":
    main(sys.argv[1:])
