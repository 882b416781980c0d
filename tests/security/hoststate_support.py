"""Real host state for the attacker tests (tests/security/test_hoststate*.py): an audit store and
its counter floor file written by the real code path (events signed by the firmware's shoe
Endpoint, carried to a HostEndpoint, committed by HostState), and the host's verdict on them."""

import json
import subprocess
import sys
from pathlib import Path

from host_tools.audit import AuditStore
from host_tools.hoststate import HostState
from host_tools.link.host import HostEndpoint
from host_tools.sim.memstore import MemoryStore
from shoe.link.endpoint import Endpoint

KEY = b"k" * 32
SUP = b"s" * 32
ROOT = Path(__file__).resolve().parents[2]


class Shoe:
    """A shoe end in memory whose events reach the host end exactly as on a link."""

    def __init__(self, shoe_id="T1", key=KEY):
        self.id, self.key = shoe_id, key
        self.st = MemoryStore()
        self.ep = Endpoint("shoe", key, store=self.st, shoe_id=shoe_id)
        self.host = HostEndpoint(key, ack_every=1, ack_delay_ms=0)
        self.t = 0

    def events(self, n):
        """n new durable events as the host delivers them: [(kind, body, eseq, meta)]. The
        same history however it is cut into calls (a later process can catch up with it)."""
        for _ in range(n):
            i = self.st.eseq
            self.ep.send("card" if i % 2 else "round_result", {"i": i, "raw": b"\x01\x02"})
        out = []
        for _ in range(200):
            self.t += 10
            out += [m for m in self.host.receive(self.ep.transmit(self.t), self.t) if m[2]]
            self.ep.receive(self.host.transmit(self.t), self.t)
            if len(out) >= n and not self.st.outbox():
                break
        return out


def write_state(db, shoe=None, batches=((4, 8), (3, 31))):
    """Commit `batches` of (events, counter floor) for `shoe` into the store at `db` and its
    floor file; returns the shoe (for more events)."""
    shoe = shoe or Shoe()
    store = AuditStore(db)
    hs = HostState(store)
    try:
        hs.open()
        hs.check(shoe.id, shoe.key)
        for n, ctr in batches:
            hs.commit(shoe.id, shoe.key, ctr, shoe.events(n))
    finally:
        hs.close()
        store.close()
    return shoe


def verdict(db, shoe="T1", key=KEY):
    """The host's decision at a link open: the counter floor, or the HostStateError raised."""
    try:
        store = AuditStore(db)
    except Exception as e:  # noqa: BLE001  (a file that is not a database: refused at open)
        return e
    hs = HostState(store)
    try:
        hs.open()
        return hs.check(shoe, key)
    except Exception as e:  # noqa: BLE001
        return e
    finally:
        hs.close()
        store.close()


def floor_of(db):
    return Path(str(db) + ".counters.json")


def keys_file(path):
    path.write_text(
        json.dumps({"shoe": KEY.hex(), "supervisor": SUP.hex(), "card": (b"c" * 32).hex()})
    )
    return path


def python(code, *args, **kw):
    """A real second process running `code` with this checkout on its path."""
    return subprocess.Popen(
        [sys.executable, "-c", code] + [str(a) for a in args],
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )
