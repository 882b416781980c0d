"""The host's own state about each shoe, beside its audit store, and why the host refuses a
shoe when that state is damaged: host state fails closed (docs/hoststate.md).

For an audit store `<db>` the host keeps three files:

    <db>                    the SQLite audit store: the events, and each shoe's host record
    <db>.counters.json      the counter floor file: the same host record of each shoe, outside
                            the store (a rollback must now replace both files, consistently)
    <db>.lock               flock()ed by the one host process that uses the store; names its PID

A shoe's host record: `gen` (+1 at every write), `ctr` (the highest command counter the shoe was
seen to accept: a shoe below it was rolled back and would accept captured commands again),
`eseq`/`head` (the store's last event of that shoe and its chain hash), `base` (the event a
supervisor accepted the store at), MAC'd under the shoe key with a tag of its own and bound to
the store's id and the shoe id. The store's copy is written in the same SQLite transaction as
the events it describes; the file is written after it (temporary file, fsync, rename, fsync of
the directory), so the file is the store's generation or at most one behind (a crash between).

    hs = HostState(store)            # the floor file beside it (or path=)
    hs.open()                        # lock, the store's integrity, the file: HostStateError
    floor = hs.check(shoe, key)      # at each handshake: the shoe's counter floor, or refuse
    hs.commit(shoe, key, ctr, events)   # events + record in one transaction, then the file
    hs.inspect(shoe, key)            # every problem, not only the first (shoectl trust)
    hs.accept(shoe, key, ctr, ...)   # the supervisor's acceptance (shoectl trust --accept)
    hs.close()

Everything that is wrong is a HostStateError: one line naming the file, what is wrong and a
reason code (`.reason`). Nothing is ever recreated silently; only `shoectl trust --accept`, with
the supervisor key, makes a refused shoe acceptable again.
"""

import fcntl
import hashlib
import hmac
import json
import os
import sqlite3
import sys
import time
from pathlib import Path

from host_tools.errors import ShoeError
from shoe.link import codec
from shoe.link.message import GENESIS

FORMAT = "shoectl counter floor"
VERSION = 2
_TAG = b"shoectl-host-record\x00"  # not a prefix of any link tag (they start "SHOE")
_ACCEPT_TAG = b"shoectl-acceptance\x00"
TAIL = 32  # events re-checked at each open (`shoectl verify --shoe` checks them all)
_FIELDS = ("base", "ctr", "eseq", "gen", "head", "mac")
# what a damaged store raises when read: a bad schema, a value of the wrong type, bad UTF-8
_UNREADABLE = (sqlite3.Error, TypeError, ValueError, KeyError, IndexError)

# reason codes: docs/hoststate.md has what each means and what to do
REASONS = {
    "store_damaged": "the audit store is damaged",
    "store_locked": "another host process uses the audit store",
    "store_missing": "the audit store the floor file belongs to is gone",
    "store_record": "the audit store's host record is missing or does not verify",
    "store_old": "the audit store is older than the counter floor file",
    "store_truncated": "events were removed from the end of the audit store",
    "store_tail": "the audit store's last events do not verify",
    "store_fork": "the shoe's events do not follow the stored ones (another log)",
    "floor_damaged": "the counter floor file is damaged",
    "floor_legacy": "the counter floor file has the old unauthenticated format",
    "floor_version": "the counter floor file has an unknown version",
    "floor_foreign": "the counter floor file belongs to another audit store",
    "floor_missing": "the counter floor file, or its entry for the shoe, is missing",
    "floor_mac": "the counter floor file's entry does not verify",
    "floor_old": "the counter floor file is older than the audit store",
    "floor_conflict": "the counter floor file and the audit store disagree",
    "floor_write": "the counter floor file cannot be written",
}


class HostStateError(ShoeError):
    """The host's state about a shoe is damaged: one line naming the file, `.reason` a code."""

    def __init__(self, path, what, reason):
        self.path = str(path)
        self.what = " ".join(str(what).split())  # one line, whatever SQLite said
        self.reason = reason
        ShoeError.__init__(self, "%s %s [%s]" % (self.path, self.what, reason))


