"""The persistence interface the shoe-side Endpoint needs, and an in-memory implementation.

A store keeps, across resets: `ctr` (the last accepted host command counter), `eseq` (the last
durable event sequence assigned), `chain` (the hash-chain head, 16 bytes) and the outbox of durable
messages the host has not acknowledged (consecutive eseq outbox_first()..eseq). The Endpoint calls:

    store.set_ctr(ctr)                    a command was accepted (persist before acting on it)
    store.outbox_add(items, state)        durable messages [(eseq, payload, head)] and, unless
                                          None, the application state, in ONE atomic write
                                          BEFORE any is sent; raises (reason "outbox_full") and
                                          writes nothing if they do not all fit
    store.outbox_ack(upto, ctr)           the host stored every eseq <= upto (authenticated)
    store.outbox_first()                  the oldest unacknowledged eseq (eseq + 1 if none)
    store.payload(eseq)                   its payload (bytes-like) or None once acknowledged
    store.outbox_room()                   how many more durable messages surely fit
    store.outbox()                        [(eseq, payload)] (tests, snapshots)

shoe.journal.Journal implements this on flash; MemoryStore is for tests and simulations (a
"reset" there = building a new Endpoint on the same MemoryStore).
"""
from shoe.errors import ShoeError
from shoe.link.message import GENESIS


class MemoryStore:
    def __init__(self, limit=256):
        self.ctr = 0
        self.eseq = 0
        self.chain = GENESIS
        self._out = {}
        self.state = None
        self.limit = limit
        self.writes = 0

    def set_ctr(self, ctr):
        self.ctr = ctr
        self.writes += 1

    def outbox_add(self, items, state=None, ops=None):
        if len(self._out) + len(items) > self.limit:
            raise ShoeError("outbox is full", "outbox_full")
        for eseq, payload, head in items:
            self.eseq = eseq
            self.chain = head
            self._out[eseq] = bytes(payload)
        if state is not None:
            self.state = state
        elif ops:
            from shoe.journal import delta

            self.state = delta.apply(delta.copy(self.state), ops)
        self.writes += 1

    def outbox_ack(self, upto, ctr):
        self.ctr = ctr
        for e in [e for e in self._out if e <= upto]:
            del self._out[e]
        self.writes += 1

    def outbox_first(self):
        return min(self._out) if self._out else self.eseq + 1

    def payload(self, eseq):
        return self._out.get(eseq)

    def outbox(self):
        return sorted(self._out.items())

    def outbox_room(self):
        return self.limit - len(self._out)
