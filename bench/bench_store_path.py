"""The gateway's per-event host path (not a test, docs/floor.md): what one event costs the host
between the link's read and its acknowledgement, `HostState.commit(shoe, key, ctr, [event])`
(the fork check, the event stored, the host record, one SQLite commit, the counter floor file).

Each round commits `--events` single-event batches per implementation into a store that
already holds `--prefill` events (the shoe's events are sealed before the clock starts: that is
the shoe's cost); the implementations take turns round by round, so a shared machine's load
falls on both. CPU (process_time) and wall per event: the median over the rounds, and the
ratio to the first implementation. Implementations:

    head            the working tree's host_tools/audit.py and hoststate.py
    git:REF         both files as they are at git REF (e.g. git:HEAD~3), loaded beside them
    head+PRAGMA=V   the working tree's with `PRAGMA PRAGMA=V` on the store's connection

    .venv/bin/python bench/bench_store_path.py [--dirs /dev/shm,/tmp] [--rounds 7]
        [--events 200] [--prefill 1000] [--impl git:HEAD,head,head+locking_mode=EXCLUSIVE]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gitref import module_at  # noqa: E402

import host_tools  # noqa: E402,F401  (the CPython stand-in for `micropython`, before shoe)
from host_tools import audit as _audit  # noqa: E402
from host_tools import hoststate as _hoststate  # noqa: E402
from shoe.link.message import GENESIS, seal_message  # noqa: E402

KEY = b"k" * 32
BODY = {"round": 1234, "card": "Qh", "target": "seat3", "position": 7, "deck": "3A7F"}


def events(start, head, n, shoe="T1"):
    """n signed, chained events after (start, head), as the link delivers them."""
    out = []
    for eseq in range(start + 1, start + n + 1):
        payload, h = seal_message(KEY, "card", BODY, eseq, head)
        out.append(
            (
                "card",
                BODY,
                eseq,
                {"prev": head, "hash": h, "mac": payload[-16:], "payload": payload},
            )
        )
        head = h
    return out


def implementation(spec):
    """spec -> (AuditStore class, HostState class, pragma or None)."""
    base, _, pragma = spec.partition("+")
    if base == "head":
        return _audit.AuditStore, _hoststate.HostState, pragma or None
    if base.startswith("git:"):
        ref = base[4:]
        hs = module_at(ref, "host_tools/hoststate.py", "hoststate_at_" + ref)
        au = module_at(ref, "host_tools/audit.py", "audit_at_" + ref)
        return au.AuditStore, hs.HostState, pragma or None
    raise SystemExit("unknown implementation %r" % spec)


class Run:
    """One implementation's store in one directory, kept open across rounds (as a gateway)."""

    def __init__(self, impl, d, tag, prefill):
        store_cls, hs_cls, pragma = impl
        self.store = store_cls(Path(d) / ("%s.sqlite" % tag))
        if pragma:
            self.store._db.execute("PRAGMA %s" % pragma).fetchall()
        self.hs = hs_cls(self.store)
        self.hs.open()
        self.hs.check("T1", KEY)
        self.eseq, self.head, self.ctr = 0, GENESIS, 0
        while self.eseq < prefill:
            self.commit(events(self.eseq, self.head, min(500, prefill - self.eseq)))

    def commit(self, evs):
        self.ctr += 1
        self.hs.commit("T1", KEY, self.ctr, evs)
        self.eseq, self.head = evs[-1][2], evs[-1][3]["hash"]

    def round(self, n):
        evs = events(self.eseq, self.head, n)
        c, w = time.process_time(), time.perf_counter()
        for ev in evs:
            self.commit([ev])
        return (time.process_time() - c) / n * 1e3, (time.perf_counter() - w) / n * 1e3

    def close(self):
        self.hs.close()
        self.store.close()


def measure(d, impls, rounds, n, prefill):
    runs = [Run(implementation(s), d, "i%d" % i, prefill) for i, s in enumerate(impls)]
    got = {s: ([], []) for s in impls}
    try:
        for _ in range(rounds):
            for s, r in zip(impls, runs):
                cpu, wall = r.round(n)
                got[s][0].append(cpu)
                got[s][1].append(wall)
    finally:
        for r in runs:
            r.close()
    return {s: (statistics.median(c), statistics.median(w)) for s, (c, w) in got.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dirs", default="/dev/shm," + tempfile.gettempdir())
    ap.add_argument("--impl", default="git:HEAD,head")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--events", type=int, default=100)
    ap.add_argument("--prefill", type=int, default=1000)
    a = ap.parse_args(sys.argv[1:] if argv is None else argv)
    impls = a.impl.split(",")
    for base in a.dirs.split(","):
        if not os.path.isdir(base):
            continue
        with tempfile.TemporaryDirectory(dir=base) as d:
            res = measure(d, impls, a.rounds, a.events, a.prefill)
        cpu0, wall0 = res[impls[0]]
        print(
            "store path (%s, %d rounds of %d one-event commits, %d events before):"
            % (base, a.rounds, a.events, a.prefill)
        )
        for s in impls:
            cpu, wall = res[s]
            print(
                "  %-40s CPU %.3f ms/event (x%.2f)  wall %.3f ms/event (x%.2f)"
                % (s, cpu, cpu / cpu0, wall, wall / wall0)
            )


if __name__ == "__main__":
    main()
