"""The shoe end's send queue: durable events (journalled first), volatile messages, replies,
the fragmentation of messages into frames, the peer's acks and the retransmission of what they
do not cover (a mixin of ShoeEndpoint, shoe/link/endpoint.py; docs/protocol.md s.5).

Queue entries: an int = eseq * 16 + fragment index of a durable message (its bytes stay in the
store: no heap object per event), bytes = a whole volatile message or host command, or a tuple
(message, fragment index, durable?) = a fragment of a longer one (the whole message's bytes,
shared by its fragments: a new session can send it again from its first fragment).

A frame's payload is encrypted under its sequence number (docs/protocol.md s.2), so the entry
behind a number never changes while it is in flight: entries leave the queue only from the front
when acknowledged (the numbering moves with them), `_drop_acked` touches only entries not sent
yet, `_detach` swaps a durable fragment for a copy of the same message, and a new session (new
keys) renumbers from 1. A retransmission is therefore byte for byte the same plaintext.
"""
from micropython import const

from shoe.errors import ShoeError
from shoe.link import frame
from shoe.link.frame import DATA, MORE
from shoe.link.message import LinkError, seal

_MASK = const(0xFFFF)
SEQ_LIMIT = const(0xC000)  # the highest sequence number sent under one session key (s.5)
FRAG = const(120)  # message bytes per frame: a 1 %-corrupted byte stream still passes ~25 % of
# 132-byte frames whole (0.99**132), but almost none of 1 KB ones; bigger messages are split


def nfrag(n):
    return (n + FRAG - 1) // FRAG if n else 1


def whole_messages(q):
    """The volatile entries of a queue for a new session (durable ones come back from the store):
    a message whose first fragments went in the old session is sent again whole (the peer's
    reassembly starts afresh with the session), the copies of durable messages the peer has
    acknowledged (_detach) are dropped."""
    out = []
    for x in q:
        if isinstance(x, int):
            continue
        if isinstance(x, tuple):
            if x[2] or (out and isinstance(out[-1], tuple) and out[-1][0] is x[0]):
                continue  # a durable message the host holds, or one already in `out` whole
            for i in range(nfrag(len(x[0]))):  # from its first fragment, whatever went before
                out.append((x[0], i, False))
            continue
        out.append(x)
    return out


