"""Chip figures on the emulated Raspberry Pi Pico (RP2040 at 125 MHz, rp2040js), in emulated time.

    .venv/bin/python bench/bench_pico.py [--reader optical|rfid|both] [--rounds N] [--profile]
                                         [--heap-every N] [--pitch-ms MS] [--frozen] [--uf2 FILE]
                                         [--uid-bytes 4|7]

Each run assembles a shoe as a technician does (`shoectl deploy --board pico`, `shoectl
provision`), boots it, and plays the deck check and N six-seat Four Card Frenzy rounds with
every side wager through the chosen reader, the host on UART0 (ShoeLink). `--frozen` runs an
image with the firmware frozen in (`make pico-firmware`, default build/pico-firmware/
firmware.uf2) the way docs/hardware.md says: board/main.py copied to the board and provisioned,
no deploy (for a reader other than the frozen wiring's, a wiring.mpy naming it is copied too:
sys.path puts the filesystem before the frozen modules). `--pitch-ms` is the dealer's pace (one
card every MS of emulated time; default the rig's brisk dealer, 250 ms optical, 1000 ms here
for rfid): the deck checks and stubs queue at that pitch, each round card still waits for the
shoe's event. Timestamps come from the rig (host_tools/sim/emu/rig.js), in emulated nanoseconds:

  card -> frame   optical: the code line's last byte in UART1's receiver -> the next frame of
                  a card event's size (CARD_FRAME_MIN) starting on UART0's wire; rfid: the
                  tag entering the MFRC522's field -> that frame (flash writes included: the
                  card event is journalled before it is sent). The rig paces UART transmit
                  at the baud rate: a frame queued behind another starts when that one has
                  left (115200 baud: 87 us a byte)
  validate+settle the `decisions` command's last byte on UART0 -> the round_result frame
                  (the stub is read first, so: from the stub's last card for manual shoes)
  boot to READY   power-up (reset) -> the first frame on UART0 (the app's hello); the first
                  boot after assembling, then the next one
  heap free       `mem_free` of the status reply (the app collects first), after boot and
                  after every --heap-every rounds (printed as it goes); growth is flagged when
                  the heap left after the last round is below the first round's by more than
                  HEAP_SLACK, or its least-squares trend loses more than that over the run
  flash / round   bytes programmed (whole 256-byte pages: the traffic), the bytes of those
                  that were not 0xFF (what was stored), and 4 KB-sector erase equivalents while
                  a round is played
  per round       wall and emulated seconds from one round's result to the next (a deck
                  check before it included), and the chip's busy part, printed as it goes
  first round     (N > 1) the first round after boot against the others: its round cards'
                  card -> frame median and sum beside the others' (each later round's sum:
                  median and range), its decisions -> round_result and its settling (the
                  stub's last card -> round_result, no riffle in it) beside theirs: what is
                  left of the first round's imports (App._warm prefetches them). The
                  settlement's frames leave in one write, back to back: the first one's start
                  is when the chip had settled, the round_result's also counts the wire time of
                  those before it (a bigger reveal in one round shows there)
  UART overruns   bytes lost because the receive FIFO (32) was full when they came, on UART0
                  (host) and UART1 (reader), as on the chip: a flash erase runs with interrupts
                  off for 45 ms (the rig's truth since issue 19 item 2; rig.js --uart-rx hold
                  is the older model that let them wait)

Beside each: the same figure on the unix port (virtual board, wall clock, this machine) and the
project's earlier estimate (unix x 160). `--profile` also samples the chip's program counter
during its second boot, while it is idle after boot and while it plays, and names the hot
functions when the ELF of the same UF2 is found (SHOE_PICO_ELF, or build/pico-firmware/stock.elf
from `SHOE_PICO_STOCK=1 make pico-firmware`; `--uf2 build/pico-firmware/stock.uf2` runs that
image). SHOE_BENCH_ALL=1 also lists every round card's card -> frame and flash work in order;
SHOE_BENCH_CONSOLE=N prints the last N characters of the chip's console after the run (what a
firmware print() put there while looking for where a card's time goes); SHOE_BENCH_HEAPMAP=1
stops the app after the rounds and prints its heap's map and largest free block.
Needs SHOE_PICO_UF2 and SHOE_RP2040_BOOTROM (see README).
"""