_NO_TRUST = ("store_locked", "store_damaged", "floor_write")


def refusal(err, shoe=None):
    """The one line a command prints when the host refuses a shoe for its own state."""
    hint = (
        ""
        if getattr(err, "reason", None) in _NO_TRUST
        else ("; a supervisor can accept it again: shoectl trust --accept (docs/hoststate.md)")
    )
    return "host state: refusing %s: %s%s" % ("shoe %s" % shoe if shoe else "the shoe", err, hint)


def record_mac(key, store_id, shoe, rec):
    """HMAC-SHA256 under the shoe key over the record, this store's id and the shoe id."""
    core = codec.encode(
        [
            VERSION,
            bytes(store_id),
            str(shoe),
            rec["gen"],
            rec["ctr"],
            rec["eseq"],
            bytes(rec["head"]),
            rec["base"],
        ]
    )
    return hmac.new(key, _TAG + core, hashlib.sha256).digest()


def acceptance_mac(supervisor_key, store_id, shoe, text):
    return hmac.new(
        supervisor_key,
        _ACCEPT_TAG + codec.encode([bytes(store_id), str(shoe), text]),
        hashlib.sha256,
    ).digest()


def _valid(key, store_id, shoe, rec):
    return rec is not None and hmac.compare_digest(
        record_mac(key, store_id, shoe, rec), bytes(rec["mac"])
    )


def atomic_write(path, data):
    """Replace `path` by `data` so that it is the old or the new content after a crash at any
    instant: a temporary file in the same directory, written and flushed to the disk (fsync;
    F_FULLFSYNC on macOS, whose fsync leaves the drive's cache), renamed over the file, and
    the directory flushed so the rename itself is on the disk."""
    path = str(path)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        _flush(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        _flush(dfd)
    finally:
        os.close(dfd)


_FULLFSYNC = getattr(fcntl, "F_FULLFSYNC", None)  # macOS only


def _flush(fd):
    if _FULLFSYNC is not None:
        try:
            fcntl.fcntl(fd, _FULLFSYNC)
            return
        except OSError:
            pass
    os.fsync(fd)


class HeldLock:
    """An exclusive flock() on a file that names its holder (a JSON record: PID, command, since),
    for the process that is refused. The kernel drops the lock when the process dies, however
    it dies. StoreLock (here) and host_tools/link/portlock.PortLock are the two kinds."""

    def __init__(self, path, mode=0o644):
        self.path = str(path) if path is not None else None
        self.mode = mode
        self.fd = None

    def take(self, record):
        """True once held, with `record` written into the file; False if another process holds
        it (then record() names that one)."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, self.mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(record).encode() + b"\n")
        self.fd = fd
        return True

    def record(self, wait_s=0.5):
        """The holder's record as the file says it ({} if unreadable). A holder that has just
        taken the lock writes its record a moment later (take()): an empty or partial file is
        read again for up to `wait_s` before the holder counts as unknown."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                with open(self.path) as f:
                    h = json.loads(f.read())
                if isinstance(h, dict):
                    return h
            except (OSError, ValueError):
                pass
            if time.monotonic() >= deadline:
                return {}
            time.sleep(0.01)

    def release(self):
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)
            except OSError:
                pass
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None


class StoreLock(HeldLock):
    """Held while a host process uses the audit store (`<db>.lock`)."""

    def acquire(self, db):
        if not self.take(
            {
                "pid": os.getpid(),
                "cmd": " ".join(sys.argv[:3])[:120],
                "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
        ):
            raise HostStateError(
                db,
                "is in use by another host process (%s): one process per "
                "audit store; stop it, or give this one another --db" % self.holder(),
                "store_locked",
            ) from None

    def holder(self):
        h = self.record()
        if "pid" not in h:
            return "PID unknown"
        return "PID %s, %s, since %s" % (h["pid"], h.get("cmd"), h.get("since"))


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))  # json.dumps's, built once


def _canonical(doc):
    return (_CANONICAL.encode(doc) + "\n").encode()


