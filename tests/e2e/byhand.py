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


def round_by_hand(shoectl, k, world, timeout_s=60.0, poll_s=0.0, pace="0"):
    """Configure, load a deck, run the deck check, open a two-seat round, deal, decide, run the
    stub: -> the status after the round (phase open_round, nothing latched, on success). `pace`:
    the world's seconds between cards ("0" on the virtual board; a chip's reader UART at 9600
    baud loses lines sent back to back while it erases flash, as a real one would)."""
    shoectl("table", "configure", "--game", "four-card-frenzy", *k)
    out = shoectl("table", "load-deck", "--serial", "3A7F", "--back", "R", *k)
    assert "slot 0" in out, out
    shoectl("world", *world, "--serial", "3A7F", "--deck-check", "--pace", pace)
    # the world returns once its 53 lines are written; the shoe may still be reading them
    st = status_when(shoectl, k, lambda s: s["phase"] == "open_round", timeout_s, poll_s)
    assert st["phase"] == "open_round", st
    out = shoectl("table", "open", "--seat", "1:ante=10,odds=10", "--seat", "2:ante=5,odds=5", *k)
    n = int(out.split("deal ")[1].split()[0])
    shoectl("world", *world, "--serial", "3A7F", "--seed", "2", "--cards", str(n), "--pace", pace)
    st = status_when(shoectl, k, lambda s: s["phase"] == "decisions", timeout_s, poll_s)
    assert st["phase"] == "decisions" and st["round"]["dealt"] == n, st
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
    st = status_when(shoectl, k, lambda s: s["phase"] == "open_round", timeout_s, poll_s)
    assert st["phase"] == "open_round" and st["rounds"] == 1 and st["latched"] == [], st
    return st
