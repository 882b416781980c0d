"""The shoe's power-loss-safe journal: table state, counters, the outbox of unacknowledged
events (it is the Endpoint's store), the hash-chain head and the last 100 rounds.

    j = Journal(root)                 # opens/creates ROOT/journal.log, recovers, counts a boot
    Endpoint("shoe", key, store=j)    # ctr, eseq, chain, outbox: docs/protocol.md 7

Files, record tags, recovery from tears and corruption, the API: docs/journal.md.
"""
import hashlib

from micropython import const

from shoe.errors import ShoeError
from shoe.journal import delta, log
from shoe.journal.marks import E_AHEAD, Marks
from shoe.journal.outbox import Outbox
from shoe.journal.store import FileStore
from shoe.journal.rounds import ROUNDS_PER_SEGMENT, Rounds  # noqa: F401 (re-exported)
from shoe.link import codec

LOG = "journal.log"
CTR_MARGIN = const(16)  # without marks (older firmware's journal): the counter floor's margin
GENESIS = bytes(16)  # the hash-chain head before the first event (= shoe.link.message.GENESIS)


class JournalError(ShoeError):
    def __init__(self, reason):
        super().__init__(None, reason)


class Journal(Rounds, Marks):
    def __init__(self, root, max_bytes=32768, outbox_limit=48, outbox_bytes=4096, store=None,
                 keep=(), outbox=None):
        self.root = root
        self._keep = keep  # paths of state values kept in the marks too (marks.py)
        self.path = root + "/" + LOG
        # where the records live: files in root (default) or raw flash rings (extents.py)
        self._store = store if store is not None else FileStore(root)
        self.max_bytes = max_bytes
        self.writes = 0
        self.bytes_written = 0
        self.erases = 0
        self.recovered_torn = 0
        self.fixed = 0  # records the boot's recovery repaired (one flipped bit each)
        self.compactions = 0
        self.recovery = None
        self._st = None
        self.boot = 0
        self.ctr = 0
        self.eseq = 0
        self.chain = GENESIS
        # outbox: one made early by the caller (its buffer in one piece: shoe.app)
        self._out = outbox if outbox is not None else Outbox(outbox_bytes, outbox_limit)
        self._dirty = False
        self._want_compact = False
        self._keys = {}  # delta.apply's cache of sorted dict keys (a few dicts of the state)
        self._pending = []  # ops written but not yet applied to _st (a dealt card's: idle())
        self._p_ctr = None  # the counter carried by the last "P" record written
        # defer: the next log record is held back, not programmed (`_held`), until commit() or
        # the journal's next write; a card's, so that its frame starts on the wire while the
        # record is programmed (the app closes the frame only after commit(): App._to_host)
        self.defer = False
        self._held = None
        try:
            import os
            os.mkdir(root)  # a fresh board: create the state directory
        except OSError:
            pass
        self._marks_open()
        self._recover()
        self._keys.clear()  # what the boot's replay cached; the running shoe fills it again
        self._rounds_open()
        self.boot += 1
        self._append(["B", self.boot, self.ctr, self.eseq])
        if self.recovery is None and self._keep and self._st is not None:
            self._kept = self._kept_of(self._st)  # exact: else the marks' copy is the newer
        self._mark()

    @property
    def state(self):
        """The application state (a copy: the journal diffs against its own)."""
        self.catch_up()
        return delta.copy(self._st)

    def catch_up(self):
        """Apply the ops written but not applied yet (a dealt card's delta waits for the pause
        after the card: its frame need not wait for it; the app calls this between cards).
        Done too before anything reads, diffs or compacts the state."""
        if self._pending:
            ops = self._pending
            self._pending = []
            self._st = delta.apply(self._st, ops, self._keys)

    # ---- recovery and compaction ----------------------------------------------------------
    def _recover(self):
        self._hctr = 0
        self._heseq = 0
        self._stale = False
        self._lost_events = 0
        self._legacy_x = False
        scan = self._store.scan(LOG)
        holes = 0
        undecodable = False
        for p in scan:
            if scan.hole or undecodable:
                self._stale = True  # a lost record may have held a state delta
                holes += 1 if undecodable else 0
                undecodable = False
            try:
                self._replay(codec.decode(p))
            except Exception:  # a record that passed its CRC but does not make sense
                undecodable = True
                self._stale = True
        holes += scan.holes
        torn = scan.torn or undecodable
        if torn:
            self.recovered_torn += 1
        self.fixed = scan.fixed
        if self._hctr > self.ctr:
            self.ctr = self._hctr
        if self._heseq > self.eseq:  # events after the last one kept are lost: never go back
            self._lose(self._heseq)
        # the end of the log is gone, not cut short by a power loss: a damaged tail (complete
        # records that do not check, zeroed or garbled bytes), or the marks show that the log
        # once held more than it does now (an event, a command; a boot: only the boot records
        # hold it, and a hole may have taken one)
        tail = scan.damaged or undecodable or self.m_eseq > self.eseq or \
            self.m_ctr > self.ctr or (self.m_boot > self.boot and not holes)
        if self.m_boot > self.boot:
            self.boot = self.m_boot
        if torn or tail:  # a lost record may have accepted a command: above every one accepted
            self.ctr = self._cc if self._cc > self.ctr else self.ctr + CTR_MARGIN
        jump = None
        if tail:
            # its events may have been sent: go on above every number ever used, so none is
            # used twice and the host counts the numbers it lacks as one gap (docs/journal.md)
            self._stale = True
            jump = [self.eseq, self._ce if self._ce > self.eseq else self.eseq + E_AHEAD]
            self._jump(jump[1])
        if holes or tail:
            self.recovery = {"holes": holes, "lost_bytes": scan.lost,
                             "events_lost": self._lost_events, "tail": tail, "jump": jump,
                             "kept": self._kept,
                             "state": "stale" if self._stale else "exact", "ctr": self.ctr,
                             "eseq": self.eseq}
        self._size = scan.good_end
        if torn or tail or self.fixed or scan.good_end > self.max_bytes:
            self.compact()

    def _jump(self, to):
        """Number the next event to + 1 (the outbox keeps what it holds: one hole; a second
        one drops what lies before the first, counted lost)."""
        ob = self._out
        if ob.skip:
            n = ob.count
            ob.prune(ob.skip_at - 1)
            self._lost_events += n - ob.count
        self.eseq = to

    def _hwm(self, ctr, eseq):
        if ctr > self._hctr:
            self._hctr = ctr
        if eseq > self._heseq:
            self._heseq = eseq

    def _lose(self, upto):
        """Events up to `upto` exist but some are gone: the outbox can only hold what follows
        them. Everything unacknowledged up to there is counted as lost."""
        self._lost_events += self._out.count + upto - self.eseq
        self._out.clear()
        self.eseq = upto

    def _event(self, eseq, payload):
        if eseq <= self.eseq:
            return  # already held (a duplicate)
        if eseq != self.eseq + 1:
            self._lose(eseq - 1)
        self._out.add(eseq, payload)
        self.eseq = eseq

    def _state_ops(self, ops):
        full = delta.full(ops)
        if full or not self._stale:
            try:
                self._st = delta.apply(self._st, ops, self._keys)
                self._stale = self._stale and not full
            except Exception:
                self._stale = True  # does not fit: keep the last good state

    def _replay(self, r):
        t = r[0]
        if t != "O":
            self._legacy_x = False
        if t == "P":
            payloads = r[2]
            for i in range(len(payloads)):
                self._event(r[1] + i, payloads[i])
            if payloads and self.eseq == r[1] + len(payloads) - 1:
                self.chain = r[3] if r[3] is not None else chain_head(payloads[-1])
            if r[4] is not None:
                self._state_ops(r[4])
            self._hwm(r[5] if len(r) > 5 else 0, r[1] + len(payloads) - 1)
        elif t == "A":
            self._out.prune(r[1])
            self.ctr = r[2]
            if len(r) > 3:
                self._hwm(r[2], r[3])
        elif t == "C":
            self.ctr = r[1]
            if len(r) > 2:
                self._hwm(r[1], r[2])
        elif t == "D":
            self._state_ops(r[1])
            self._hwm(r[2], r[3])
        elif t == "E":  # legacy (latched errors): only its high-water marks still count
            if len(r) > 2:
                self._hwm(r[2], r[3])
        elif t == "B":
            self.boot = r[1]
            if len(r) > 2:
                self._hwm(r[2], r[3])
        elif t == "X":
            d = r[1]
            self.ctr = d["ctr"]
            # the outbox records that follow start at "first" (a legacy snapshot: see "O")
            self.eseq = d.get("first", d["eseq"] + 1) - 1
            self._legacy_x = "first" not in d
            self.chain = d["chain"]
            self.boot = d["boot"]
            self._st = d["state"]
            self._out.clear()
            self._stale = False
            self._hwm(d["ctr"], d["eseq"])
        elif t == "O":  # legacy
            for eseq, payload, head in r[1]:
                if self._legacy_x:  # the outbox of a legacy snapshot (eseq already restored)
                    self._out.add(eseq, payload)
                else:
                    self._event(eseq, payload)
                self.chain = head
            if r[2] is not None:
                self._st = r[2]
        elif t == "S":  # legacy
            self._st = r[1]
        elif t == "J":  # the numbers after r[1] up to r[2] are never used (a damaged journal)
            if self.eseq < r[1]:
                self._lose(r[1])
            if r[2] > self.eseq:
                self.eseq = r[2]
            self._hwm(0, r[2])
        # "Z" and unknown tags: nothing to restore

    def _snapshot(self):
        yield codec.encode(["X", {"ctr": self.ctr, "eseq": self.eseq, "chain": self.chain,
                                  "first": self.outbox_first(), "boot": self.boot,
                                  "state": self._st, "errors": []}])  # read by old firmware
        ob = self._out
        prev = ob.first - 1
        for i in range(ob.count):
            e = ob.eseq_at(i)
            if e != prev + 1:  # the outbox's hole (numbers never to be used)
                yield codec.encode(["J", prev, e - 1])
            prev = e
            p = ob.get(e)
            last = i == ob.count - 1  # only the last head matters; stored if not derivable
            yield codec.encode(["P", e, [p], self.chain if last and
                                chain_head(p) != self.chain else None, None, self.ctr])
        if ob.count and self.eseq > prev:  # a jump after the last message held
            yield codec.encode(["J", prev, self.eseq])
        yield codec.encode(["Z"])

    def compact(self):
        """Rewrite the log as one snapshot (atomic replace); bounded size from here on. A
        record held back (defer) is in the snapshot: memory has its effect already."""
        self._held = None
        self.catch_up()        # the snapshot is of the state with every op written
        self._keys.clear()  # let go of dicts the state no longer holds
        w, b = self._store.rewrite(LOG, self._snapshot())
        self.writes += w
        self.bytes_written += b
        self.erases += log.sectors(0, b)
        self._size = b
        self._dirty = False
        self._want_compact = False
        self.compactions += 1

    def checkpoint(self):
        """At a round boundary: once the log holds 3/4 of max_bytes, a compaction (a full
        snapshot) is due, so a full state is never more than a few rounds back and boot replays
        little. It is done by idle(), not here: the round's result is being settled, and the
        next round's first card may come right after the host's acknowledgement (a compaction
        there held that card 40-60 ms on the RP2040)."""
        if self._size * 4 >= self.max_bytes * 3:
            self._want_compact = True

    def _append(self, record):
        if self.defer:   # a dealt card's record: encoded, sized and programmed at commit()
            if self._held is not None:
                self.commit()
            self.defer = False
            self._held = record
            return
        self._app_record(codec.encode(record))

    def close(self):
        self.commit()
        self._store.close()

    def idle(self, dealing=False):
        """Flash work that can be done ahead, at a moment no card is expected soon: a due
        compaction (checkpoint) once the host has acknowledged every event, so the snapshot
        need not copy them (each event is written once), else the next ring sector's erase.
        `dealing`: cards are expected (the pause after one): the compaction (tens of ms on the
        RP2040) only if the log is nearly full, where the next record would otherwise do it
        inside a card's path. True if it did something (one of them per call). The state ops
        of the last cards are applied first (cheap)."""
        self.commit()
        self.catch_up()
        if self._want_compact and not self._out.count and (
                not dealing or self._size * 8 >= self.max_bytes * 7):
            self.compact()
            return True
        return self._store.idle()

    def _app_record(self, payload):
        if self._held is not None:   # records reach the flash in the order they were made
            self.commit()
        # compact BEFORE appending: the snapshot is the state up to the previous record, and the
        # new record follows it (memory is updated by the caller after the write)
        if not self._room(payload):
            self.compact()  # also after a failed write: rewrite without its torn bytes
        self._program(payload)

    def _room(self, payload):
        n = len(payload) + log.HEAD
        return not self._dirty and self._size + n <= self.max_bytes and self._store.fits(LOG, n)

    def _program(self, payload):
        try:
            self._store.append(LOG, payload)
        except Exception:  # a write that failed part way (flash full, I/O error): the file may
            self._dirty = True  # end in a torn record that would hide later appends
            self._store.abort(LOG)
            raise
        n = len(payload) + log.HEAD
        self.writes += 1
        self.bytes_written += n
        self.erases += log.sectors(self._size, n)
        self._size += n

    def held(self):
        """A record is held back (defer): its effect is in memory, not yet on the flash."""
        return self._held is not None

    def commit(self):
        """Encode and program the record held back, if any; durable when this returns (True
        if there was one). Memory has the record's effect already, so where the log has no
        room for it, or its program fails, the log is rewritten whole from memory (a
        compaction) instead; an encoding short of RAM is tried once more after a collection.
        Raises only if that fails too (the flash takes nothing: nothing it holds may be sent,
        App._commit)."""
        if self._held is None:   # (the idle tick's call: a VM frame small enough for the stack)
            return False
        self._commit_held()
        return True

    def _commit_held(self):
        rec = self._held
        self._held = None
        p = None
        try:
            p = codec.encode(rec)
        except MemoryError:
            pass
        if p is None:   # once more after a collection (outside the handler: nothing holds
            import gc   # the failed attempt's pieces)

            gc.collect()
            p = codec.encode(rec)
        try:
            if not self._room(p):
                self.compact()
            else:
                self._program(p)
        except Exception:
            self.compact()

    # ---- the Endpoint's store interface ---------------------------------------------------
    def set_ctr(self, ctr):
        if ctr >= self._cc:
            self._mark(c=ctr)   # the ceiling first: a damaged log never lets ctr go back
        self._append(["C", ctr, self.eseq])
        self.ctr = ctr

    def outbox_add(self, items, state=None, ops=None):
        """Durable messages [(eseq, payload, head)] (+ the app state, written as its delta
        against the last one; or `ops`, that delta made by the caller) in ONE record."""
        if not self._out.fits_all([len(it[1]) for it in items]):
            raise JournalError("outbox_full")
        if state is not None:
            self.catch_up()
            ops = delta.diff(self._st, state)
        if not items and not ops:
            return
        first = items[0][0] if items else self.eseq + 1
        head = items[-1][2] if items else self.chain
        if items and items[-1][0] >= self._ce:
            self._mark(e=items[-1][0])   # the ceiling first (marks.py)
        # the head follows from the last payload (16 bytes saved per record): the Endpoint's
        # heads are chain_head(payload) by construction (seal_message; tests check it), so it
        # is stored only when there is no payload to derive it from
        rec = ["P", first, [it[1] for it in items], None if items else head, ops or None]
        if self.ctr != self._p_ctr:  # the counter's mark, when it moved since the last "P"
            rec.append(self.ctr)
        self._append(rec)
        self._p_ctr = self.ctr
        for eseq, payload, head in items:
            self._out.add(eseq, payload)
            self.eseq = eseq
            self.chain = head
        if state is not None:   # a whole change: it may replace dicts the cache holds
            self._keys.clear()
            if ops:
                self._st = delta.apply(self._st, ops)
            self._keep_check(state)   # before its events can leave
        elif ops:   # a dealt card's: applied at idle() or before the state is next needed
            self._pending.extend(ops)
            if len(self._pending) > 24:
                self.catch_up()

    def outbox_ack(self, upto, ctr):
        if ctr >= self._cc:
            self._mark(c=ctr)
        self._append(["A", upto, ctr, self.eseq])
        self._out.prune(upto)
        self.ctr = ctr

    def outbox_first(self):
        return self._out.first if self._out.count else self.eseq + 1

    def payload(self, eseq):
        return self._out.get(eseq)

    def outbox(self):
        return self._out.items()

    def outbox_room(self):
        return self._out.room()


def chain_head(payload):
    """The hash-chain head after a sealed event payload (shoe/link/message.py: head =
    SHA-256(core)[:16], core = the payload with its first byte 0x85 -> 0x84 and the trailing
    17-byte MAC item removed). The journal checks it against the Endpoint's head when writing
    and stores the head itself whenever they differ, so a change of the envelope costs bytes,
    never a wrong chain."""
    if len(payload) < 18 or payload[0] != 0x85:
        return None
    h = hashlib.sha256(b"\x84")
    h.update(payload[1:len(payload) - 17])
    return h.digest()[:16]