import argparse
import bisect
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host_tools import build  # noqa: E402
from host_tools import deploy as _deploy  # noqa: E402
from host_tools import keys as _keys  # noqa: E402
from host_tools.sim import emu as _emu  # noqa: E402
from host_tools.sim.emu.table import EmuTable  # noqa: E402

SEATS = {
    str(s): {
        "wagers": {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5},
        "raise": 10,
    }
    for s in range(1, 7)
}


def script(rounds):
    return {
        "game": "four-card-frenzy",
        "procedure": "manual-shoe",
        "seed": 5,
        "rounds": [{"seats": SEATS} for _ in range(rounds)],
    }


def ms(ns):
    return ns / 1e6


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def p90(xs):
    """The 90th percentile of xs, nan for none."""
    xs = sorted(xs)
    return xs[int(0.9 * (len(xs) - 1))] if xs else float("nan")


FROZEN_UF2 = ROOT / "build" / "pico-firmware" / "firmware.uf2"  # make pico-firmware
# the pace of EmuReaderPort.PACE scaled to pitch_ms (this bench's rfid default: 1000 ms)
RFID_PACE = {"pitch_ms": 1000, "dwell_ms": 800, "beam_at_ms": 700}


def pace_for(reader, pitch_ms):
    if reader == "rfid":
        p = pitch_ms or RFID_PACE["pitch_ms"]
        return {k: v * p / RFID_PACE["pitch_ms"] for k, v in RFID_PACE.items()}
    return None if pitch_ms is None else {"pitch_ms": pitch_ms}


def wiring_mpy(reader):
    """board/pico/wiring.py with `reader` fitted, compiled as deploy does (host_tools/build.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "wiring.py", Path(tmp) / "wiring.mpy"
        src.write_text(_deploy.wiring_source("pico", reader))
        build.compile_source(src, "wiring.py", out, arch=build.board_arch("pico"))
        return out.read_bytes()


def assemble_frozen(state, reader, keys, uf2):
    """The frozen image as docs/hardware.md section 8 says: copy board/main.py, provision; no
    deploy. A reader other than the frozen wiring's: wiring.mpy for it in / (before .frozen)."""
    with _emu.Emulator(state, uf2=uf2, bootrom=os.environ["SHOE_RP2040_BOOTROM"]) as e:
        t0, e0 = time.monotonic(), e.clock_ns()
        copied = ["main.py"]
        with _deploy.Device(e.urls["repl"]) as dev:
            dev.identify()
            dev.write_file("main.py", (_deploy.BOARD / "main.py").read_bytes())
            if _deploy.board_wiring("pico")["reader"]["kind"] != reader:
                dev.write_file("wiring.mpy", wiring_mpy(reader))
                copied.append("wiring.mpy (%s reader)" % reader)
        out = {
            "copy_s": time.monotonic() - t0,
            "copy_emulated_s": (e.clock_ns() - e0) / 1e9,
            "copied": copied,
        }
        _deploy.provision(
            e.urls["repl"],
            _emu.EMU_SHOE_ID,
            _keys.for_provisioning(keys),
            force=True,
            progress=None,
        )
        return out


def assemble(state, reader, keys, uf2=None):
    """`shoectl deploy --board pico --reader READER` and `shoectl provision`, as the tests'
    pico_image makes a shoe (host_tools.sim.emu.assemble)."""
    with _emu.Emulator(state, uf2=uf2, bootrom=os.environ["SHOE_RP2040_BOOTROM"]) as e:
        deploy = ["deploy", "--board", "pico", "--reader", reader, "--timeout", "300", "--quiet"]
        return _emu.assemble(e, keys, reset=False, install=deploy)


# a card event's frame on the wire is ~121 bytes (a ~100-byte sealed payload, header, MAC, CRC,
# COBS, delimiter); the link's ACK and PING frames are ~21, a command's reply ~70: the first
# frame this big after a card is that card's (the frames before it are not the card's answer)
CARD_FRAME_MIN = 100
HEAP_SLACK = 2048  # bytes: what one GC cycle's leftovers may differ by, not a leak