def _is_uint(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63


def _hexfield(v, n):
    try:
        b = bytes.fromhex(v) if isinstance(v, str) else None
    except ValueError:
        return None
    return b if b is not None and len(b) == n and v == b.hex() else None


def parse_floor(raw):
    """The floor file's bytes -> {"store": bytes, "shoes": {shoe: record}}; (reason, what) on any
    damage. Only the canonical encoding is accepted, so every changed byte is a problem."""
    if not raw:
        return ("floor_damaged", "is empty (truncated)")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return ("floor_damaged", "is not valid JSON (damaged or truncated)")
    if (
        isinstance(doc, dict)
        and "format" not in doc
        and doc
        and all(_is_uint(v) for v in doc.values())
    ):
        return ("floor_legacy", "has the old unauthenticated format of an earlier shoectl")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return ("floor_damaged", "is not a counter floor file")
    if doc.get("version") != VERSION:
        return (
            "floor_version",
            "has version %r; this shoectl reads version %d" % (doc.get("version"), VERSION),
        )
    if _canonical(doc) != raw:
        return ("floor_damaged", "was altered (not as shoectl writes it)")
    store = _hexfield(doc.get("store"), 16)
    shoes = doc.get("shoes")
    if (
        set(doc) != {"format", "version", "store", "shoes"}
        or store is None
        or not isinstance(shoes, dict)
    ):
        return ("floor_damaged", "has a damaged structure")
    out = {}
    for shoe, e in shoes.items():
        if not isinstance(e, dict) or set(e) != set(_FIELDS):
            return ("floor_damaged", "has a damaged entry for shoe %r" % shoe)
        rec = {k: e[k] for k in ("gen", "ctr", "eseq", "base")}
        rec["head"], rec["mac"] = _hexfield(e["head"], 16), _hexfield(e["mac"], 32)
        if not all(_is_uint(rec[k]) for k in ("gen", "ctr", "eseq", "base")) or None in (
            rec["head"],
            rec["mac"],
        ):
            return ("floor_damaged", "has a damaged entry for shoe %r" % shoe)
        out[shoe] = rec
    return {"store": store, "shoes": out}


def _dump(store_id, shoes):
    return _canonical(
        {
            "format": FORMAT,
            "version": VERSION,
            "store": store_id.hex(),
            "shoes": {
                s: {
                    "gen": r["gen"],
                    "ctr": r["ctr"],
                    "eseq": r["eseq"],
                    "head": bytes(r["head"]).hex(),
                    "base": r["base"],
                    "mac": bytes(r["mac"]).hex(),
                }
                for s, r in shoes.items()
            },
        }
    )


class HostState:
    def __init__(self, store, path=None):
        self.store = store
        self.path = Path(path) if path else Path(str(store.path) + ".counters.json")
        self.lock = StoreLock(str(store.path) + ".lock")
        self.opened = False
        self.problems = []  # store-wide (HostStateError), found by open()
        self.floor = None  # the parsed floor file, or None (missing or damaged)
        self.store_id = None
        self._committed = {}  # shoe -> the record this process last wrote or checked

    def _err(self, where, reason, what):
        return HostStateError(self.store.path if where == "store" else self.path, what, reason)

    # ---- open / close -----------------------------------------------------------------------
    def open(self, strict=True):
        """Take the lock, check the store's integrity and read the floor file. strict: raise the
        first problem (HostStateError); else keep them in `problems` (shoectl trust)."""
        self.lock.acquire(self.store.path)  # raises store_locked, whatever `strict` says
        self.opened = True
        self.problems = []
        bad = self.store.integrity()
        if not bad:
            try:  # a store of an earlier shoectl gets its identity now
                self.store_id = self.store.store_id(create=True)
            except _UNREADABLE as e:
                bad = str(e)
        if bad:
            self.problems.append(self._damaged(bad))
        self._read_floor(bind=not bad)  # a damaged store: the file's floor still counts
        if strict and self.problems:
            self.close()
            raise self.problems[0]
        return self.problems

    def _read_floor(self, bind=True):
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            if bind and self.store.used():
                self.problems.append(
                    self._err(
                        "floor",
                        "floor_missing",
                        "is missing, but the audit store %s shows it was "
                        "used: it was deleted or the store was copied without it"
                        % self.store.path,
                    )
                )
            return
        except OSError as e:
            self.problems.append(
                self._err("floor", "floor_damaged", "cannot be read (%s)" % e.strerror)
            )
            return
        doc = parse_floor(raw)
        if isinstance(doc, tuple):
            self.problems.append(self._err("floor", *doc))
            return
        self.floor = doc
        if bind and doc["store"] != self.store_id:
            if not self.store.existed:
                self.problems.append(
                    self._err(
                        "store",
                        "store_missing",
                        "did not exist: the "
                        "counter floor file %s belongs to an audit store "
                        "that is gone" % self.path,
                    )
                )
            else:
                self.problems.append(
                    self._err(
                        "floor",
                        "floor_foreign",
                        "belongs to another "
                        "audit store than %s (swapped or copied)" % self.store.path,
                    )
                )

    def _damaged(self, why):
        return self._err(
            "store",
            "store_damaged",
            "is damaged (SQLite: %s): restore it from a backup, or give another --db" % why,
        )

    def close(self):
        self.lock.release()
        self.opened = False

    # ---- the check at each handshake -------------------------------------------------------
    def inspect(self, shoe, key):
        """Everything about `shoe`'s host state: {"problems": [HostStateError], "record",
        "entry" (valid ones or None), "store_last", "floor" (counter floor: the highest
        verified), "gen", "stale_file" (the file is one write behind: rewrite it)}."""
        problems = list(self.problems)
        rep = {
            "shoe": shoe,
            "problems": problems,
            "record": None,
            "entry": None,
            "store_last": 0,
            "floor": 0,
            "gen": 0,
            "stale_file": False,
        }
        if any(p.reason == "store_damaged" for p in problems):
            ent = self.floor["shoes"].get(shoe) if self.floor else None
            if ent is not None and _valid(key, self.floor["store"], shoe, ent):
                rep.update(entry=ent, floor=ent["ctr"], gen=ent["gen"])
            return rep
        try:
            self._inspect(shoe, key, rep)
        except _UNREADABLE as e:
            problems.append(self._damaged("%s: %s" % (type(e).__name__, e)))
        return rep

    def _inspect(self, shoe, key, rep):
        st, problems = self.store, rep["problems"]
        sid = self.store_id
        rec = st.host_record(shoe)
        last = st.last_eseq(shoe)
        rep["store_last"] = last
        if rec is not None and not _valid(key, sid, shoe, rec):
            problems.append(
                self._err(
                    "store",
                    "store_record",
                    "holds a record of shoe %s that "
                    "does not verify (edited, or written under another key)" % shoe,
                )
            )
            rec = None
        elif rec is None and last:
            problems.append(
                self._err(
                    "store",
                    "store_record",
                    "holds events of shoe %s but no "
                    "host record (an earlier shoectl, or it was removed)" % shoe,
                )
            )
        ent = self.floor["shoes"].get(shoe) if self.floor else None
        if ent is not None and not _valid(key, self.floor["store"], shoe, ent):
            problems.append(
                self._err(
                    "floor",
                    "floor_mac",
                    "has an entry for shoe %s that does "
                    "not verify (edited, or another shoe's)" % shoe,
                )
            )
            ent = None
        elif ent is None and self.floor is not None and (rec is not None or last):
            problems.append(
                self._err(
                    "floor",
                    "floor_missing",
                    "has no entry for shoe %s, which "
                    "the audit store shows was used (an older or another "
                    "file)" % shoe,
                )
            )
        rep["record"], rep["entry"] = rec, ent
        rep["floor"] = max(r["ctr"] for r in (rec, ent, {"ctr": 0}) if r is not None)
        rep["gen"] = max(r["gen"] for r in (rec, ent, {"gen": 0}) if r is not None)
        paired = self.floor is not None and self.floor["store"] == self.store_id
        if not paired:
            pass  # a foreign file's valid entry still counts for the floor, nothing else
        elif rec is not None and ent is not None:
            if ent["gen"] > rec["gen"]:
                problems.append(
                    self._err(
                        "store",
                        "store_old",
                        "is older than the counter floor "
                        "file %s (generation %d < %d): restored from an older "
                        "copy, or its record edited" % (self.path, rec["gen"], ent["gen"]),
                    )
                )
            elif ent["gen"] < rec["gen"] - 1:
                problems.append(
                    self._err(
                        "floor",
                        "floor_old",
                        "is older than the audit store "
                        "(generation %d < %d): restored from an older copy"
                        % (ent["gen"], rec["gen"]),
                    )
                )
            elif (
                ent["gen"] == rec["gen"]
                and ent != rec
                or ent["gen"] < rec["gen"]
                and (ent["ctr"] > rec["ctr"] or ent["eseq"] > rec["eseq"])
            ):
                problems.append(
                    self._err(
                        "floor",
                        "floor_conflict",
                        "and the audit store hold "
                        "different records of shoe %s (two writers at once?)" % shoe,
                    )
                )
            else:
                rep["stale_file"] = ent["gen"] < rec["gen"]
        elif ent is not None and rec is None and not last:
            problems.append(
                self._err(
                    "store",
                    "store_record",
                    "has lost every trace of shoe %s "
                    "(the counter floor file has generation %d)" % (shoe, ent["gen"]),
                )
            )
        if rec is not None:
            if last < rec["eseq"]:
                problems.append(
                    self._err(
                        "store",
                        "store_truncated",
                        "ends at event %d of shoe "
                        "%s, its record says %d: events were removed" % (last, shoe, rec["eseq"]),
                    )
                )
            elif last > rec["eseq"]:
                problems.append(
                    self._err(
                        "store",
                        "store_record",
                        "holds events of shoe %s "
                        "after its record (%d > %d): added outside shoectl"
                        % (shoe, last, rec["eseq"]),
                    )
                )
            elif st.hash_at(shoe, last) != bytes(rec["head"]):
                problems.append(
                    self._err(
                        "store",
                        "store_tail",
                        "holds an event %d of shoe %s that is not the one recorded" % (last, shoe),
                    )
                )
            since = max(rec["base"], last - TAIL)  # not linked to the accepted base event
            tail = st.tail_problems(shoe, key, since, link_first=since > rec["base"] or not since)
            if tail:
                problems.append(
                    self._err(
                        "store",
                        "store_tail",
                        "does not verify at its end: "
                        "%s%s" % ("; ".join(tail[:3]), " ..." if len(tail) > 3 else ""),
                    )
                )
        return rep

    def check(self, shoe, key):
        """The shoe's counter floor; HostStateError if anything about it is wrong. Brings a
        file that is one write behind the store (a crash between the two writes) up to date."""
        rep = self.inspect(shoe, key)
        if rep["problems"]:
            raise rep["problems"][0]
        rec = rep["record"]
        if rec is not None and rep["stale_file"]:
            self._write_file(shoe, rec)
        self._committed[shoe] = rec
        return rep["floor"]

    # ---- writing ----------------------------------------------------------------------------
    def commit(self, shoe, key, ctr, events=()):
        """Store `events` [(kind, body, eseq, meta)] and the shoe's new record (ctr: the counter
        floor seen now) in ONE transaction, then the floor file. Nothing new: nothing written.
        Only for a shoe check() passed in this process."""
        if shoe not in self._committed:
            raise HostStateError(self.path, "was not checked for shoe %s" % shoe, "floor_conflict")
        old = self._committed[shoe]
        if not events and old is not None and ctr <= old["ctr"]:
            return old
        if not events and old is None and not ctr:
            return None
        with self.store.transaction():
            for kind, body, eseq, meta in events:
                self._follows(shoe, eseq, meta)
                self.store.store(shoe, eseq, kind, body, meta)
            rec = self._record(
                shoe,
                key,
                max(ctr, old["ctr"] if old else 0),
                old["gen"] if old else self._gen(shoe),
                old["base"] if old else 0,
            )
            self.store.put_host_record(shoe, rec)
        self._write_file(shoe, rec)
        self._committed[shoe] = rec
        return rec

    def _follows(self, shoe, eseq, meta):
        """An event must chain onto the stored one before it (when that one is held): a shoe
        whose log forked from the store's (a replaced journal that caught up with the stored
        event numbers) is refused before anything of it is stored or acknowledged."""
        before = self.store.hash_at(shoe, eseq - 1)
        prev = (meta or {}).get("prev")
        if before is not None and prev is not None and bytes(prev) != bytes(before):
            raise HostStateError(
                self.store.path,
                "holds event %d of shoe %s, and the shoe's "
                "event %d does not follow it: the shoe's log is another one "
                "(its journal was replaced?)" % (eseq - 1, shoe, eseq),
                "store_fork",
            )

    def _gen(self, shoe):
        ent = self.floor["shoes"].get(shoe) if self.floor else None
        return ent["gen"] if ent else 0

    def _record(self, shoe, key, ctr, gen, base):
        last = self.store.last_eseq(shoe)
        rec = {
            "gen": gen + 1,
            "ctr": ctr,
            "eseq": last,
            "head": self.store.hash_at(shoe, last) or GENESIS,
            "base": base,
        }
        rec["mac"] = record_mac(key, self.store_id, shoe, rec)
        return rec

    def _write_file(self, shoe, rec):
        if self.floor is None or self.floor["store"] != self.store_id:
            self.floor = {"store": self.store_id, "shoes": {}}
        shoes = dict(self.floor["shoes"])
        shoes[shoe] = rec
        try:
            atomic_write(self.path, _dump(self.store_id, shoes))
        except OSError as e:
            raise HostStateError(
                self.path,
                "cannot be written (%s): the host stops before "
                "acknowledging anything" % e.strerror,
                "floor_write",
            ) from None
        self.floor = {"store": self.store_id, "shoes": shoes}

    def accept(self, shoe, key, ctr, supervisor_key, details):
        """A supervisor accepts the shoe (shoectl trust --accept): the store as it is now (the
        end-of-store checks start after its last event), the counter floor `ctr`, a new
        generation above every one seen; the acceptance (details: JSON-able, who/what/when)
        kept in the store under a MAC with the supervisor key. A damaged or foreign floor file
        is replaced (its other shoes, if any, then need their own acceptance)."""
        if any(p.reason == "store_damaged" for p in self.problems):
            raise self.problems[0]
        rep = self.inspect(shoe, key)
        gen = rep["gen"]  # the verified ones: both copies get the new generation
        text = json.dumps(details, sort_keys=True, default=str)
        with self.store.transaction():
            last = self.store.last_eseq(shoe)
            rec = self._record(shoe, key, max(ctr, rep["floor"]), gen, last)
            self.store.put_host_record(shoe, rec)
            self.store.add_acceptance(
                shoe, text, acceptance_mac(supervisor_key, self.store_id, shoe, text)
            )
        if self.floor is not None and any(p.reason.startswith("floor_") for p in self.problems):
            self.floor = None  # damaged/foreign/legacy: start the file again
        self._write_file(shoe, rec)
        self.problems = [
            p
            for p in self.problems
            if not p.reason.startswith("floor_") and p.reason != "store_missing"
        ]
        self._committed[shoe] = rec
        return rec

    def acceptances(self, shoe, supervisor_key=None):
        """[(time, details dict, mac_ok or None)] of the shoe's acceptances, oldest first."""
        out = []
        for at, text, mac in self.store.acceptances(shoe):
            ok = None
            if supervisor_key and self.store_id:
                ok = hmac.compare_digest(
                    acceptance_mac(supervisor_key, self.store_id, shoe, text), bytes(mac)
                )
            try:
                d = json.loads(text)
            except ValueError:
                d = {"damaged": text[:60]}
            out.append((at, d, ok))
        return out
