"""The shoe's power-loss-safe journal: table snapshot, counters, latched errors, the outbox of
unacknowledged events (it is the Endpoint's store), the hash-chain head and the last 100 rounds.

    j = Journal(root)                 # opens/creates ROOT/journal.log, recovers, counts a boot
    j.state, j.errors, j.boot         # restored values (state None on a fresh shoe)
    j.save_state(obj)                 # after every table event (skipped if unchanged)
    j.set_errors(list_of_errors)      # latched errors (survive resets until acknowledged)
    j.add_round(no, kind, body)       # a round_result / round_void for recall (last 100 kept)
    j.round(no) / j.round_numbers()   # recall
    Endpoint("shoe", key, store=j)    # ctr, eseq, chain, outbox: see shoe.link.store
The outbox lives in one preallocated ring (outbox.py): `outbox_bytes` must not shrink between
boots of the same journal.

Files in ROOT: journal.log (append-only records, see log.py), journal.log.new (a compaction in
progress), rounds.0 / rounds.1 (two segments of at most ROUNDS_PER_SEGMENT round records: the
older one is emptied when the newer one is full, so at least the last 100 rounds remain; a round
record is [count, round_no, kind, body], count = journal-wide order).
Record payloads are codec-encoded lists whose first item is a tag:
    ["B", boot]                 boot counter          ["S", state]              table snapshot
    ["C", ctr]                  command accepted      ["E", errors]             latched errors
    ["O", [[eseq, payload, head], ...], state|None]   durable messages (+ the state they lead to)
    ["A", upto, ctr]            host acked <= upto
    ["X", {...}]                compaction snapshot (counters, state, errors), followed by the
                                outbox as "O" records and a final ["Z"] marking it complete
Recovery replays the log in order and stops at the first bad record (a torn write); if anything
was discarded, or the log exceeds `max_bytes`, it is compacted (atomic replace by rename), so the
log stays bounded and a torn tail never hides later appends. Every write is one record + flush;
`writes` and `bytes_written` count them (flash wear figure).
"""
import array
import hashlib

from micropython import const

from shoe.journal import log
from shoe.journal.outbox import Outbox
from shoe.link import codec

ROUNDS_PER_SEGMENT = const(100)
GENESIS = bytes(16)  # the hash-chain head before the first event (= shoe.link.message.GENESIS)


