"""MemoryStore: the shoe-side Endpoint's store in memory, for tests and simulations (not
firmware; a "reset" = building a new Endpoint on the same MemoryStore). The store interface is
in docs/protocol.md ("The shoe's store"); shoe.journal.Journal implements it on flash. Imports
only the firmware, so it also runs under MicroPython in tests (`import memstore`).
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
