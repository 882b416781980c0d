"""Runs a table script under MicroPython: steps as JSON on stdin, events as JSON lines out.

    args: [fake|real] ; stdin: {"steps": [...], "state": a state() to resume from (optional),
                                "urandom": true (optional)}
Each step: ["cmd", kind, body] | ["card", serial, back, id] | ["reject", reason] | ["tick"].
Prints {"ev": [kind, body]} per event (bytes as hex: a commitment, a revealed secret),
{"err": reason} per refused command, then {"mem": {...}} with the heap figures and
{"state": ...}. Round secrets come from helpers.secrets' formula (the same on both runtimes),
or with "urandom" from os.urandom as on a shoe (a power cut: one run dies, the next resumes
from its state as the journal would).
"""

import gc
import hashlib
import json
import sys

gc.collect()
free0 = gc.mem_free()
import steps  # noqa: E402

from shoe.table import CommandError, Table  # noqa: E402

if sys.argv[-1] == "real":
    from shoe.games import engine
else:
    import fake_engine as engine
gc.collect()
free_imported = gc.mem_free()


def secrets(n):
    return hashlib.sha256(("test round %d" % n).encode()).digest()[:16]


spec = json.loads(sys.stdin.read())
gc.collect()
base = gc.mem_free()  # after the input script is in memory
src = None if spec.get("urandom") else secrets
if spec.get("state") is None:
    t = Table(engine=engine, secrets=src)
else:
    t = Table.from_state(spec["state"], engine, src)
low = base
i = 0
for st in spec["steps"]:
    i += 1
    try:
        steps.apply(t, st, i)
    except CommandError as e:
        print(json.dumps({"err": e.reason}))
    for ev in t.pop_events():
        print(json.dumps({"ev": [ev[0], steps.hexed(ev[1])]}))
    if hasattr(engine, "CALLS"):
        engine.CALLS[:] = []
    gc.collect()
    f = gc.mem_free()
    if f < low:
        low = f
gc.collect()
after = gc.mem_free()
print(
    json.dumps(
        {
            "mem": {
                "heap_free_at_start": free0,
                "code": free0 - free_imported,
                "data_after": base - after,
                "live_max": base - low,
            }
        }
    )
)
print(json.dumps({"state": t.state()}))
