"""The host's audit store: every shoe event exactly once, MAC and hash chain checked on arrival.

    store = AuditStore(path=None)        # default: <user data dir>/shoectl/audit.sqlite
    store.store(shoe_id, eseq, kind, body, meta)  # "new" | "duplicate"  (meta from the Endpoint)
    store.last_eseq(shoe_id)             # highest eseq held (the link resumes after it)
    store.events(shoe_id, kinds=None, since=0)   # [dict] in eseq order
    store.rounds(shoe_id, last=100)      # round_result / round_void events
    store.verify(shoe_id, key)           # re-check every MAC, the chain, body = payload -> report
    store.compare_live(shoe_id, eseq, head, acked)   # the store against the shoe's live chain
    store.export(fileobj, fmt="jsonl"|"csv", shoe_id=None, kinds=None)
    store.payloads(shoe_id, since=0, limit=500)  # [(eseq, signed wire payload)] (floor gateway)
    store.round_events(shoe_id, rnd)     # [(kind, body)]: a round's round_open, card, reveal
    store.flag(shoe_id, eseq, kind, rnd, detail) / store.flags(shoe_id)   # reveal alerts

An event is keyed by (shoe id, eseq): a re-sent event is a no-op. `chain` per row: "ok" (prev
equals the stored hash of eseq-1, or genesis for eseq 1), "broken" (it does not: something was
removed or altered), "gap" (eseq-1 is not in the store). Bytes in bodies are stored as hex
strings in the JSON column; the exact wire payload is kept so MACs can be re-verified any time.

What the store shows comes from the signed payload, never from its own copy: `events()`,
`rounds()` and `export()` decode kind and body from the stored payload (the `body` column is a
readable copy only), and `verify()` reports every row whose copy differs from its payload
(`body_mismatch`). Removed rows in the middle show as `gaps`; removed rows at the end cannot be
seen from the store alone: `compare_live()` checks the store against the shoe's own last event
number, chain head and acknowledged level (`shoectl verify --port`).

Secrecy (docs/protocol.md): a card event holds its card's commitment, not the card, until the
round's `reveal`. The link checks every commitment at the reveal (host_tools/reveal.py) and
records what does not match as a flag (`reveal_mismatch`); `verify()` checks every round of
the store again from scratch ("reveal").

The host's own state lives here too (host_tools/hoststate.py keeps it, docs/hoststate.md): a
file that is not a database names itself in a HostStateError at open; `integrity()` runs
SQLite's quick_check; `transaction()` makes a batch of `store()` calls and the shoe's host
record (`host_record` / `put_host_record`: its counter floor, last event, generation, MAC'd)
one commit; `tail_problems()` re-checks the last events at each link open; `acceptances`
keep who accepted a shoe again (`shoectl trust`).

Inside a transaction each shoe's last stored event (its eseq and hash: what the next event must
chain onto, what the host record names) is kept in memory instead of read per event. It is
trusted only while nothing else changed the file: a rollback drops it, and each transaction
starts by checking that no other connection committed (SQLite's data_version) and that no
statement outside these methods changed a row through this connection (total_changes).
"""

import contextlib
import csv
import json
import os
import sqlite3
import threading
import time
from pathlib import Path

from host_tools import events as E
from host_tools.events import jsonable as _jsonable
from host_tools.hoststate import HostStateError
from host_tools.link.host import open_event
from shoe.link import codec
from shoe.link.message import GENESIS, LinkError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    shoe TEXT NOT NULL, eseq INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
    prev BLOB, hash BLOB, mac BLOB, payload BLOB, chain TEXT, received REAL,
    PRIMARY KEY (shoe, eseq));
CREATE TABLE IF NOT EXISTS flags (
    shoe TEXT NOT NULL, eseq INTEGER, kind TEXT NOT NULL, round INTEGER, detail TEXT NOT NULL,
    raised REAL);