class JournalError(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class Journal:
    def __init__(self, root, max_bytes=32768, outbox_limit=48, outbox_bytes=4096):
        self.root = root
        self.path = root + "/journal.log"
        self.max_bytes = max_bytes
        self.writes = 0
        self.bytes_written = 0
        self.recovered_torn = 0
        self.compactions = 0
        self.state = None
        self.errors = []
        self.boot = 0
        self.ctr = 0
        self.eseq = 0
        self.chain = GENESIS
        self._out = Outbox(outbox_bytes, outbox_limit)
        self._state_digest = None
        self._app = None
        self._dirty = False
        try:
            import os
            os.mkdir(root)  # a fresh board: create the state directory
        except OSError:
            pass
        self._recover()
        self._rounds_open()
        self.boot += 1
        self._append(["B", self.boot])

    # ---- recovery and compaction ----------------------------------------------------------
    def _recover(self):
        new = self.path + ".new"
        if log.exists(new):
            complete = False
            for p in log.Scan(new):
                complete = p == b"\x81aZ"
            if complete:  # a compaction finished writing but the rename did not happen
                log.remove(self.path)
                import os
                os.rename(new, self.path)
            else:
                log.remove(new)
        scan = log.Scan(self.path)
        for p in scan:
            try:
                self._replay(codec.decode(p))
            except Exception:  # a record that passed its CRC but does not make sense
                scan.torn = True
                break
        if scan.torn:
            self.recovered_torn += 1
        self._size = scan.good_end
        if scan.torn or scan.good_end > self.max_bytes:
            self.compact()

    def _replay(self, r):
        t = r[0]
        if t == "O":
            for eseq, payload, head in r[1]:
                self._out.add(eseq, payload)
                self.eseq = eseq
                self.chain = head
            if r[2] is not None:
                self.state = r[2]
                self._state_digest = None
        elif t == "A":
            self._prune(r[1])
            self.ctr = r[2]
        elif t == "C":
            self.ctr = r[1]
        elif t == "S":
            self.state = r[1]
            self._state_digest = None
        elif t == "E":
            self.errors = r[1]
        elif t == "B":
            self.boot = r[1]
        elif t == "X":
            d = r[1]
            self.ctr = d["ctr"]
            self.eseq = d["eseq"]
            self.chain = d["chain"]
            self.boot = d["boot"]
            self.state = d["state"]
            self.errors = d["errors"]
            self._out.clear()
        # "Z" and unknown tags: nothing to restore

    def _snapshot(self):
        yield codec.encode(["X", {"ctr": self.ctr, "eseq": self.eseq, "chain": self.chain,
                                  "boot": self.boot, "state": self.state, "errors": self.errors}])
        ob = self._out
        for i in range(ob.count):
            yield codec.encode(["O", [[ob.first + i, ob.get(ob.first + i), self.chain]], None])
        yield codec.encode(["Z"])

    def compact(self):
        """Rewrite the log as one snapshot (atomic rename); bounded size from here on."""
        if self._app is not None:
            self._app.close()
            self._app = None
        w, b = log.rewrite(self.path, self._snapshot())
        self.writes += w
        self.bytes_written += b
        self._size = b
        self._dirty = False
        self.compactions += 1

    def _append(self, record):
        self._app_record(codec.encode(record))

    def close(self):
        if self._app is not None:
            self._app.close()
            self._app = None
        if self._rf is not None:
            self._rf.close()
            self._rf = None

    # ---- application state ----------------------------------------------------------------
    def save_state(self, obj):
        """Journal the table snapshot (codec types only). Returns False if it was unchanged."""
        enc = codec.encode(obj)
        d = hashlib.sha256(enc).digest()
        if d == self._state_digest:
            return False
        self._app_record(b"\x82aS" + enc)
        self.state = obj
        self._state_digest = d
        return True

    def _app_record(self, payload):
        # compact BEFORE appending: the snapshot is the state up to the previous record, and the
        # new record follows it (memory is updated by the caller after the write)
        if self._dirty or self._size + len(payload) + log.HEAD > self.max_bytes:
            self.compact()  # also after a failed write: rewrite without its torn bytes
        if self._app is None:
            self._app = log.Appender(self.path)
        try:
            self._app.append(payload)
        except Exception:  # a write that failed part way (flash full, I/O error): the file may
            self._dirty = True  # end in a torn record that would hide later appends
            self._app.close()
            self._app = None
            raise
        self.writes += 1
        self.bytes_written += len(payload) + log.HEAD
        self._size += len(payload) + log.HEAD

    def set_errors(self, errors):
        self._append(["E", errors])
        self.errors = errors

    # ---- the Endpoint's store interface ---------------------------------------------------
    def set_ctr(self, ctr):
        self._append(["C", ctr])
        self.ctr = ctr

    def outbox_add(self, items, state=None):
        """Durable messages [(eseq, payload, head)] (+ the app state) in ONE record."""
        if not self._out.fits_all([len(it[1]) for it in items]):
            raise JournalError("outbox_full")
        if state is not None:
            enc_state = codec.encode(state)
        self._append(["O", [[e, p, h] for e, p, h in items], state])
        for eseq, payload, head in items:
            self._out.add(eseq, payload)
            self.eseq = eseq
            self.chain = head
        if state is not None:
            self.state = state
            self._state_digest = hashlib.sha256(enc_state).digest()

    def outbox_ack(self, upto, ctr):
        self._append(["A", upto, ctr])
        self._prune(upto)
        self.ctr = ctr

    def _prune(self, upto):
        self._out.prune(upto)

    def outbox_first(self):
        return self._out.first if self._out.count else self.eseq + 1

    def payload(self, eseq):
        return self._out.get(eseq)

    def outbox(self):
        return self._out.items()

    def outbox_room(self):
        return self._out.room()

    # ---- rounds: the last 100 for recall --------------------------------------------------
    def _seg(self, i):
        return self.root + "/rounds." + str(i)

    def _rounds_open(self):
        self._rf = None
        self._rdirty = False
        # round numbers held in each segment, oldest first (fixed arrays: no heap growth)
        self._nums = [array.array("i", bytes(4 * ROUNDS_PER_SEGMENT)) for _ in (0, 1)]
        self._n = [0, 0]
        self._last = [0, 0]  # journal-wide count of the newest round record in each segment
        for i in (0, 1):
            scan = log.Scan(self._seg(i))
            for p in scan:
                try:
                    r = codec.decode(p)
                    if self._n[i] >= ROUNDS_PER_SEGMENT:
                        raise ValueError
                    self._last[i] = r[0]
                    self._nums[i][self._n[i]] = r[1]
                    self._n[i] += 1
                except Exception:
                    scan.torn = True
                    break
            if scan.torn:  # rewrite without the torn tail (streamed, one record at a time)
                self.recovered_torn += 1
                log.rewrite(self._seg(i), _first(log.Scan(self._seg(i)), self._n[i]))
                self.writes += 1
        self._cur = 1 if self._last[1] > self._last[0] else 0

    def add_round(self, no, kind, body):
        """Keep a round_result / round_void (body as sent, codec types) for recall."""
        cur = self._cur
        count = self._last[cur] + 1
        if self._rdirty:  # a failed append left a torn tail: rewrite the segment without it
            if self._rf is not None:
                self._rf.close()
                self._rf = None
            seg = self._seg(cur)
            log.rewrite(seg, _first(log.Scan(seg), self._n[cur]))
            self._rdirty = False
        if self._n[cur] >= ROUNDS_PER_SEGMENT:
            if self._rf is not None:
                self._rf.close()
                self._rf = None
            cur = 1 - cur
            self._cur = cur
            log.remove(self._seg(cur))
            self._n[cur] = 0
        if self._rf is None:
            self._rf = log.Appender(self._seg(cur))
        payload = codec.encode([count, no, kind, body])
        try:
            self._rf.append(payload)
        except Exception:
            self._rdirty = True
            self._rf.close()
            self._rf = None
            raise
        self.writes += 1
        self.bytes_written += len(payload) + log.HEAD
        self._nums[cur][self._n[cur]] = no
        self._n[cur] += 1
        self._last[cur] = count

    def round_numbers(self):
        """Every recallable round number, oldest first (the last 100 at least)."""
        o = 1 - self._cur
        return list(self._nums[o][:self._n[o]]) + list(self._nums[self._cur][:self._n[self._cur]])

    def round(self, no):
        """-> (kind, body) of round `no`, or None if it is not (or no longer) recallable."""
        for i in (self._cur, 1 - self._cur):
            if _holds(self._nums[i], self._n[i], no):
                for p in log.Scan(self._seg(i)):
                    r = codec.decode(p)
                    if r[1] == no:
                        return r[2], r[3]
        return None


def _holds(arr, n, x):
    for i in range(n):
        if arr[i] == x:
            return True
    return False


def _first(it, n):
    if n <= 0:
        return
    for i, x in enumerate(it):
        yield x
        if i + 1 >= n:
            return