class HeapWatch:
    """mem_free over UART0 (`status`) after boot and after every `every` rounds (with the trend
    so far); each round's wall and emulated seconds, from the previous round's end (the deck
    check before it included) to its result."""

    def __init__(self, runner, every, emu=None):
        self.runner, self.every, self.emu = runner, max(1, every), emu
        self.samples = []  # (rounds played, mem_free)
        self.rounds = 0
        self.times = []  # (wall s, emulated s, chip busy s) per round
        self.resets_at = []  # rounds during which the chip reset (the heap starts again)
        self.mark()
        play_round = runner.play_round

        def counted(*a, **kw):
            boots = self.emu.boots if self.emu else 0
            out = play_round(*a, **kw)
            self.rounds += 1
            if self.emu and self.emu.boots != boots:
                self.resets_at.append(self.rounds)
                print(
                    "  round %d: THE CHIP RESET during it (%s): heap figures across it are "
                    "not a trend" % (self.rounds, self.emu.control("stats")["reset_causes"])
                )
            wall, emu_ns, busy_ns = (time.monotonic(),) + self._clocks()
            self.times.append(
                (wall - self._wall, (emu_ns - self._emu) / 1e9, (busy_ns - self._busy) / 1e9)
            )
            print(
                "  round %d: %s; %.1f s wall, %.1f s emulated, of which the chip was busy "
                "%.1f s" % (self.rounds, out[0] if out else "?", *self.times[-1])
            )
            self._wall, self._emu, self._busy = wall, emu_ns, busy_ns
            if self.rounds % self.every == 0:
                self.sample()
            sys.stdout.flush()
            return out

        runner.play_round = counted

    def _clocks(self):
        if self.emu is None:
            return 0, 0
        st = self.emu.control("stats")
        return st["ns"], st["busy_ns"]

    def mark(self):
        """Start the clock of the next round here (after boot, before the deck check)."""
        self._wall = time.monotonic()
        self._emu, self._busy = self._clocks()

    def sample(self):
        free = self.runner.status().get("mem_free")
        self.samples.append((self.rounds, free))
        print(
            "  heap free after %s: %s B"
            % ("boot" if not self.rounds else "%d round(s)" % self.rounds, free)
        )
        if sum(1 for n, f in self.samples if n > 0 and f is not None) >= 2:
            print("    so far: %s" % self.verdict())
        sys.stdout.flush()

    def verdict(self):
        since = max(self.resets_at, default=0)
        after = [(n, f) for n, f in self.samples if n > 0 and n >= since and f is not None]
        note = (
            (
                "%d CHIP RESET(S) during round(s) %s; judged on the samples since the last: "
                % (len(self.resets_at), ", ".join(map(str, self.resets_at)))
            )
            if self.resets_at
            else ""
        )
        if len(after) < 2:
            return note + "too few samples after rounds to judge growth"
        xs, ys = [n for n, _ in after], [f for _, f in after]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        den = sum((x - mx) ** 2 for x in xs) or 1
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den
        trend = slope * (xs[-1] - xs[0])
        drop = ys[0] - ys[-1]
        flag = drop > HEAP_SLACK or trend < -HEAP_SLACK
        return note + (
            "%s: first %d B after %d round(s), last %d B after %d, min %d B; trend "
            "%+.1f B per round (%+.0f B over the run)"
            % (
                "GROWTH FLAGGED (heap shrinking)" if flag else "flat",
                ys[0],
                xs[0],
                ys[-1],
                xs[-1],
                min(ys),
                slope,
                trend,
            )
        )


def print_heap_map(e):
    """SHOE_BENCH_HEAPMAP=1: after the rounds, stop the app (Ctrl-C on the USB REPL: the
    watchdog resets the chip some seconds later) and print the heap after a collection:
    micropython.mem_info(1), its largest free block and a map of its blocks."""
    with _deploy.Device(e.urls["repl"], timeout=60, op_timeout=120) as dev:
        out, err = dev.t.exec_raw("import gc, micropython\ngc.collect()\nmicropython.mem_info(1)")
    print("  the heap after the rounds (the app stopped, collected):")
    print("\n".join("    " + x for x in (out + err).decode(errors="replace").splitlines()))


