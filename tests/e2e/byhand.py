"""The README's by-hand round (`shoectl table` as the table system, `shoectl world` as the
dealer), shared by the virtual board (tests/e2e/test_remote.py) and the emulated Pico through the
gateway (tests/emu/test_e2e.py). `shoectl(*argv) -> stdout` runs one command (in process or as
a subprocess, the caller decides); `k` is the port and key arguments, `world` those of the
dealer (`--reader URL`, and `--keys FILE` where the shoe has its own card key)."""

import json
import time


def status_when(shoectl, k, done, timeout_s, poll_s=0.0):
    """Ask `table status` until done(status) or the deadline (every poll_s: a process per
    question competes with an emulated chip for the cores); the last status."""
    deadline = time.monotonic() + timeout_s
    while True:
        st = json.loads(shoectl("table", "status", "--json", *k))
        if done(st) or time.monotonic() > deadline:
            return st
        time.sleep(poll_s)


class PhaseWatch:
    """The `phase` events among a monitor's `--json` lines (a list another thread extends): a
    wait there costs the shoe nothing, where every `table status` is a command it answers (on
    the emulated Pico ~0.2 s of chip each, at ~1/7 of real time: polling every 2 s kept the
    chip answering status most of the time it was meant to be reading cards)."""

    def __init__(self, lines):
        self.lines = lines

    def mark(self):
        return len(self.lines)

    def wait_phase(self, phase, since, timeout_s):
        """True once a `phase` event for `phase` is among the lines from index `since`."""
        deadline = time.monotonic() + timeout_s
        while True:
            while since < len(self.lines):  # each line read once
                line = self.lines[since]
                since += 1
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if ev.get("event") == "phase" and ev.get("phase") == phase:
                    return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)


def round_by_hand(shoectl, k, world, timeout_s=60.0, poll_s=0.0, pace="0", events=None):
    """Configure, load a deck, run the deck check, open a two-seat round, deal, decide, run the
    stub: -> the status after the round (phase open_round, nothing latched, on success). `pace`:
    the world's seconds between cards ("0" on the virtual board; a chip's reader UART at 9600
    baud loses lines sent back to back while it erases flash, as a real one would). `events`: a
    PhaseWatch on a monitor of the same table: each wait for a phase waits for its event there
    first, then asks `table status` (still until the phase shows, every poll_s)."""

    def phase_after(phase, mark):
        if events is not None:
            events.wait_phase(phase, mark, timeout_s)
        return status_when(shoectl, k, lambda s: s["phase"] == phase, timeout_s, poll_s)

    def mark():
        return events.mark() if events is not None else None

    shoectl("table", "configure", "--game", "four-card-frenzy", *k)
    out = shoectl("table", "load-deck", "--serial", "3A7F", "--back", "R", *k)
    assert "slot 0" in out, out
    m = mark()
    shoectl("world", *world, "--serial", "3A7F", "--deck-check", "--pace", pace)
    # the world returns once its 53 lines are written; the shoe may still be reading them
    st = phase_after("open_round", m)
    assert st["phase"] == "open_round", st
    out = shoectl("table", "open", "--seat", "1:ante=10,odds=10", "--seat", "2:ante=5,odds=5", *k)
    n = int(out.split("deal ")[1].split()[0])
    m = mark()
    shoectl("world", *world, "--serial", "3A7F", "--seed", "2", "--cards", str(n), "--pace", pace)
    st = phase_after("decisions", m)
    assert st["phase"] == "decisions" and st["round"]["dealt"] == n, st
    m = mark()
    shoectl("table", "decide", "1=10", "2=0", *k)
    st = json.loads(shoectl("table", "status", "--json", *k))
    if st["phase"] == "stub":
        shoectl(
            "world",
            *world,
            "--serial",
            "3A7F",
            "--seed",
            "2",
            "--skip",
            str(n),
            "--stub",
            "--pace",
            pace,
        )
    st = phase_after("open_round", m)
    assert st["phase"] == "open_round" and st["rounds"] == 1 and st["latched"] == [], st
    return st
