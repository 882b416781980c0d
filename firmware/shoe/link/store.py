"""The persistence interface the shoe-side Endpoint needs, and an in-memory implementation.

A store keeps, across resets: `ctr` (the last accepted host command counter), `eseq` (the last
durable event sequence assigned), `chain` (the hash-chain head, 16 bytes) and the outbox of durable
messages the host has not acknowledged. The Endpoint calls:

    store.set_ctr(ctr)                    a command was accepted (persist before acting on it)
    store.outbox_add(eseq, payload, head) a durable message exists (persist BEFORE it is sent)
    store.outbox_ack(upto, ctr)           the host stored every eseq <= upto (authenticated)
    store.outbox()                        [(eseq, payload), ...] ascending, not yet acknowledged
    store.outbox_room()                   how many more durable messages fit

shoe.journal.Journal implements this on flash; MemoryStore is for tests and simulations (a
"reset" there = building a new Endpoint on the same MemoryStore).
"""
from shoe.link.message import GENESIS


class MemoryStore:
    def __init__(self, limit=256):
        self.ctr = 0
        self.eseq = 0
        self.chain = GENESIS
        self._out = []
        self.limit = limit
        self.writes = 0

    def set_ctr(self, ctr):
        self.ctr = ctr
        self.writes += 1

    def outbox_add(self, eseq, payload, head):
        self.eseq = eseq
        self.chain = head
        self._out.append((eseq, payload))
        self.writes += 1

    def outbox_ack(self, upto, ctr):
        self.ctr = ctr
        self._out = [x for x in self._out if x[0] > upto]
        self.writes += 1

    def outbox(self):
        return list(self._out)

    def outbox_room(self):
        return self.limit - len(self._out)