class SendQueue:
    def send(self, kind, body, durable=True, state=None):
        """One message: durable (journalled, returns its eseq; see send_many) or volatile (0)."""
        if not durable:
            payload, _ = seal(self.key, self._msg_tag, [kind, body, 0, b""])
            self._queue(payload)
            return 0
        return self.send_many(((kind, body),), state)[0]

    def send_many(self, msgs, state=None, ops=None):
        """Shoe: durable events [(kind, body), ...] and optionally the application state that
        results from them (`state`, or `ops`: its change as delta ops, shoe.journal.delta),
        journalled in ONE atomic write before anything can be transmitted (a store with
        `defer` set holds the write until its commit(): the caller then finishes no frame of
        these events before that, shoe.app.App._to_host).
        Returns their eseqs. LinkError("outbox_full" | "too_big") and nothing is written."""
        st = self.store
        if not msgs and state is None and not ops:
            return []
        if st.outbox_room() < len(msgs):
            raise LinkError("outbox_full")
        items = []
        eseq = st.eseq
        head = st.chain
        for kind, body in msgs:
            eseq += 1
            payload, head = seal(self.key, self._msg_tag, [kind, body, eseq, head], True)
            if len(payload) > frame.MAX_PAYLOAD:
                raise LinkError("too_big")
            items.append((eseq, payload, head))
        try:
            st.outbox_add(items, state, ops)  # journalled before it can be transmitted
        except Exception as e:
            if isinstance(e, ShoeError):
                raise LinkError(e.reason)
            raise LinkError("store", e)   # the cause (a MemoryError: no allocation here)
        out = []
        for eseq, payload, head in items:
            for i in range(nfrag(len(payload))):
                self._txq.append(eseq * 16 + i)  # a fragment of a durable message: no object
            out.append(eseq)
        return out

    def reply(self, ctr, body=None, durable=False):
        """Answer command `ctr` with {"re": ctr, **body}. A body too big for one frame becomes
        the error reply "reply_too_big" (the command itself was executed)."""
        b = {"re": ctr}
        if body:
            for k in body:
                b[k] = body[k]
        try:
            return self.send("reply", b, durable)
        except LinkError as e:
            if e.reason != "too_big":
                raise
            return self.error(ctr, "reply_too_big", None, durable)

    def error(self, ctr, reason, detail=None, durable=False):
        b = {"re": ctr, "reason": reason}
        if detail is not None:
            b["detail"] = detail
        return self.send("error", b, durable)

    def _requeue(self, h):
        """A new session: the whole durable outbox again, then the volatile messages. (An
        outbox may skip numbers: a damaged journal's jump, docs/journal.md.)"""
        out = []
        for e in range(self.store.outbox_first(), self.store.eseq + 1):
            p = self.store.payload(e)
            for i in range(nfrag(len(p)) if p is not None else 0):
                out.append(e * 16 + i)
        self._txq = out + self._txq

    def _queue(self, payload):
        n = len(payload)
        if n > frame.MAX_PAYLOAD:
            raise LinkError("too_big")
        if n <= FRAG:
            self._txq.append(payload)  # a whole message in one DATA frame
            return
        for i in range(nfrag(n)):  # (message, fragment index, durable?)
            self._txq.append((payload, i, False))

    def _drop_acked(self):
        """Forget queued (not yet sent) durable events the host has already acknowledged:
        whole messages only (the rest of a message already partly sent stays)."""
        if self.store is None:
            return
        q = self._txq
        i = self._in_flight
        while i < len(q) and isinstance(q[i], int) and q[i] & 15:
            i += 1  # the rest of a message partly in flight
        first = self.store.outbox_first()
        while i < len(q) and isinstance(q[i], int) and (q[i] >> 4) < first:
            q.pop(i)

    def _detach(self, upto):
        """Before eseq <= upto leave the store: fragments of those messages still queued become
        copies, so a message partly sent is finished with the same bytes."""
        q = self._txq
        sent = []  # messages with a fragment in flight
        for i in range(self._in_flight):
            if isinstance(q[i], int) and (q[i] >> 4) <= upto:
                sent.append(q[i] >> 4)
        if not sent:
            return
        for i in range(len(q)):
            x = q[i]
            if isinstance(x, int) and (x >> 4) in sent:
                p = self.store.payload(x >> 4)
                if p is not None:
                    q[i] = (bytes(p), x & 15, True)

    def _fragment(self, x):
        """-> (frame type, payload) of a queue entry; None if its bytes are gone."""
        if isinstance(x, int):
            p = self.store.payload(x >> 4)
            if p is None:  # cannot happen (see _detach)
                return None
            k = x & 15
        elif isinstance(x, tuple):
            p, k = x[0], x[1]
        else:
            return DATA, x
        n = len(p)
        return (MORE if (k + 1) * FRAG < n else DATA), memoryview(p)[k * FRAG:(k + 1) * FRAG]

    def _send_frame(self, i):
        x = self._txq[i]
        f = self._fragment(x)
        if f is None:
            if i < self._in_flight:  # sent before: a number never carries other bytes
                self._count("lost_payload")
                return
            f = DATA, seal(self.key, self._msg_tag, ["_nop", None, 0, b""])[0]  # keeps the seq
        ftype, payload = f
        self._frame(ftype, (self._tx_base + i) & _MASK, payload)
        if ftype == DATA and isinstance(x, int) and (x >> 4) > self._sent_max:
            self._sent_max = x >> 4  # the last fragment of durable event eseq went out

    def _on_ack(self, ack):
        """The peer's cumulative ack: frames up to `ack` leave the queue, the timer restarts."""
        k = (ack - self._tx_base + 1) & _MASK
        if k == 0 or k > self._in_flight:
            return
        del self._txq[:k]
        self._tx_base = (self._tx_base + k) & _MASK
        self._in_flight -= k
        self._backoff = 1
        self._rto_at = self._now + self.rto_ms
        self._tx_prog = self._now
        self._patience = 1

    def _send_data(self, now_ms):
        """The data frames of one transmit(): on timeout everything in flight again (go-back-N,
        backing off to 4 x rto), else the frames a peer's ACK bitmap reports lost, then new ones
        up to the window. -> True if any data frame went out."""
        sent_data = False
        if self._in_flight and now_ms >= self._rto_at:  # timeout: resend everything in flight
            self._count("retransmit")
            for i in range(self._in_flight):
                self._send_frame(i)
            sent_data = True
            self._resend_base = 0
            self._backoff = min(self._backoff * 2, 4)
            self._rto_at = now_ms + self.rto_ms * self._backoff
        elif self._resend_base and self._in_flight:  # selective fast retransmission
            self._count("fast_retransmit")
            held = self._resend_base
            self._send_frame(0)
            for i in range(1, self._in_flight):
                if not held & (1 << (i - 1)):
                    self._send_frame(i)
            sent_data = True
        self._resend_base = 0
        while (self._in_flight < len(self._txq) and self._in_flight < self.window
               and self._tx_base + self._in_flight <= SEQ_LIMIT):
            self._send_frame(self._in_flight)
            if not self._in_flight:
                self._rto_at = now_ms + self.rto_ms * self._backoff
            self._in_flight += 1
            self._frames += 1
            sent_data = True
        return sent_data
