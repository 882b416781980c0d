"""Drive the real firmware App in one MicroPython process: no sockets, a host Endpoint in the
same process, the world simulated by card codes fed to the app. Used by tests and by
bench/bench_memory.py to measure the data heap over long sessions.

    micropython -X heapsize=<code+data> app_session.py STATE_DIR ROUNDS DATA_HEAP SEATS

Prints JSON lines: {"boot_free": n}, then per round {"round": n, "outcome": kind,
"alloc": bytes in use after gc, "min_free": lowest free seen}, then {"done": ...}.
"""

import gc
import json
import sys
import time

import shoe.modules
from shoe.app import App, Hardware
from shoe.cardcode import CardCodes
from host import make_endpoint

KEYS = {
    "shoe": b"demo-shoe-key-0001",
    "supervisor": b"demo-supervisor-key",
    "card": b"demo-card-key",
}


def hexs(b):
    return "".join("%02x" % x for x in b)


class Rand:
    """A small LCG: the same shuffles on every port."""

    def __init__(self, seed):
        self.x = seed or 1

    def below(self, n):
        self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
        return self.x % n

    def shuffled(self):
        d = list(range(52))
        for i in range(51, 0, -1):
            j = self.below(i + 1)
            d[i], d[j] = d[j], d[i]
        return d


def main():
    state, rounds, data_heap, seats = (
        sys.argv[1],
        int(sys.argv[2]),
        int(sys.argv[3]),
        int(sys.argv[4]),
    )
    with open(state + "/shoe.json", "w") as f:
        json.dump(
            {"version": 1, "shoe_id": "MEM-0001", "keys": {k: hexs(v) for k, v in KEYS.items()}}, f
        )
    shoe.modules.preload()
    import host as _host  # noqa: F401  (the host side lives here too)

    hw = Hardware(host=None, reader=None, state_dir=state, board_name="inproc")
    app = App(hw)
    host = make_endpoint("host", KEYS["shoe"])
    sup = {"configure": KEYS["supervisor"]}  # the supervisor configures (shoe.roles)
    codes = CardCodes(KEYS["card"])
    import heapshape

    ballast = heapshape.reserve(data_heap + 2048) if data_heap else None  # +2 KB: the harness
    gc.collect()
    print(json.dumps({"boot_free": gc.mem_free()}))
    app.boot()
    t = [1000]
    events = []
    low = [gc.mem_free()]

    def pump(n=6):
        for _ in range(n):
            t[0] += 5
            out = app.link.transmit(t[0])
            if out:
                for ev in host.receive(out, t[0]):
                    events.append(ev)
            back = host.transmit(t[0])
            if back:
                app.on_host_bytes(back, t[0])
            f = gc.mem_free()
            if f < low[0]:
                low[0] = f

    replies = {}

    def command(kind, body):
        ctr = host.command(kind, body, sup.get(kind))
        for _ in range(40):
            pump(1)
            while events:
                k, b, eseq, meta = events.pop(0)
                if k in ("reply", "error") and b.get("re") == ctr:
                    return k, b
                if k in ("round_result", "round_void"):
                    replies["outcome"] = k
        raise RuntimeError("no reply to " + kind)

    card_us = [0, 0, 0]  # count, total, max: the app's time per card (table + journal)

    def card(serial, c):
        code = codes.make(serial, "R", c).encode()
        try:
            t0 = time.ticks_us()
            app.on_read("card", code)
            dt = time.ticks_diff(time.ticks_us(), t0)
            card_us[0] += 1
            card_us[1] += dt
            card_us[2] = max(card_us[2], dt)
        except Exception:
            gc.collect()
            print(json.dumps({"memory_error_free": gc.mem_free(), "backlog": len(app.backlog)}))
            import micropython

            micropython.mem_info()
            raise
        pump(2)

    pump(10)
    ok = command(
        "configure",
        {"game": "four-card-frenzy", "procedure": "manual-shoe", "paytable": "fcf-public-1"},
    )
    assert ok[0] == "reply", ok
    assert command("load_deck", {"serial": "3A7F", "back": "R"})[0] == "reply"
    for c in list(range(52)) + [52]:
        card(0x3A7F, c)
    rnd = Rand(7)
    wag = {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5}
    for r in range(rounds):
        d = rnd.shuffled()
        k, b = command(
            "open_round", {"seats": dict((str(s), {"wagers": wag}) for s in range(1, seats + 1))}
        )
        assert k == "reply", b
        n = b["cards"]
        for c in d[:n]:
            card(0x3A7F, c)
        k, b = command("decisions", dict((str(s), 10) for s in range(1, seats + 1)))
        assert k == "reply", b
        replies["outcome"] = None
        for c in d[n:] + [52]:
            card(0x3A7F, c)
        pump(10)
        while events:
            ev = events.pop(0)
            if ev[0] in ("round_result", "round_void"):
                replies["outcome"] = ev[0]
        gc.collect()
        print(
            json.dumps(
                {
                    "round": r + 1,
                    "outcome": replies["outcome"],
                    "alloc": gc.mem_alloc(),
                    "free": gc.mem_free(),
                    "min_free": low[0],
                }
            )
        )
    print(
        json.dumps(
            {
                "done": rounds,
                "faults": app.faults,
                "journal_writes": app.journal.writes,
                "journal_bytes": app.journal.bytes_written,
                "journal_erases": app.journal.erases,
                "card_us_mean": card_us[1] // card_us[0],
                "card_us_max": card_us[2],
            }
        )
    )
    return ballast


main()
