"""A power cut between a card and the reveal, under MicroPython: one run plays steps on a table
(round secrets from os.urandom, as on a shoe) and prints its events and its state() (what the
journal holds); the next run resumes from that state (Table.from_state, as at boot) and plays
on. stdin: {"state": state or null, "steps": [...]} (steps as in steps.py); prints {"ev": [kind,
body]} per event (bytes as hex) and {"state": ...} at the end."""
import json
import sys

from shoe.table import CommandError, Table
import fake_engine
import steps


spec = json.loads(sys.stdin.read())
t = Table(engine=fake_engine) if spec["state"] is None else Table.from_state(spec["state"],
                                                                             fake_engine)
i = 0
for st in spec["steps"]:
    i += 1
    try:
        steps.apply(t, st, i)
    except CommandError as e:
        print(json.dumps({"err": e.reason}))
    for ev in t.pop_events():
        print(json.dumps({"ev": [ev[0], steps.hexed(ev[1])]}))
print(json.dumps({"state": t.state()}))