"""
# the host's state (host_tools/hoststate.py): this store's id, each shoe's host record (the
# counter floor file holds the same records), the supervisors' acceptances
_HOST_SCHEMA = """
CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS host_record (
    shoe TEXT PRIMARY KEY, gen INTEGER NOT NULL, ctr INTEGER NOT NULL, eseq INTEGER NOT NULL,
    head BLOB NOT NULL, base INTEGER NOT NULL, mac BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS acceptances (
    shoe TEXT NOT NULL, at REAL NOT NULL, record TEXT NOT NULL, mac BLOB NOT NULL);
"""
# the floor gateway's pruning (prune()): per shoe the last event removed and its chain hash,
# MAC'd under the shoe key, where verify() starts the chain
_PRUNE_SCHEMA = """
CREATE TABLE IF NOT EXISTS pruned (
    shoe TEXT PRIMARY KEY, upto INTEGER NOT NULL, hash BLOB NOT NULL, at REAL NOT NULL,
    mac BLOB NOT NULL);
"""
_PRUNE_TAG = b"shoectl-pruned\0"
_BODY_JSON = json.JSONEncoder(sort_keys=True)  # json.dumps(body, sort_keys=True), built once


def _prune_mac(key, store_id, shoe, upto, h):
    import hashlib
    import hmac

    return hmac.new(
        key,
        _PRUNE_TAG + codec.encode([bytes(store_id), str(shoe), int(upto), bytes(h)]),
        hashlib.sha256,
    ).digest()


def default_path():
    import platformdirs

    return Path(platformdirs.user_data_dir("shoectl")) / "audit.sqlite"


def _signed(kind, body, payload):
    """(kind, body) as the signed payload carries them (JSON-able); the stored copy when there
    is no payload (a row stored without link metadata). A payload that does not decode gives
    (None, None): `verify` reports it as a bad MAC."""
    if payload is None:
        return kind, body
    try:
        items = codec.decode(bytes(payload))
        return items[0], _jsonable(items[1])
    except (codec.CodecError, IndexError, TypeError, ValueError):
        return None, None


class AuditStore:
    def __init__(self, path=None):
        self.path = Path(path) if path else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.existed = self.path.exists()  # False: created now (hoststate: "the store is gone")
        self._lock = threading.RLock()  # re-entered by store() inside transaction()
        self._batch = 0
        # each shoe's last stored event (eseq, hash), read once, then kept by store(): trusted
        # only inside a transaction that found the file as this connection left it (_seen)
        self._tip = {}
        self._seen = None  # (connection, data_version, total_changes) after our last commit
        self._fresh = False  # in a transaction whose start checked _seen
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        try:
            self._db.executescript(_SCHEMA + _HOST_SCHEMA + _PRUNE_SCHEMA)
        except sqlite3.DatabaseError as e:  # not a database, truncated, damaged header
            self._db.close()
            raise HostStateError(
                self.path,
                "is not a readable SQLite database (%s): restore it "
                "from a backup, or give another --db" % e,
                "store_damaged",
            ) from e

    def close(self):
        self._tip.clear()
        self._db.close()

    def last_eseq(self, shoe):
        with self._lock:
            if self._fresh:
                return self._tip_of(shoe)[0]
            r = self._db.execute("SELECT MAX(eseq) FROM events WHERE shoe=?", (shoe,)).fetchone()
        return r[0] or 0

    def stored_of(self, shoe, eseqs):
        """The set of `eseqs` this store holds for `shoe` (asked 500 at a time)."""
        want = sorted(int(e) for e in eseqs)
        have = set()
        for lo in range(0, len(want), 500):
            part = want[lo : lo + 500]
            with self._lock:
                have.update(
                    r[0]
                    for r in self._db.execute(
                        "SELECT eseq FROM events WHERE shoe=? AND eseq IN (%s)"
                        % ",".join("?" * len(part)),
                        [shoe] + part,
                    )
                )
        return have

    def _tip_of(self, shoe):
        """(eseq, hash) of the shoe's last stored event ((0, GENESIS): none); in a transaction."""
        t = self._tip.get(shoe)
        if t is None:
            r = self._db.execute(
                "SELECT eseq, hash FROM events WHERE shoe=? ORDER BY eseq DESC LIMIT 1", (shoe,)
            ).fetchone()
            t = self._tip[shoe] = (r[0], r[1]) if r else (0, GENESIS)
        return t

    def _hash_of(self, shoe, eseq):
        if eseq == 0:
            return GENESIS
        if self._fresh:
            last, h = self._tip_of(shoe)
            if eseq == last:
                return h
        r = self._db.execute(
            "SELECT hash FROM events WHERE shoe=? AND eseq=?", (shoe, eseq)
        ).fetchone()
        return r[0] if r else None

    def store(self, shoe, eseq, kind, body, meta):
        meta = meta or {}
        with self.transaction():
            before = self._hash_of(shoe, eseq - 1)
            prev = meta.get("prev")
            chain = "gap" if before is None else ("ok" if before == prev else "broken")
            h = meta.get("hash")
            if not self._db.execute(
                "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT (shoe, eseq) DO NOTHING",  # only the key: NOT NULL still raises
                (
                    shoe,
                    eseq,
                    kind,
                    _BODY_JSON.encode(_jsonable(body)),
                    prev,
                    h,
                    meta.get("mac"),
                    meta.get("payload"),
                    chain,
                    time.time(),
                ),
            ).rowcount:
                return "duplicate"
            t = self._tip.get(shoe)
            if t is not None and eseq > t[0]:  # the shoe's new last event
                if type(eseq) is int and (h is None or isinstance(h, (bytes, bytearray))):
                    self._tip[shoe] = (eseq, None if h is None else bytes(h))
                else:  # kept as SQLite stores it: read it back when asked
                    del self._tip[shoe]
        return "new"

    def events(self, shoe=None, kinds=None, since=0):
        q = "SELECT shoe, eseq, kind, body, chain, received, payload FROM events WHERE eseq > ?"
        args = [since]
        if shoe:
            q += " AND shoe=?"
            args.append(shoe)
        q += " ORDER BY shoe, eseq"
        with self._lock:
            rows = self._db.execute(q, args).fetchall()
        out = []
        for s, e, k, b, c, r, p in rows:
            k, body = _signed(k, json.loads(b), p)
            if kinds and k not in kinds:  # the signed kind decides, not the column
                continue
            out.append({"shoe": s, "eseq": e, "kind": k, "body": body, "chain": c, "received": r})
        return out

    def rounds(self, shoe=None, last=100):
        evs = self.events(shoe, kinds=E.OUTCOMES)
        return evs[-last:] if last else evs

    def verify(self, shoe, key):
        """Re-verify every stored event of `shoe`: MAC over the stored payload (it names the
        shoe id, so another shoe's events relabelled as this one's fail), the stored copy
        (kind, body) against the payload, and the chain. Events a shoe sealed under protocol 2
        (their MAC names no shoe id) still verify and are listed in `unbound`; one after an
        event of protocol 3 cannot be genuine and counts as a bad MAC.
        -> {"events", "bad_mac": [eseq], "body_mismatch": [eseq], "broken": [eseq],
            "gaps": [eseq], "unbound": [eseq], "last": eseq, "head": hex}"""
        pruned = self.pruned(shoe, key)
        with self._lock:
            rows = self._db.execute(
                "SELECT eseq, payload, prev, hash, kind, body FROM events "
                "WHERE shoe=? AND eseq>? ORDER BY eseq",
                (shoe, pruned["upto"] if pruned else 0),
            ).fetchall()
        bad, broken, gaps, differ, unbound = [], [], [], [], []
        last_e, last_h, bound_seen = 0, GENESIS, False
        if pruned:  # the chain goes on from the last pruned event's recorded hash
            last_e, last_h = pruned["upto"], pruned["hash"]
        for eseq, payload, prev, h, kind, body in rows:
            try:
                k2, b2, e2, p2, h2, _, form = open_event(payload, key, shoe)
                if form == 2:
                    unbound.append(eseq)
                bound_seen = bound_seen or form == 3
                if e2 != eseq or p2 != prev or h2 != h or (form == 2 and bound_seen):
                    bad.append(eseq)
                elif k2 != kind or _jsonable(b2) != json.loads(body):
                    differ.append(eseq)
            except (LinkError, TypeError, ValueError):
                bad.append(eseq)
            if eseq != last_e + 1:
                gaps.append(eseq)
            elif prev != last_h:
                broken.append(eseq)
            last_e, last_h = eseq, h
        from host_tools import reveal

        return {
            "events": len(rows),
            "bad_mac": bad,
            "body_mismatch": differ,
            "broken": broken,
            "gaps": gaps,
            "unbound": unbound,
            "last": last_e,
            "head": last_h.hex() if last_h else None,
            "pruned": pruned["upto"] if pruned else 0,
            "reveal": reveal.audit(self.events(shoe, since=pruned["upto"] if pruned else 0)),
        }

    # ---- pruning (the floor gateway: host_tools/floor/prune.py) --------------------------------
    def received_before(self, shoe, when):
        """The highest eseq of `shoe` stored before time.time() `when` (0: none)."""
        with self._lock:
            r = self._db.execute(
                "SELECT MAX(eseq) FROM events WHERE shoe=? AND received<?", (shoe, when)
            ).fetchone()
        return r[0] or 0

    def pruned(self, shoe, key=None):
        """The shoe's prune record {upto, hash, at} when it verifies under `key` (or with no key
        given), else None: a record that does not verify is ignored, and verify() then sees
        the removed events as gaps."""
        with self._lock:
            r = self._db.execute(
                "SELECT upto, hash, at, mac FROM pruned WHERE shoe=?", (shoe,)
            ).fetchone()
        if r is None:
            return None
        if key is not None:
            import hmac

            sid = self.store_id()
            if sid is None or not hmac.compare_digest(
                _prune_mac(key, sid, shoe, r[0], bytes(r[1])), bytes(r[3])
            ):
                return None
        return {"upto": r[0], "hash": bytes(r[1]), "at": r[2]}

    def prune(self, shoe, key, upto, keep=64, limit=None):
        """Remove the shoe's events up to `upto` (the caller's: what the floor holds), keeping
        at least its last `keep` events (the host state re-checks the last 32 at each open,
        and its record names the last one), cut back to the end of a round (after its
        round_result or round_void) so no open round loses its commitments, and at most
        `limit` rows at a time. The last removed event's eseq and chain hash are recorded,
        MAC'd under the shoe key: verify() and the chain go on from there. -> rows removed."""
        keep = max(int(keep), 33)
        with self.transaction():
            last = self.last_eseq(shoe)
            top = min(int(upto), last - keep)
            done = self.pruned(shoe, key)
            if done is None and self.pruned(shoe) is not None:
                return 0  # a record that does not verify: left for verify to report
            lo = done["upto"] if done else 0
            if limit:
                top = min(top, lo + int(limit))
            r = self._db.execute(
                "SELECT MAX(eseq) FROM events WHERE shoe=? AND eseq>? AND "
                "eseq<=? AND kind IN ('round_result', 'round_void')",
                (shoe, lo, top),
            ).fetchone()
            top = r[0] if r and r[0] else 0
            if top <= lo:
                return 0
            h = self._hash_of(shoe, top)
            if h is None:
                return 0
            n = self._db.execute(
                "DELETE FROM events WHERE shoe=? AND eseq<=?", (shoe, top)
            ).rowcount
            self._tip.pop(shoe, None)  # never the last event (keep), read again all the same
            sid = self.store_id(create=True)
            self._db.execute(
                "INSERT OR REPLACE INTO pruned VALUES (?,?,?,?,?)",
                (shoe, top, h, time.time(), _prune_mac(key, sid, shoe, top, h)),
            )
        return n

    def compare_live(self, shoe, eseq, head, acked, before=None):
        """The store against what the shoe itself says (its `status`): `eseq` its last event
        number, `head` its chain head (16 bytes), `acked` the highest event a host acknowledged
        (stored). -> list of problems (text); empty when the store ends where the shoe does.
        Rows removed at the end show here: the shoe acknowledged them, the store lacks them.
        Rows above `eseq` received at or after `before` (time.time(): when the status was asked
        for) are events the shoe sent since, not a problem. Call it once the link has delivered
        what the shoe still held (the store reaches `eseq`)."""
        with self._lock:
            last = (
                self._db.execute(
                    "SELECT MAX(eseq) FROM events WHERE shoe=? AND eseq<=?", (shoe, eseq)
                ).fetchone()[0]
                or 0
            )
            ahead = self._db.execute(
                "SELECT MAX(eseq) FROM events WHERE shoe=? AND eseq>? AND received<?",
                (shoe, eseq, before if before is not None else float("inf")),
            ).fetchone()[0]
        problems = []
        if ahead:
            problems.append(
                "the store holds events up to %d, the shoe has only sent %d" % (ahead, eseq)
            )
        elif last < acked:
            problems.append(
                "the store ends at event %d, but the shoe's events up to %d were "
                "acknowledged as stored: rows were removed at the end" % (last, acked)
            )
        elif last < eseq:
            problems.append(
                "the store ends at event %d, the shoe is at %d (not yet delivered)" % (last, eseq)
            )
        else:
            with self._lock:
                got = self._hash_of(shoe, eseq)
            if eseq and got != bytes(head):
                problems.append("the stored chain head at event %d differs from the shoe's" % eseq)
        return problems

    def payloads(self, shoe, since=0, limit=500, received=False):
        """[(eseq, payload)] of `shoe` after eseq `since`, in order: the signed bytes as received
        (with `received`: [(eseq, payload, time.time() when stored)])."""
        with self._lock:
            return self._db.execute(
                "SELECT eseq, payload%s FROM events WHERE shoe=? AND eseq>? "
                "ORDER BY eseq LIMIT ?" % (", received" if received else ""),
                (shoe, since, limit),
            ).fetchall()

    def round_events(self, shoe, rnd):
        """[(kind, body)] of round `rnd`'s round_open, card and reveal events (the signed
        bodies, bytes as hex), in order: what a RoundWatch that starts mid-round loads."""
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, body, payload FROM events WHERE shoe=? AND kind IN (?, ?, ?) "
                "AND json_extract(body, '$.round')=? ORDER BY eseq",
                (shoe, E.ROUND_OPEN, E.CARD, E.REVEAL, rnd),
            ).fetchall()
        out = []
        for k, b, p in rows:
            k, body = _signed(k, json.loads(b), p)
            if k is not None and isinstance(body, dict) and body.get("round") == rnd:
                out.append((k, body))
        return out

    def flag(self, shoe, eseq, kind, rnd, detail):
        """Record an alert about the stored events (a reveal that does not match)."""
        with self._lock:
            self._db.execute(
                "INSERT INTO flags VALUES (?,?,?,?,?,?)",
                (shoe, eseq, kind, rnd, detail, time.time()),
            )
            self._db.commit()

    def flags(self, shoe=None):
        q = "SELECT shoe, eseq, kind, round, detail, raised FROM flags"
        args = ()
        if shoe:
            q += " WHERE shoe=?"
            args = (shoe,)
        with self._lock:
            rows = self._db.execute(q + " ORDER BY rowid", args).fetchall()
        return [dict(zip(("shoe", "eseq", "kind", "round", "detail", "raised"), r)) for r in rows]

    def export(self, fileobj, fmt="jsonl", shoe=None, kinds=None):
        evs = self.events(shoe, kinds)
        if fmt == "jsonl":
            for e in evs:
                fileobj.write(json.dumps(e, sort_keys=True) + "\n")
        elif fmt == "csv":
            w = csv.writer(fileobj)
            w.writerow(["shoe", "eseq", "kind", "chain", "received", "body"])
            for e in evs:
                w.writerow(
                    [
                        e["shoe"],
                        e["eseq"],
                        e["kind"],
                        e["chain"],
                        e["received"],
                        json.dumps(e["body"], sort_keys=True),
                    ]
                )
        else:
            raise ValueError("format must be jsonl or csv")
        return len(evs)

    # ---- host state (host_tools/hoststate.py): integrity, one transaction, the host record ----
    def _commit(self):
        if not self._batch:
            self._db.commit()

    @contextlib.contextmanager
    def transaction(self):
        """store() calls and put_host_record() inside commit once, together (or not at all).
        The outermost one begins an IMMEDIATE transaction at once, so its reads and writes are
        one transaction under one lock: each statement outside one would take SQLite's file
        lock and check the page cache again (3-5 system calls each), and no other connection
        can commit between what is read here and what is written."""
        with self._lock:
            if not self._batch:
                self._begin()
            self._batch += 1
            try:
                yield self
            except BaseException:
                self._batch -= 1
                if not self._batch:
                    self._fresh = False
                    self._tip.clear()  # what the rolled-back store() calls kept is not stored
                    self._db.rollback()
                raise
            self._batch -= 1
            if not self._batch:
                self._fresh = False
                try:
                    self._db.commit()
                except BaseException:
                    self._tip.clear()
                    self._seen = None
                    raise
                if self._seen is not None:  # this transaction's own changes are known
                    self._seen = self._seen[:2] + (self._db.total_changes,)

    def _begin(self):
        """Begin the outermost transaction; the kept last events stay trusted only when nothing
        but this store's own transactions changed the file since the last one: no other
        connection committed (SQLite's data_version, read under the write lock) and this
        connection changed no row outside them (its total_changes)."""
        self._fresh = False
        if self._db.in_transaction:  # one left open by a statement of the caller's: no trust
            self._tip.clear()
            self._seen = None
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            dv = self._db.execute("PRAGMA data_version").fetchone()[0]
        except BaseException:
            self._db.rollback()
            raise
        now = (self._db, dv, self._db.total_changes)
        if now != self._seen:
            self._tip.clear()
        self._seen = now
        self._fresh = True

    def integrity(self, full=False):
        """None, or what SQLite says is wrong with the file: quick_check (every page's
        structure: a damaged page, a truncated file), or with `full` integrity_check (also
        every index against its table; `shoectl verify --shoe`)."""
        try:
            with self._lock:
                rows = self._db.execute(
                    "PRAGMA %s" % ("integrity_check" if full else "quick_check")
                ).fetchall()
        except sqlite3.DatabaseError as e:
            return str(e)
        bad = [r[0] for r in rows if r[0] != "ok"]
        if bad:
            return "; ".join(bad[:3])
        return self._schema_problem()

    def _schema_problem(self):
        """None, or which table's definition is not the one this program creates (a flipped
        byte in the schema's text passes quick_check and breaks every query naming a column)."""
        ref = sqlite3.connect(":memory:")
        try:
            ref.executescript(_SCHEMA + _HOST_SCHEMA + _PRUNE_SCHEMA)
            want = dict(ref.execute("SELECT name, sql FROM sqlite_master WHERE type='table'"))
        finally:
            ref.close()
        try:
            with self._lock:
                have = dict(
                    self._db.execute(
                        "SELECT name, sql FROM sqlite_master WHERE type='table'"
                    ).fetchall()
                )
        except sqlite3.DatabaseError as e:
            return str(e)
        wrong = sorted(n for n in set(want) | set(have) if want.get(n) != have.get(n))
        return (
            "the schema of table %s is not the audit store's" % ", ".join(wrong) if wrong else None
        )

    def store_id(self, create=False):
        """This store's random 16-byte identity (the counter floor file names it; `create`: make
        one if it has none yet), or None."""
        with self._lock:
            r = self._db.execute("SELECT value FROM store_meta WHERE key='id'").fetchone()
            if r is None and create:
                r = (os.urandom(16),)
                self._db.execute("INSERT INTO store_meta VALUES ('id', ?)", r)
                self._commit()
        return (
            None if r is None else bytes(r[0]) if isinstance(r[0], bytes) else str(r[0]).encode()
        )

    def used(self):
        """True when the store holds any event or host record."""
        with self._lock:
            return bool(
                self._db.execute(
                    "SELECT 1 FROM events UNION ALL SELECT 1 FROM host_record LIMIT 1"
                ).fetchone()
            )

    def hash_at(self, shoe, eseq):
        """The stored chain hash of event `eseq` (GENESIS for 0), or None."""
        with self._lock:
            return self._hash_of(shoe, eseq)

    def host_record(self, shoe):
        """The shoe's host record as stored ({gen, ctr, eseq, head, base, mac}), or None."""
        with self._lock:
            r = self._db.execute(
                "SELECT gen, ctr, eseq, head, base, mac FROM host_record WHERE shoe=?", (shoe,)
            ).fetchone()
        return None if r is None else dict(zip(("gen", "ctr", "eseq", "head", "base", "mac"), r))

    def put_host_record(self, shoe, rec):
        with self._lock:
            self._db.execute(
                "INSERT INTO host_record VALUES (?,?,?,?,?,?,?) ON CONFLICT (shoe) DO UPDATE "
                "SET gen=excluded.gen, ctr=excluded.ctr, eseq=excluded.eseq, "
                "head=excluded.head, base=excluded.base, mac=excluded.mac",
                (shoe, rec["gen"], rec["ctr"], rec["eseq"], rec["head"], rec["base"], rec["mac"]),
            )
            self._commit()

    def tail_problems(self, shoe, key, since, link_first=True):
        """Re-check the shoe's events after eseq `since`: each payload's MAC, the stored copy and
        hash against it, and the link to the event before (when that one is held; a row that
        arrived after a gap says so in its chain column; the first one's only if link_first).
        -> list of problems (text)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT eseq, payload, prev, hash, kind, body, chain FROM "
                "events WHERE shoe=? AND eseq>? ORDER BY eseq",
                (shoe, since),
            ).fetchall()
            before = self._hash_of(shoe, since) if since else GENESIS
        problems = []
        last_e, last_h = since, before
        for i, (eseq, payload, prev, h, kind, body, chain) in enumerate(rows):
            try:
                k2, b2, e2, p2, h2, _, _ = open_event(payload, key, shoe)
                if (e2, p2, h2) != (eseq, prev, h):
                    problems.append("event %d does not match its signed payload" % eseq)
                elif k2 != kind or _jsonable(b2) != json.loads(body):
                    problems.append("event %d was edited" % eseq)
            except (LinkError, TypeError, ValueError):
                problems.append("event %d fails its MAC" % eseq)
            if i == 0 and not link_first:
                pass
            elif eseq != last_e + 1 or last_h is None:
                if chain != "gap":
                    problems.append("events before %d were removed" % eseq)
            elif prev != last_h:
                problems.append("event %d does not follow the one before (broken chain)" % eseq)
            last_e, last_h = eseq, h
        return problems

    def add_acceptance(self, shoe, record, mac):
        """Keep a supervisor's acceptance of a shoe (`shoectl trust --accept`): JSON + MAC."""
        with self._lock:
            self._db.execute(
                "INSERT INTO acceptances VALUES (?,?,?,?)", (shoe, time.time(), record, mac)
            )
            self._commit()

    def acceptances(self, shoe):
        """[(at, record JSON text, mac)] of the shoe, oldest first."""
        with self._lock:
            return self._db.execute(
                "SELECT at, record, mac FROM acceptances WHERE shoe=? ORDER BY rowid", (shoe,)
            ).fetchall()