def play_measured(emu, reader, rounds, heap_every=None, pitch_ms=None, uid_bytes=4):
    """Deck check + rounds; per-card latencies, settle times, flash and heap per round."""
    lat, settle, flash, heap, card_flash = [], [], [], [], []
    lat_end = []  # card -> its frame's last byte on the wire (what the host has then)
    after_last = []  # the stub's last card presented -> the round_result frame (the settling)
    settled = []  # ... -> the settlement's first frame (the chip's part)
    state = {"flash0": None, "decide_since": None, "card_flash": None, "checks": 0, "no_frame": 0}

    with EmuTable(
        emu, reader, event_timeout=900.0, pace=pace_for(reader, pitch_ms), uid_bytes=uid_bytes
    ) as t:
        port = t.port

        def on_event(kind, body):
            if kind == "deck_check":
                state["checks"] += 1
            if kind in ("watchdog_starved", "irregularity", "internal_error", "round_void"):
                print("  [%.1f s emulated] %s %s" % (emu.clock_ns() / 1e9, kind, str(body)[:160]))
                sys.stdout.flush()
            if kind == "card" and port.times:
                start = port.times[-1]
                if reader == "optical":
                    rx = emu.control("uart_log", uart=1, since=start)["rx"]
                    start = rx[0] if rx else start
                log = emu.control("uart_log", uart=0, since=start)
                card = [f for f in log.get("frames", ()) if f[1] >= CARD_FRAME_MIN and f[2]]
                if card:
                    lat.append(card[0][0] - start)
                    lat_end.append(card[0][2] - start)
                else:  # kept in its place (None), so each card keeps its index
                    lat.append(None)
                    lat_end.append(None)
                    state["no_frame"] += 1
                if os.environ.get("SHOE_BENCH_ALL") and (not card or card[0][2] - start > 30e6):
                    print(
                        "      card %d: frames after its line (start-end ms/bytes): %s"
                        % (
                            len(lat),
                            " ".join(
                                "%.1f-%.1f/%d" % ((t0 - start) / 1e6, (t1 - start) / 1e6, n)
                                for t0, n, t1 in log.get("frames", ())[:12]
                            ),
                        )
                    )
                f, f0 = emu.control("flash"), state["card_flash"]
                if f0 is not None:  # flash work since the previous card's frame (its journal)
                    card_flash.append(
                        (
                            (f["erased_bytes"] - f0["erased_bytes"]) / 4096.0,
                            f["pages"] - f0["pages"],
                        )
                    )
                state["card_flash"] = f
            elif kind == "round_result":
                f = emu.control("flash")
                if state["flash0"] is not None:
                    f0 = state["flash0"]
                    flash.append(
                        (
                            f["programmed"] - f0["programmed"],
                            (f["erased_bytes"] - f0["erased_bytes"]) / 4096,
                            f.get("changed", 0) - f0.get("changed", 0),
                        )
                    )
                state["flash0"] = f
                since = state["decide_since"]
                if since is not None:
                    log = emu.control("uart_log", uart=0, since=since)
                    if log["tx"]:
                        settle.append(log["tx"][-1] - since)
                        if port.times and port.times[-1] > since:
                            after_last.append(log["tx"][-1] - port.times[-1])
                            # the settlement's frames go out in one write, back to back on the
                            # wire: the first one's start is when the chip had settled
                            after = [x - port.times[-1] for x in log["tx"] if x >= port.times[-1]]
                            if after:
                                settled.append(after[0])
                            if os.environ.get("SHOE_BENCH_ALL"):
                                print(
                                    "      the settling's frames on UART0, ms after the stub's "
                                    "last card: %s" % " ".join("%.1f" % (x / 1e6) for x in after)
                                )

        t.runner.on_event = on_event
        orig_command = t.runner.command

        def command(kind, body, supervisor=None):  # None: the key shoe.roles names
            if kind == "open_round":
                state["flash0"] = emu.control("flash")
            if kind == "decisions":
                state["decide_since"] = emu.clock_ns()
            return orig_command(kind, body, supervisor)

        t.runner.command = command
        watch = HeapWatch(t.runner, heap_every or rounds, emu)
        watch.sample()  # after boot
        watch.mark()
        t.runner.play(script(rounds))
        st = t.link.command("status", {}, timeout=60)
        heap.append(st.get("mem_free"))
    return {
        "lat": lat,
        "lat_end": lat_end,
        "settle": settle,
        "after_last": after_last,
        "settled": settled,
        "flash": flash,
        "heap": heap,
        "card_flash": card_flash,
        "heap_watch": watch,
        "deck_checks": state["checks"],
        "no_frame": state["no_frame"],
        "pace": dict(port.pace),
    }


def boot_to_ready(emu):
    """Reset -> the first frame the new chip instance sends on UART0 (emulated ns); the instant
    of the reset from the rig (a frame still going out before it does not count)."""
    before = emu.control("clock")["resets"]
    emu.control("reset")
    while True:
        c = emu.control("clock")
        if c["resets"] != before:
            break
        time.sleep(0.01)
    t0 = c["ns"] - c["chip_ns"]
    while True:
        tx = emu.control("uart_log", uart=0, since=t0)["tx"]
        if tx:
            return tx[0] - t0
        time.sleep(0.1)


def unix_figures(rounds):
    from host_tools.sim.virtual_table import VirtualTable

    with VirtualTable(tempfile.mkdtemp(), event_timeout=30.0) as t:
        t.runner.play(script(rounds))
        st = t.runner.status()
        return {"card_s": med(t.runner.card_times), "mem_free": st.get("mem_free")}


def profile_on(emu, uf2, frames=False):
    """Start the rig's PC profile; with the ELF's symbols also the bytes asked of the allocator
    (gc_alloc, by caller) and, with `frames`, the heap frames: the calls of bytecode functions
    whose VM state (over 11 words) MicroPython allocates from the heap (docs/hardware.md s.8)."""
    names = {n: a for a, n in symbols(elf_for(uf2))}
    watch = [names.get("fun_bc_call"), names.get("m_malloc_maybe")]
    alloc = names.get("gc_alloc")
    emu.control(
        "profile",
        on=True,
        frames=watch if frames and None not in watch else None,
        bytes=[alloc] if alloc is not None else None,
    )


def wait_chip(emu, until_ns, poll_s=0.2):
    """Wait until the chip's own clock reaches `until_ns` (emulated ns) -> the clock then."""
    while True:
        now = emu.clock_ns()
        if now >= until_ns:
            return now
        time.sleep(poll_s)


def profile(emu, uf2, seconds=1.0):
    """The idle chip's PC profile, its allocations and its heap frames."""
    profile_on(emu, uf2, frames=True)
    wait_chip(emu, emu.clock_ns() + seconds * 1e9, 0.5)
    report_profile(emu, uf2, "the idle chip's time", seconds)


def symbols(elf):
    """[(address, name)] of the ELF's functions, sorted; [] without it or arm-none-eabi-nm."""
    if not elf.is_file() or not shutil.which("arm-none-eabi-nm"):
        return []
    out = subprocess.run(
        ["arm-none-eabi-nm", "-n", "--defined-only", elf], capture_output=True, text=True
    ).stdout
    return sorted(
        (int(a, 16) & ~1, n)
        for a, k, n in (ln.split() for ln in out.splitlines() if len(ln.split()) == 3)
        if k in "tTwW"
    )


def elf_for(uf2):
    """SHOE_PICO_ELF, else the ELF built beside the UF2 (firmware.uf2 -> firmware.elf), else
    build/pico-firmware/stock.elf (`SHOE_PICO_STOCK=1 make pico-firmware`)."""
    if os.environ.get("SHOE_PICO_ELF"):
        return Path(os.environ["SHOE_PICO_ELF"])
    beside = Path(uf2).with_suffix(".elf")
    return beside if beside.is_file() else ROOT / "build" / "pico-firmware" / "stock.elf"


def report_profile(emu, uf2_ran, what, seconds):
    p = emu.control("profile", on=False, top=5000)
    elf = elf_for(uf2_ran)
    syms = symbols(elf)
    if not syms:
        print(
            "  profile: %d samples; no ELF (make pico-firmware) to name functions" % p["samples"]
        )
        return
    uf2 = elf.with_suffix(".uf2")
    if not uf2.is_file() or uf2.read_bytes() != Path(uf2_ran).read_bytes():
        print("  profile: %s is not the image that ran: function names may be wrong" % uf2)
    addrs = [a for a, _ in syms]
    by = {}
    for pc, n in p["top"]:
        i = bisect.bisect_right(addrs, pc) - 1
        name = syms[i][1] if i >= 0 else "?"
        by[name] = by.get(name, 0) + n
    print(
        "  where %s goes (%d PC samples over %.1f s emulated; symbols of %s):"
        % (what, p["samples"], seconds, elf)
    )
    for name, n in sorted(by.items(), key=lambda kv: -kv[1])[:12]:
        print("    %5.1f%%  %s" % (100.0 * n / p["samples"], name))
    asked = sum(n for _, _, n in p.get("bytes") or [])
    if asked:  # gc_alloc's first argument, summed: every block the heap handed out
        print("  allocated: %.0f bytes a second (gc_alloc)" % (asked / seconds))
    frames = p.get("frames") or []
    if frames:  # [function object, bytes, calls]: the size tells which (72: asyncio's
        # IOQueue.wait_io_event; tools: mpy-cross + mpy-tool.py -d give each function's n_state)
        print(
            "  heap frames: %.0f a second (function object, bytes with the 20-byte header):"
            % (sum(n for _, _, n in frames) / seconds)
        )
        for obj, size, n in frames[:6]:
            print("    %7.0f/s  %4d B  0x%08x" % (n / seconds, size, obj))


