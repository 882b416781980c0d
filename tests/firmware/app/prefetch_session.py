"""The first round after a boot imports nothing: the app's idle ticker has loaded what the round
needs (shoe.app App._warm). Run under MicroPython without shoe.modules.preload() (as a board).

    micropython prefetch_session.py STATE_DIR configure [hcf]   # configure + deck check, exit
    micropython prefetch_session.py STATE_DIR round [noidle] [hcf]   # boot, idle, first round
    micropython prefetch_session.py STATE_DIR both [hcf]   # configure + deck check, idle, round

Four Card Frenzy, or High Card Flush with `hcf`.

Prints JSON lines: {"idle_ms": ...} once the ticker has prefetched, then {"imported": [...]}: the
shoe modules the first round imported, by stage.
"""

import asyncio
import json
import sys
import time

from shoe.app import App, Hardware
from shoe.cardcode import CardCodes
from host import make_endpoint

KEYS = {
    "shoe": b"demo-shoe-key-0001",
    "supervisor": b"demo-supervisor-key",
    "card": b"demo-card-key",
}
GAMES = {
    "fcf": (
        {"game": "four-card-frenzy", "procedure": "manual-shoe", "paytable": "fcf-public-1"},
        {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5},
    ),
    "hcf": (
        {"game": "high-card-flush", "procedure": "manual-shoe", "paytable": "hcf-public-1"},
        {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 5},
    ),
}


def shuffled(seed):
    x, d = seed, list(range(52))
    for i in range(51, 0, -1):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        j = x % (i + 1)
        d[i], d[j] = d[j], d[i]
    return d


def loaded():
    return set(m for m in sys.modules if m.startswith("shoe"))


def main():
    state, phase = sys.argv[1], sys.argv[2]
    config, wagers = GAMES["hcf" if "hcf" in sys.argv else "fcf"]
    if phase != "round":
        with open(state + "/shoe.json", "w") as f:
            json.dump(
                {
                    "version": 1,
                    "shoe_id": "PRE-0001",
                    "keys": {k: "".join("%02x" % b for b in v) for k, v in KEYS.items()},
                },
                f,
            )
    app = App(Hardware(host=None, reader=None, state_dir=state, board_name="inproc"))
    host = make_endpoint("host", KEYS["shoe"])
    codes = CardCodes(KEYS["card"])
    app.boot()
    t = [1000]
    events = []

    def pump(n=6):
        for _ in range(n):
            t[0] += 5
            out = app.link.transmit(t[0])
            if out:
                events.extend(host.receive(out, t[0]))
            back = host.transmit(t[0])
            if back:
                app.on_host_bytes(back, t[0])

    def command(kind, body):
        ctr = host.command(kind, body, KEYS["supervisor"] if kind == "configure" else None)
        for _ in range(40):
            pump(1)
            while events:
                k, b = events.pop(0)[:2]
                if k in ("reply", "error") and b.get("re") == ctr:
                    assert k == "reply", b
                    return b
        raise RuntimeError("no reply to " + kind)

    def card(c):
        app.on_read("card", codes.make(0x3A7F, "R", c).encode())
        pump(2)

    pump(10)
    if phase != "round":
        command("configure", config)
        command("load_deck", {"serial": "3A7F", "back": "R"})
        for c in list(range(52)) + [52]:
            card(c)
        pump(20)
        print(json.dumps({"configured": app.table.cfg["game"]}))
        if phase == "configure":
            return
    if "noidle" not in sys.argv:

        async def idle():  # the ticker's work (App.tick, every tick as ticker_task does it;
            n = 0  # the link is pumped by hand here), until the prefetch list is done (<= 10 s)
            t0 = time.ticks_ms()
            while app._prefetch is not None and time.ticks_diff(time.ticks_ms(), t0) < 10000:
                n = app.tick(n)
                await asyncio.sleep_ms(20)
            return time.ticks_diff(time.ticks_ms(), t0)

        print(json.dumps({"idle_ms": asyncio.run(idle())}))
    got = {}
    before = loaded()
    b = command("open_round", {"seats": dict((str(s), {"wagers": wagers}) for s in range(1, 7))})
    got["open_round"] = sorted(loaded() - before)
    before = loaded()
    d = shuffled(7)
    for c in d[: b["cards"]]:
        card(c)
    command("decisions", dict((str(s), 10) for s in range(1, 7)))
    got["decisions"] = sorted(loaded() - before)
    before = loaded()
    for c in d[b["cards"] :] + [52]:
        card(c)
    pump(20)
    kinds = [e[0] for e in events]
    got["settle"] = sorted(loaded() - before)
    print(json.dumps({"imported": got, "result": "round_result" in kinds}))


main()
