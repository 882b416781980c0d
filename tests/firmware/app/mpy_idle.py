"""MicroPython, device heap: an idle shoe's periodic work allocates nothing.

The app configured, a deck loaded and checked, the host linked and every event acknowledged:
then, under micropython.heap_lock(), the ticker task's link step (Endpoint.transmit with nothing to
send) and the ticker's (App.tick between two table ticks) run for a while. An allocation there
raises MemoryError. On a Pico running the firmware from .mpy files every collection marks the
~150 KB of bytecode in RAM (~25 ms): the idle tasks' allocations were most of its idle work.

    micropython idle.py STATE_DIR    -> one JSON line {"link_steps": n, "ticks": n, ...}
"""

import json
import sys
import time

import micropython

import shoe.modules
from shoe.app import App, Hardware
from shoe.cardcode import CardCodes
from heapframes import allocates
from host import make_endpoint

KEYS = {
    "shoe": b"idle-shoe-key-00001",
    "supervisor": b"idle-supervisor-key",
    "card": b"idle-card-key-00001",
}


def main(state):
    with open(state + "/shoe.json", "w") as f:
        json.dump(
            {
                "version": 1,
                "shoe_id": "IDLE-0001",
                "keys": {k: "".join("%02x" % x for x in v) for k, v in KEYS.items()},
            },
            f,
        )
    shoe.modules.preload()
    app = App(Hardware(host=None, reader=None, state_dir=state, board_name="inproc"))
    host = make_endpoint("host", KEYS["shoe"])
    codes = CardCodes(KEYS["card"])
    app.boot()
    t = [1000]
    events = []

    def exchange(n):
        for _ in range(n):
            t[0] += 5
            out = app.link.transmit(t[0])
            if out:
                events.extend(host.receive(out, t[0]))
            back = host.transmit(t[0])
            if back:
                app.on_host_bytes(back, t[0])

    def command(kind, body, key=None):
        ctr = host.command(kind, body, key)
        for _ in range(40):
            exchange(1)
            for k, b, _eseq, _meta in events:
                if k in ("reply", "error") and b.get("re") == ctr:
                    del events[:]
                    return k, b
        raise RuntimeError("no reply to " + kind)

    exchange(10)
    k, b = command(
        "configure",
        {"game": "four-card-frenzy", "procedure": "manual-shoe", "paytable": "fcf-public-1"},
        KEYS["supervisor"],
    )
    if k != "reply":
        raise RuntimeError(b)
    if command("load_deck", {"serial": "3A7F", "back": "R"})[0] != "reply":
        raise RuntimeError("load_deck")
    for c in list(range(52)) + [52]:
        app.on_read("card", codes.make(0x3A7F, "R", c).encode())
        exchange(2)
    exchange(40)  # every event out and acknowledged
    # quiet since the last card: the ticker's once-a-pause work (collection, prefetch of the
    # first round's modules, the journal's erase ahead) is done before the lock
    time.sleep_ms(200)
    n = 0
    for _ in range(200):
        n = app.tick(n)
    while n != 10:  # right after a table tick: the next nine ticks are the ticker's own
        n = app.tick(n)
    t[0] += 5
    link_steps = ticks = 0
    micropython.heap_lock()
    try:
        for _ in range(9):  # 9 x 20 ms: less than the heartbeat (1 s), nothing to send
            t[0] += 20
            out = app.link.transmit(t[0])
            link_steps += 1
            n = app.tick(n)
            ticks += 1
    finally:
        micropython.heap_unlock()

    # the same steps again, watched for any heap allocation, VM frames included (heapframes.py)
    def step():
        t[0] += 20
        app.link.transmit(t[0])

    frames = {
        "link_step": allocates(step, 9),
        "tick": allocates(lambda: app.tick(5), 9),  # (5: between two table ticks)
    }
    print(
        json.dumps(
            {
                "allocates": frames,
                "link_steps": link_steps,
                "ticks": ticks,
                "sent": len(out),
                "phase": app.table.current_phase(),
                "backlog": len(app.backlog),
            }
        )
    )


main(sys.argv[1])
