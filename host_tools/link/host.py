"""The host end of the link (not firmware): HostEndpoint, a subclass of the firmware's
ShoeEndpoint, and the host-only envelope functions (sealing commands, opening and chaining shoe
messages). Imports only the firmware's shoe.link, so it runs on CPython (host_tools.link.host) and
under MicroPython in tests (MICROPYPATH holds host_tools/link: `import host`).

    ep = HostEndpoint(key, delivered=None, on_peer=None, auto_ack=True)
    ep = make_endpoint(role, key, **options)  # "host": a HostEndpoint; "shoe": a ShoeEndpoint
    ctr = ep.send(kind, body) / ep.command(kind, body, key=supervisor_key)  # 0 until link up
    for kind, body, eseq, meta in ep.receive(chunk, now_ms): ...
    out = ep.transmit(now_ms)

Delivered: shoe messages (kind, body, eseq, meta), meta = {"prev", "hash", "mac", "payload"} for a
durable event (eseq > 0), None for a volatile message (a reply, eseq 0). Commands and messages are
MAC'd for the shoe id the shoe's HELLO names (docs/protocol.md s.4); a durable event a shoe sealed
while it ran protocol 2 (no shoe id in its MAC: still in its outbox after a firmware update) is
delivered too and counted `legacy_event` (open_event). Durable events with
eseq <= `delivered` are dropped as duplicates (counted `dup_event`); `on_peer(hello)` is called at
each new session and may return the last eseq the host already holds (its audit store). Once
delivered, events are acknowledged with an authenticated `_ack` command after `ack_every` events
or `ack_delay_ms` (auto_ack), or explicitly by `ack_events()`.

Acknowledge only what is held: an event is delivered (and later acknowledged) only if it is the
next one, `delivered + 1`. An event after a gap is dropped and a new session asked for (counted
`gap_resync`), so the shoe re-sends its whole outbox from the oldest event it still holds; only
if the first event of that fresh session still lies beyond the gap (the shoe no longer has the
missing ones) is it delivered, counted `event_gap` (the audit store marks the row).
The host refuses a session (`hold`) whose HELLO says the shoe's event sequence is below what this
host stored (`sequence_reset`) or its command counter is below one this host saw it accept
(`counter_reset`): its journal went back. Before those, `peer_check(hello)` (ShoeLink: the
host's own state about that shoe, host_tools/hoststate.py) may return a reason to refuse it.
"""

import hashlib

from shoe.crypto import equal
from shoe.link import codec
from shoe.link.endpoint import ACK_KIND, ShoeEndpoint
from shoe.link.handshake import PROTOCOL
from shoe.link.message import CMD_TAG, MSG_TAG, LinkError, bound, mac, seal, unseal

MSG_TAG_V2 = b"SHOE1msg"  # protocol 2's message MAC: no shoe id
_MASK = 0xFFFF
RTO_MAX_MS = 30000  # the retransmission timeout never grows past this, however slow the shoe
# ceilings of the timers that scale with it: a slow shoe still hears from the host every 10 s,
# and a session that stopped moving is renewed within 2 minutes (x the stall backoff)
HB_MAX_MS, TIMEOUT_MAX_MS, STALL_MAX_MS = 10000, 60000, 120000
RTT_WINDOW = 8  # clean samples whose least sets the heartbeat (loss only ever lengthens one)


def make_endpoint(role, key, **options):
    """Either end of the link by `role` ("shoe": the firmware's ShoeEndpoint, "host")."""
    if role == "host":
        return HostEndpoint(key, **options)
    if role == "shoe":
        return ShoeEndpoint(key, **options)
    raise ValueError("role")


def seal_command(key, kind, body, ctr, shoe_id):
    """A command for shoe `shoe_id` only (its MAC binds the id)."""
    return seal(key, bound(CMD_TAG, shoe_id), [kind, body, ctr])[0]


def _open(payload, key, tag):
    items, core, got = unseal(payload, 5)
    kind, body, eseq, prev = items[0], items[1], items[2], items[3]
    if not isinstance(kind, str) or not isinstance(eseq, int) or not isinstance(prev, bytes):
        raise LinkError("malformed")
    if not equal(mac(key, tag, core), got):
        raise LinkError("bad_mac")
    head = hashlib.sha256(core).digest()[:16] if eseq else None
    return kind, body, eseq, prev, head, got


