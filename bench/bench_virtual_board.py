"""Virtual board figures: boot time, cards per second through the shoe, rounds per second,
latency from the last card to the result frame, and the data heap in use over a session.

    .venv/bin/python bench/bench_virtual_board.py [--rounds N]

Full speed = the world draws the next card as soon as the host has the previous card's event
(a dealer never gets ahead of the shoe). All figures are wall-clock on this machine.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from host_tools.sim.provision_sim import ensure_demo_keys  # noqa: E402
from host_tools.sim.simboard import SimBoard  # noqa: E402
from host_tools.sim.virtual_table import VirtualTable  # noqa: E402


def boot_times(n=5):
    out = []
    for _ in range(n):
        d = tempfile.mkdtemp()
        ensure_demo_keys(d)
        b = SimBoard(d)
        b.start()
        out.append(b.boot_seconds)
        b.stop()
    return out


class Clock:
    def __init__(self):
        self.last_card = None
        self.latency = []
        self.cards = 0

    def __call__(self, kind, body):
        now = time.monotonic()
        if kind == "card":
            self.cards += 1
            self.last_card = now
        elif kind == "round_result" and self.last_card is not None:
            self.latency.append(now - self.last_card)


def session(rounds, seats=6):
    clock = Clock()
    script = {
        "game": "four-card-frenzy",
        "procedure": "manual-shoe",
        "seed": 3,
        "rounds": [
            {
                "deck": None,
                "seats": {
                    str(s): {
                        "wagers": {
                            "ante": 10,
                            "odds": 10,
                            "prime": 5,
                            "four_card_bonus": 5,
                            "all_six": 5,
                        }
                    }
                    for s in range(1, seats + 1)
                },
            }
            for _ in range(rounds)
        ],
    }
    with VirtualTable(tempfile.mkdtemp(), on_event=clock) as t:
        mem0 = t.link.command("status", {})["mem_free"]
        t0 = time.monotonic()
        t.runner.play(script)
        dt = time.monotonic() - t0
        st = t.link.command("status", {})
        per_card = statistics.median(t.runner.card_times)
    return {
        "rounds": rounds,
        "seconds": dt,
        "rounds_per_s": rounds / dt,
        "cards": clock.cards,
        "card_ms_median": per_card * 1000,
        "cards_per_s_in_deal": 1 / per_card,
        "last_card_to_result_ms": statistics.median(clock.latency) * 1000
        if clock.latency
        else None,
        "mem_free_start": mem0,
        "mem_free_end": st["mem_free"],
    }


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args(argv)
    bt = boot_times()
    print(
        "virtual board boot (process start -> READY): median %.3f s (min %.3f, max %.3f)"
        % (statistics.median(bt), min(bt), max(bt))
    )
    s = session(a.rounds)
    print(
        "six-seat FCF session, %d rounds: %.1f s, %.2f rounds/s, %d cards"
        % (s["rounds"], s["seconds"], s["rounds_per_s"], s["cards"])
    )
    print(
        "card read -> card event at the host: median %.1f ms (%.0f cards/s while dealing)"
        % (s["card_ms_median"], s["cards_per_s_in_deal"])
    )
    if s["last_card_to_result_ms"] is not None:
        print(
            "stub's last card -> round_result at the host: median %.1f ms"
            % s["last_card_to_result_ms"]
        )
    print(
        "data heap free (64 KB device heap): %d bytes after boot, %d after the session"
        % (s["mem_free_start"], s["mem_free_end"])
    )


if __name__ == "__main__":
    main()