def run(
    reader,
    rounds,
    do_profile,
    unix,
    heap_every=None,
    uf2=None,
    frozen=False,
    pitch_ms=None,
    idle=None,
    uid_bytes=4,
):
    import hashlib

    uf2 = str(uf2 or (FROZEN_UF2 if frozen else os.environ["SHOE_PICO_UF2"]))
    d = Path(tempfile.mkdtemp(prefix="bench-pico-"))
    keys = _emu.write_keys_file(d / "shoe.json")
    print(
        "emulated Pico, %s reader, image %s (sha256 %s...)"
        % (reader, uf2, hashlib.sha256(Path(uf2).read_bytes()).hexdigest()[:16])
    )
    if frozen:
        asm = assemble_frozen(d / "state", reader, keys, uf2)
        print(
            "  firmware frozen in the image; copied %s, provisioned (no deploy): %.1f s wall, "
            "%.1f s emulated" % (" + ".join(asm["copied"]), asm["copy_s"], asm["copy_emulated_s"])
        )
    else:
        asm = assemble(d / "state", reader, keys, uf2)
        print(
            "  deploy (shoectl deploy --board pico --reader %s): %.1f s wall, %.1f s emulated"
            % (reader, asm["deploy_s"], asm["deploy_emulated_s"])
        )
    with _emu.Emulator(
        d / "state",
        uf2=uf2,
        bootrom=os.environ["SHOE_RP2040_BOOTROM"],
        idle=None if idle == "catch-up" else idle,
    ) as e:
        boot = boot_to_ready(e)
        print(
            "  boot to READY (reset -> first frame on UART0): %.0f ms (the first boot after "
            "assembling makes the journal's ring extents)" % ms(boot)
        )
        time.sleep(1)
        if do_profile:
            profile_on(e, uf2)
        s0 = e.control("stats")["instructions"]
        nxt = boot_to_ready(e)
        print(
            "    next boot (the ring map checked): %.0f ms, %.0f M instructions"
            % (ms(nxt), (e.control("stats")["instructions"] - s0) / 1e6)
        )
        if do_profile:
            report_profile(e, uf2, "that boot (reset -> READY)", nxt / 1e9)
        sys.stdout.flush()
        if do_profile:
            time.sleep(2)
            profile(e, uf2)
        wall0, emu0 = time.monotonic(), e.clock_ns()
        if do_profile:
            profile_on(e, uf2)
        try:
            m = play_measured(e, reader, rounds, heap_every, pitch_ms, uid_bytes)
            if os.environ.get("SHOE_BENCH_CONSOLE"):
                print(e.control("console")["text"][-int(os.environ["SHOE_BENCH_CONSOLE"]) :])
            if os.environ.get("SHOE_BENCH_HEAPMAP"):
                print_heap_map(e)
        except Exception:  # the chip's own account of it first (a refusal names no cause)
            print(
                "  the run failed; the chip's console, last lines:\n      "
                + "\n      ".join(e.control("console")["text"].strip().splitlines()[-25:])
            )
            raise
        wall, emulated = time.monotonic() - wall0, (e.clock_ns() - emu0) / 1e9
        if do_profile:
            report_profile(e, uf2, "the chip's time during the deck check and round(s)", emulated)
        stats = e.control("stats")
        stats["console"] = e.control("console")["text"]
    lat_all = [None if x is None else ms(x) for x in m["lat"]][-36 * rounds :]
    round_lat = [x for x in lat_all if x is not None]
    print(
        "  %d round(s) after the deck check: wall %.0f s for %.1f s emulated; chip busy %.0f%% "
        "of its time" % (rounds, wall, emulated, 100.0 * stats["busy_ns"] / stats["ns"])
    )
    times = m["heap_watch"].times
    if times:
        w, em, busy = (statistics.mean(t[i] for t in times) for i in range(3))
        print(
            "  per round (%d deck check(s) in all), dealer pace %s: mean %.1f s wall, %.1f s "
            "emulated, chip busy %.1f s (wall / busy %.1f: busy code runs slower than real "
            "time, so once the pace leaves the chip little idle a run is busy-bound)"
            % (m["deck_checks"], m["pace"], w, em, busy, w / busy if busy else float("nan"))
        )
    causes = {k: v for k, v in stats.get("reset_causes", {}).items() if k != "control"}
    print("  chip resets while playing, besides the bench's own: %s" % (causes or "none"))
    if causes:
        print(
            "    the console's last lines:\n      "
            + "\n      ".join(stats["console"].strip().splitlines()[-15:])
        )
    lost = stats.get("rx_overrun")
    if lost is not None:
        print(
            "  UART bytes lost to receive FIFO overruns, host UART0 / reader UART1: %d / %d%s"
            % (
                lost[0],
                lost[1],
                ""
                if not any(lost)
                else "  <- flash work with interrupts off while bytes came, or a pace faster than "
                "the chip reads",
            )
        )
    print(
        "  card -> frame on UART0, round cards: median %.1f ms, 90th percentile %.1f ms, max "
        "%.1f ms (target %s)"
        % (
            med(round_lat),
            p90(round_lat),
            max(round_lat or [float("nan")]),
            "5 ms" if reader == "optical" else "10 ms",
        )
    )
    ends = sorted(ms(x) for x in m["lat_end"][-36 * rounds :] if x is not None)
    if ends:
        print(
            "      ... to the frame's last byte on the wire (the host has it; ~10.5 ms of wire "
            "for its ~121 bytes): median %.1f ms, 90th percentile %.1f ms, max %.1f ms"
            % (med(ends), p90(ends), ends[-1])
        )
    if m["no_frame"]:
        print(
            "      card events whose frame (>= %d bytes on the wire) was not found: %d (left out)"
            % (CARD_FRAME_MIN, m["no_frame"])
        )
    if os.environ.get("SHOE_BENCH_ALL"):
        print(
            "      every round card, in order (ms; -: no frame found): %s"
            % " ".join("-" if x is None else "%.0f" % x for x in lat_all)
        )
    cf = m["card_flash"][-36 * rounds :]
    if cf and os.environ.get("SHOE_BENCH_ALL"):
        print(
            "      every round card's flash work, in order (erases/pages): %s"
            % " ".join("%g/%d" % (e, p) for e, p in cf)
        )
    if cf:
        er, pg = med([e for e, _ in cf]), med([p for _, p in cf])
        print(
            "      flash work per round card (from one card's frame to the next): median %.1f "
            "sector erases, %d pages programmed = %.0f ms of flash time at the datasheet's "
            "45 ms / 0.4 ms" % (er, pg, er * 45 + pg * 0.4)
        )
    if unix:
        print(
            "      unix port (virtual board, wall, host round trip included): %.1f ms; "
            "x160 estimate %.0f ms" % (unix["card_s"] * 1e3, unix["card_s"] * 1e3 * 160)
        )
    if m["settle"]:
        print(
            "  decisions -> round_result frame (validate + settle + journal): median %.1f ms "
            "(target 10 ms for validate + settle alone)" % ms(med(m["settle"]))
        )
    if rounds > 1 and len(lat_all) == 36 * rounds and None not in lat_all:
        first, rest = lat_all[:36], lat_all[36:]
        sums = sorted(sum(rest[i : i + 36]) for i in range(0, len(rest), 36))
        print(
            "  the first round after boot against the others (target: within 20 ms): card -> "
            "frame median %.1f ms / %.1f ms, sum of its 36 cards %.0f ms / the others' median "
            "%.0f ms, from %.0f to %.0f ms"
            % (med(first), med(rest), sum(first), med(sums), sums[0], sums[-1])
        )
        if len(m["settle"]) == rounds:
            print(
                "    decisions -> round_result: first %.1f ms / median of the others %.1f ms"
                % (ms(m["settle"][0]), ms(med(m["settle"][1:])))
            )
        a = m["settled"]
        if len(a) == rounds:
            print(
                "    the stub's last card -> the settlement's first frame (the chip settled; its "
                "frames follow back to back): first %.1f ms / the others median %.1f ms"
                % (ms(a[0]), ms(med(a[1:])))
            )
        a = m["after_last"]
        if len(a) == rounds:
            srt = sorted(a[1:])
            print(
                "    the stub's last card -> round_result (the settling, no riffle in it): first "
                "%.1f ms / the others median %.1f ms, from %.1f to %.1f ms"
                % (ms(a[0]), ms(med(a[1:])), ms(srt[0]), ms(srt[-1]))
            )
    for i, (b, er, ch) in enumerate(m["flash"]):
        print(
            "  flash, round %d: %.1f KB programmed (page-program traffic, 256 B pages), of which "
            "%.1f KB not 0xFF (bytes stored); %.1f sector erases (target <= 8 KB, <= 2)"
            % (i + 1, b / 1024.0, ch / 1024.0, er)
        )
    print(
        "  heap free after the rounds (status mem_free): %s%s"
        % (m["heap"], "; unix port (64k heap): %s" % unix["mem_free"] if unix else "")
    )
    print(
        "  heap over %d round(s), sampled every %d: %s"
        % (rounds, m["heap_watch"].every, m["heap_watch"].verdict())
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", choices=["optical", "rfid", "both"], default="optical")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument(
        "--unix-rounds",
        type=int,
        default=None,
        metavar="N",
        help="rounds of the unix-port reference (default: --rounds, at most 3; 0: none)",
    )
    ap.add_argument(
        "--heap-every",
        type=int,
        default=10,
        metavar="N",
        help="heap free (status mem_free) after every N rounds (default 10)",
    )
    ap.add_argument(
        "--pitch-ms",
        type=float,
        default=None,
        metavar="MS",
        help="the dealer's pace: one card every MS of emulated time (default: 250 "
        "optical, 1000 rfid); round cards still wait for the shoe's event",
    )
    ap.add_argument(
        "--uid-bytes",
        type=int,
        choices=[4, 7],
        default=4,
        help="the rfid cards' UIDs: 4 bytes (single size, the default) or 7 (NTAG21x: two "
        "cascade levels, ~1.8 ms more air before the UID is known)",
    )
    ap.add_argument(
        "--idle",
        choices=["catch-up", "rate"],
        default="catch-up",
        help="the rig's idle time while playing (rig.js --idle): catch-up (default) "
        "races an idle chip ahead until it is level with the wall clock; rate "
        "holds it to the wall clock's rate, so a host's silence lasts as long "
        "for the chip as it did for the host",
    )
    ap.add_argument(
        "--frozen",
        action="store_true",
        help="the image has the firmware frozen in: copy main.py and provision, "
        "no deploy (default image build/pico-firmware/firmware.uf2)",
    )
    ap.add_argument(
        "--uf2",
        default=None,
        metavar="FILE",
        help="the MicroPython image to run (default SHOE_PICO_UF2, or with "
        "--frozen build/pico-firmware/firmware.uf2)",
    )
    args = ap.parse_args(argv if argv is not None else [])
    env = dict(os.environ)
    if args.frozen or args.uf2:
        env["SHOE_PICO_UF2"] = str(args.uf2 or FROZEN_UF2)
    why = _emu.missing(env)
    if why:
        print("bench_pico: skipped: emulated Pico unavailable: %s" % why)
        return
    n = min(args.rounds, 3) if args.unix_rounds is None else args.unix_rounds
    unix = unix_figures(n) if n > 0 else None  # a reference, not the run
    if unix:
        print(
            "unix port (virtual board): card -> event %.1f ms wall (median), mem_free %s"
            % (unix["card_s"] * 1e3, unix["mem_free"])
        )
    sys.stdout.flush()
    for r in ("optical", "rfid") if args.reader == "both" else (args.reader,):
        run(
            r,
            args.rounds,
            args.profile,
            unix,
            args.heap_every,
            args.uf2,
            args.frozen,
            args.pitch_ms,
            args.idle,
            args.uid_bytes,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