def open_message(payload, key, shoe_id):
    """A message of shoe `shoe_id` -> (kind, body, eseq, prev, head, mac);
    LinkError(malformed | bad_mac: also another shoe's message)."""
    return _open(payload, key, bound(MSG_TAG, shoe_id))


def open_event(payload, key, shoe_id):
    """open_message, or a durable event sealed by protocol 2 firmware (before the shoe's update:
    its MAC names no shoe, so it verifies under any id) -> (kind, body, eseq, prev, head, mac,
    form): form 3 (bound to `shoe_id`) or 2. A protocol 3 event never verifies as form 2 (its
    MAC is another HMAC input), so relabelling one as another shoe's fails either way."""
    try:
        return open_message(payload, key, shoe_id) + (3,)
    except LinkError as e:
        if e.reason != "bad_mac":
            raise
    r = _open(payload, key, MSG_TAG_V2)
    if not r[2]:
        raise LinkError("bad_mac")  # volatile messages are sealed as they go: always form 3
    return r + (2,)


def chain_next(prev, kind, body, eseq):
    """The chain head after (kind, body, eseq) following `prev`."""
    return hashlib.sha256(codec.encode([kind, body, eseq, prev])).digest()[:16]


class HostEndpoint(ShoeEndpoint):
    role = "host"

    def __init__(
        self,
        key,
        delivered=None,
        on_peer=None,
        auto_ack=True,
        ack_every=8,
        ack_delay_ms=200,
        ctr_seen=None,
        peer_check=None,
        **options,
    ):
        ShoeEndpoint.__init__(self, key, **options)
        self.ctr = 0  # the last command counter used
        self.delivered = delivered  # the last durable eseq delivered (None: unknown)
        self.on_peer = on_peer
        self.peer_check = peer_check  # hello -> None, or why this host refuses the shoe
        self.auto_ack = auto_ack
        self.ack_every = ack_every
        self.ack_delay_ms = ack_delay_ms
        self._pending = []  # (kind, body, key) waiting for the handshake to get a counter
        self._acked = 0
        self._ack_since = None
        self._ack_ctrs = []  # counters of our own recent _ack commands
        # shoe id -> the highest command counter it was seen to accept (`ctr_seen`: what earlier
        # host processes saw, ShoeLink keeps it beside the audit store)
        self.ctr_seen = dict(ctr_seen or {})  # shoe id -> the highest command counter it accepted
        self._fresh = True  # no durable event received yet in this session
        # the timers adapt to the shoe's measured pace (docs/protocol.md s.5, "A slow peer"):
        # the configured ones are the floor
        self._floor = (self.rto_ms, self.hb_ms, self.timeout_ms, self.stall_ms)
        self.srtt = None  # smoothed round-trip time of a DATA frame to its ack (ms), or None
        self._rttvar = 0.0
        self._recent = []  # the last RTT_WINDOW clean samples: their least is the shoe's pace
        self._timed = None  # (seq, sent at) of the one frame being timed, or None

    def backlog(self):
        return len(self._txq) + len(self._pending)

    # ---- commands -------------------------------------------------------------------------
    def send(self, kind, body, durable=True, state=None):
        return self.command(kind, body)

    def command(self, kind, body, key=None):
        """Queue a command; returns its counter (0 if it waits for the handshake)."""
        k = key if key is not None else self.key
        if not self.up:
            self._pending.append((kind, body, k))
            return 0
        return self._seal_cmd(kind, body, k)

    def _seal_cmd(self, kind, body, key):
        self.ctr += 1
        self._queue(seal(key, self._cmd_tag, [kind, body, self.ctr])[0])
        return self.ctr

    def queue_sealed(self, payload):
        """Queue a command sealed elsewhere (seal_command) whose counter the caller set as
        self.ctr; only while the link is up (the counter binds it to this session's order)."""
        if not self.up:
            raise LinkError("not_up")
        self._queue(bytes(payload))

    def ack_events(self):
        """Acknowledge every durable event delivered so far (prunes the shoe's outbox)."""
        if self.delivered and self.delivered > self._acked and self.up:
            self._acked = self.delivered
            self._ack_since = None
            c = self._seal_cmd(ACK_KIND, {"upto": self.delivered}, self.key)
            self._ack_ctrs = self._ack_ctrs[-15:] + [c]

    def _on_up(self):
        pend = self._pending
        self._pending = []
        for kind, body, key in pend:
            self._seal_cmd(kind, body, key)

    def _before_data(self, now_ms):
        if self.auto_ack and self.delivered and self.delivered > self._acked:
            if self.delivered - self._acked >= self.ack_every or (
                self._ack_since is not None and now_ms - self._ack_since >= self.ack_delay_ms
            ):
                self.ack_events()

    # ---- the handshake --------------------------------------------------------------------
    def _hello_fields(self):
        return {
            "v": PROTOCOL,
            "role": "host",
            "sid": self.sid,
            "n": self.nonce,
            "pn": self.peer_nonce,
            "up": self.up and not self.pending(),
        }

    def _saw_ctr(self, c):
        sid = self.peer.get("id") if self.peer else None
        if isinstance(c, int) and c > self.ctr_seen.get(sid, 0):
            self.ctr_seen[sid] = c

    # ---- the timers follow the shoe's pace (RFC 6298 with Karn's rule) --------------------
    def _send_data(self, now_ms):
        backoff, n0 = self._backoff, self._in_flight
        timeout = n0 and now_ms >= self._rto_at  # the firmware's step resends all in flight
        if n0 and self._resend_base:
            # a selective retransmission: frames after the gap are acknowledged only once it is
            # filled, so the frame being timed would measure the loss, not the round trip
            self._timed = None
        sent = super()._send_data(now_ms)
        if timeout:
            # the ack of a frame sent twice cannot be timed (Karn); the wait doubles until the
            # frames get through, past the firmware's 4 x rto, up to RTO_MAX_MS
            self._timed = None
            self._backoff = min(backoff * 2, 128)
            self._rto_at = now_ms + self._wait()
        if self._in_flight:
            self._rto_at = min(self._rto_at, now_ms + RTO_MAX_MS)
            if self._timed is None and self._in_flight > n0:  # time the newest new frame
                self._timed = ((self._tx_base + self._in_flight - 1) & _MASK, now_ms)
        return sent

    def _on_ack(self, ack):
        k = (ack - self._tx_base + 1) & _MASK
        if k == 0 or k > self._in_flight:
            return
        if self._timed is not None and ((self._timed[0] - self._tx_base) & _MASK) < k:
            self._sample(self._now - self._timed[1])
            self._timed = None
        # An ack of new data ends the backoff, as in the firmware, even without a sample (the
        # frame was sent twice: Karn). Kept backed off until a clean sample instead, a lossy
        # line never gave one and the waits grew from loss to loss: over a line losing half
        # the frames a command waited 30-60 s, and a loaded run's soak lost a command's 60 s
        # (tests/host_tools/link/test_slow_shoe.py). A peer slower than the rto shows in the
        # clean samples, and the handshake of the session that a stall starts measures it.
        super()._on_ack(ack)

    def _wait(self):
        """The retransmission wait now: rto backed off, at most RTO_MAX_MS."""
        return min(self.rto_ms * self._backoff, RTO_MAX_MS)

    def _sample(self, r):
        """One round-trip sample (ms), smoothed as RFC 6298 does; the timers follow."""
        if self.srtt is None:
            self.srtt, self._rttvar = float(r), r / 2.0
        else:
            self._rttvar = 0.75 * self._rttvar + 0.25 * abs(self.srtt - r)
            self.srtt = 0.875 * self.srtt + 0.125 * r
        self._recent = self._recent[1 - RTT_WINDOW :] + [r]
        self._scale()

    def _scale(self):
        """rto = srtt + 4 rttvar, never below the configured rto nor above RTO_MAX_MS; the
        link timeout and stall scale with it, up to their ceilings. So a peer at a tenth of
        real time is not flooded with retransmissions and handshakes it cannot keep up with,
        and a shoe at its normal pace leaves every timer at its configured value.
        The heartbeat keeps the SHOE's link alive (it calls the host gone after its own
        timeout_ms of its own clock without a frame), so it follows the least recent round
        trip, not the rto: frame loss lengthens samples and widens rttvar, which says nothing
        about the shoe's clock, and PINGs spaced by a lossy line's rto left a shoe at full
        speed calling the host silent. Only a shoe whose fastest answer takes longer than rto
        (a chip at a fraction of real time) is pinged less often."""
        rto0, hb0, timeout0, stall0 = self._floor
        rto = rto0
        if self.srtt is not None:
            rto = int(min(max(self.srtt + max(10.0, 4 * self._rttvar), rto0), RTO_MAX_MS))
        self.rto_ms = rto
        pace = int(min(self._recent)) if self._recent else rto0
        self.hb_ms = max(hb0, min(hb0 * pace // rto0, HB_MAX_MS))
        self.timeout_ms = max(timeout0, min(timeout0 * rto // rto0, TIMEOUT_MAX_MS))
        self.stall_ms = max(stall0, min(stall0 * rto // rto0, STALL_MAX_MS))

    def _requeue(self, h):
        self._fresh = True
        self._timed = None  # sequence numbers start again at 1
        # the handshake's round trip, from our last HELLO to the shoe's answer to it (a lower
        # bound when an earlier copy was answered): a first measure of the pace before any
        # frame is timed, so a slow shoe is not called silent before its first ack
        if self._hello_last > 0:
            self._sample(self._now - self._hello_last)
        self._bind(h.get("id"))  # the shoe whose commands and messages we seal and open now
        c = h.get("ctr")
        if isinstance(c, int) and c > self.ctr:
            self.ctr = c
        if self.on_peer is not None:
            d = self.on_peer(h)
            if d is not None:
                self.delivered = d
        self._acked = 0
        e = h.get("eseq")
        self.hold = self.peer_check(h) if self.peer_check is not None else None
        seen = self.ctr_seen.get(h.get("id"), 0)  # after peer_check: it sets the host's floor
        if self.hold:
            self.reset_info = {}  # the host's own state about this shoe is damaged
        elif isinstance(e, int) and self.delivered is not None and e < self.delivered:
            # the shoe's event sequence went back: its journal was wiped or it is another shoe
            # with the same id; merging would drop its events as duplicates, so refuse
            self.hold = "sequence_reset"
            self.reset_info = {"shoe_eseq": e, "host_delivered": self.delivered}
        elif not isinstance(c, int) or c < seen:
            # its command counter went back: a rolled-back or replaced journal would accept
            # commands it has already executed (replays) again
            self.hold = "counter_reset"
            self.reset_info = {"shoe_ctr": c, "host_seen": seen}
        else:
            self._saw_ctr(c)

    # ---- shoe messages --------------------------------------------------------------------
    def _on_data(self, payload):
        try:
            kind, body, eseq, prev, head, got = _open(payload, self.key, self._msg_tag)
        except LinkError as e:
            if e.reason != "bad_mac":
                self._count(e.reason)
                return
            try:  # an event the shoe sealed before its update to protocol 3 (open_event)
                kind, body, eseq, prev, head, got = _open(payload, self.key, MSG_TAG_V2)
            except LinkError as e2:
                self._count(e2.reason)
                return
            if not eseq:
                self._count("bad_mac")
                return
            self._count("legacy_event")
        if kind == "_nop":
            return
        if eseq:
            if self.delivered is not None and eseq <= self.delivered:
                self._count("dup_event")
                if self._ack_since is None:
                    self._ack_since = self._now
                return
            if self.delivered is not None and eseq != self.delivered + 1:
                if not self._fresh:
                    # never deliver (nor acknowledge) past a gap: ask for the outbox again
                    self._count("gap_resync")
                    if not self.pending():
                        self.renegotiate("gap")
                    return
                self._count("event_gap")  # a fresh session starts past it: the shoe lost them
            self._fresh = False
            self.delivered = eseq
            if self._ack_since is None:
                self._ack_since = self._now
            meta = {"prev": prev, "hash": head, "mac": got, "payload": bytes(payload)}
            self._out.append((kind, body, eseq, meta))
        elif kind == "error" and isinstance(body, dict) and body.get("re") in self._ack_ctrs:
            self._count("ack_refused")  # a re-sent _ack the shoe had already applied: harmless
            if body.get("reason") == "ack_ahead":  # not re-sent to it yet: ask again later
                self._acked = 0
                self._ack_since = self._now
        else:
            if kind == "reply" and isinstance(body, dict):
                self._saw_ctr(body.get("re"))  # the shoe accepted (journalled) that counter
            self._out.append((kind, body, 0, None))
