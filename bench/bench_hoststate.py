"""Host state figures (not a test, docs/hoststate.md): what failing closed costs the host.

- a commit: one event stored the old way (AuditStore.store: one SQLite commit) against the host
  state's (the event and the shoe's record in one SQLite transaction, then the floor file
  written atomically: temporary file, fsync, rename, fsync of the directory), for 1 and 8
  events and for a counter-only change; medians, on the file system of the temp directory;
- a link's open (lock, SQLite quick_check, the floor file, the record, the last 32 events)
  against the size of the store.

    .venv/bin/python bench/bench_hoststate.py [--sizes 1000,10000,100000]
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import host_tools  # noqa: E402,F401  (the CPython stand-in for `micropython`, before shoe)
from host_tools.audit import AuditStore  # noqa: E402
from host_tools.hoststate import HostState  # noqa: E402
from shoe.link.message import GENESIS, seal_message  # noqa: E402

KEY = b"k" * 32
BODY = {"round": 1234, "card": "Qh", "target": "seat3", "position": 7, "deck": "3A7F"}


class Events:
    """A shoe's signed, chained events, as the link delivers them."""

    def __init__(self):
        self.eseq, self.head = 0, GENESIS

    def take(self, n):
        out = []
        for _ in range(n):
            self.eseq += 1
            payload, head = seal_message(KEY, "card", BODY, self.eseq, self.head)
            out.append(
                (
                    "card",
                    BODY,
                    self.eseq,
                    {"prev": self.head, "hash": head, "mac": payload[-16:], "payload": payload},
                )
            )
            self.head = head
        return out


def _median_ms(fn, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def commits(d, n=40):
    ev = Events()
    plain = AuditStore(d / "plain.sqlite")
    one = _median_ms(lambda: [plain.store("T1", e, k, b, m) for k, b, e, m in ev.take(1)], n)
    plain.close()
    store = AuditStore(d / "state.sqlite")
    hs = HostState(store)
    hs.open()
    hs.check("T1", KEY)
    ev, ctr = Events(), [0]

    def commit(k):
        ctr[0] += 1
        hs.commit("T1", KEY, ctr[0], ev.take(k))

    r = {
        "store_1_event_ms": one,
        "commit_1_event_ms": _median_ms(lambda: commit(1), n),
        "commit_8_events_ms": _median_ms(lambda: commit(8), n),
        "commit_counter_only_ms": _median_ms(lambda: commit(0), n),
    }
    hs.close()
    store.close()
    return r


def opens(d, sizes):
    out = {}
    for size in sizes:
        db = d / ("open%d.sqlite" % size)
        store = AuditStore(db)
        hs = HostState(store)
        hs.open()
        hs.check("T1", KEY)
        ev = Events()
        for i in range(0, size, 2000):
            hs.commit("T1", KEY, i + 1, ev.take(min(2000, size - i)))
        hs.close()
        store.close()

        def open_check(db=db):
            s = AuditStore(db)
            h = HostState(s)
            h.open()
            h.check("T1", KEY)
            h.close()
            s.close()

        out[size] = {"open_ms": _median_ms(open_check, 5), "mb": os.path.getsize(db) / 1e6}
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    sizes = [1000, 10000, 100000]
    if "--sizes" in argv:
        sizes = [int(x) for x in argv[argv.index("--sizes") + 1].split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        c = commits(d)
        print(
            "host state (%s): one event stored alone %.1f ms; with the host record and the "
            "floor file %.1f ms (x%.1f); 8 events %.1f ms; a counter alone %.1f ms"
            % (
                tmp,
                c["store_1_event_ms"],
                c["commit_1_event_ms"],
                c["commit_1_event_ms"] / c["store_1_event_ms"],
                c["commit_8_events_ms"],
                c["commit_counter_only_ms"],
            )
        )
        for size, o in opens(d, sizes).items():
            print(
                "host state: a link's open checks a store of %d events (%.1f MB) in %.0f ms"
                % (size, o["mb"], o["open_ms"])
            )


if __name__ == "__main__":
    main()
