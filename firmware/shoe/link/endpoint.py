"""Endpoint: one end of the reliable, authenticated shoe <-> host link (sans-I/O).

The shoe end (ShoeEndpoint: its state and clock, the receive path, the frames of one transmit)
is here, with its send queue (sendqueue.py: queueing, fragments, acks, retransmission) and
handshake (handshake.py: HELLO, session keys, refusals) as mixins; the host end (HostEndpoint,
host_tools/link/host.py, not firmware) subclasses it, so both ends run the same framing, session
and retransmission code. It never touches a port or a clock: the caller feeds it bytes and the
time. The protocol itself: docs/protocol.md.

    ep = Endpoint("shoe", key, store=journal, shoe_id="3A7F", supervisor_key=sk)
    msgs = ep.receive(chunk, now_ms)      # -> [(kind, body, ref, meta)], verified, exactly once
    out = ep.transmit(now_ms)             # -> bytes-like to write now (empty if nothing)
    ep.send(kind, body)                   # shoe: durable event (journalled first) -> eseq
    ep.send_many([(kind, body), ...], state=obj)  # shoe: events + app state, ONE atomic write
    ep.send(kind, body, durable=False)    # shoe: volatile message (not journalled) -> 0
    ep.reply(ctr, body) / ep.error(ctr, reason)   # shoe: answer command `ctr`
    ep.link_up(now_ms)                    # handshake done and peer heard within timeout_ms

Delivered messages: shoe role gets host commands (kind, body, ctr, role), already authenticated
and counter-checked (failures are answered by an automatic error reply {"re", "reason"} and never
delivered); role = whose key MAC'd it, "table" (the shoe key) or "supervisor" (the supervisor
key): what each may do is the app's (shoe.roles). The host end's deliveries:
host_tools/link/host.py. Protocol errors are counted in `errors()` by reason, never raised.

Reliability (docs/protocol.md section 5): 16-bit transport sequence numbers per session,
cumulative and selective acks, go-back-N retransmission within `window`, heartbeats, link loss
after `timeout_ms`, a new handshake by itself on a stall (`stall_ms`) or before the numbering
runs out, and the session ended at SEQ_LIMIT frames if that handshake never completes; across
sessions and resets the shoe's durable outbox makes delivery exactly-once (the host prunes it
with the authenticated "_ack" command). Sessions: section 3. DATA/MORE payloads are encrypted
(shoe/link/cipher.py) under the session's own encryption key; a frame at a given sequence number
always carries the same payload, retransmitted or not (section 2, "Encryption").
"""
from micropython import const

from shoe.crypto import equal
from shoe.link import codec, frame
from shoe.link.frame import ACK, DATA, HELLO, MORE, PING, REFUSE, frame_mac
from shoe.link.handshake import SUPPORTED, Handshake, new_nonce, nonce_of
from shoe.link.message import CMD_TAG, MSG_TAG, LinkError, bound, open_command
from shoe.link.sendqueue import SEQ_LIMIT as _LIMIT  # also the highest number accepted
from shoe.link.sendqueue import SendQueue

ACK_KIND = "_ack"
_ROLES = ("table", "supervisor")   # whose key MAC'd a command: shoe.roles' TABLE, SUPERVISOR
_MASK = const(0xFFFF)
_TICKS_MASK = const(0x3FFFFFFF)
_TICKS_HALF = const(0x20000000)
_BUDGET = const(0x7000)  # frames per session (both ways) before a new handshake is started
_T_HELLO = b"SHOE3hello"
_T_REFUSE = b"SHOE3refuse"
_T_SHOE = b"SHOE3s"  # session frames sent by the shoe
_T_HOST = b"SHOE3h"  # ... by the host
_D_SHOE = const(1)  # the direction byte of the encryption's counter block: shoe -> host
_D_HOST = const(2)  # host -> shoe


def Endpoint(role, key, **options):
    """Make the endpoint for `role`: "shoe" only here (the firmware); the host end (HostEndpoint)
    and make_endpoint(role, ...) for either role are in host_tools/link/host.py."""
    if role == "shoe":
        return ShoeEndpoint(key, **options)
    raise ValueError("role")


class ShoeEndpoint(SendQueue, Handshake):
    role = "shoe"

    def __init__(self, key, store=None, shoe_id="", supervisor_key=None, window=8, rto_ms=300,
                 hb_ms=1000, timeout_ms=3500, stall_ms=6000, sid=None, nonce=None,
                 nonce_source=None):
        if store is None and self.role == "shoe":
            raise ValueError("store")
        self.key = bytes(key)
        self.store = store
        self._bind(shoe_id)
        self.supervisor_key = bytes(supervisor_key) if supervisor_key else None
        self._cmd_keys = (self.key, self.supervisor_key)   # _ROLES[i]: tried in this order
        self.window = window
        self.rto_ms = rto_ms
        self.hb_ms = hb_ms
        self.timeout_ms = timeout_ms
        self.stall_ms = stall_ms
        if not sid:  # this boot / process (informative; nonces make sessions)
            b = new_nonce()
            sid = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) or 1
        self.sid = sid
        self.peer_sid = 0
        self.peer = None  # the HELLO fields the live session was made with
        self.up = False
        self._new_nonce = nonce_source or new_nonce  # () -> 8 fresh bytes (transcripts: seeded)
        self.nonce = nonce or self._new_nonce()  # offered in our HELLO (`nonce`: a fixed first one)
        self._derive = False  # the nonce source repeated itself: derive them (handshake.py)
        self.peer_nonce = b""  # the peer's nonce we answer
        self._sess = None  # (our nonce, peer's nonce) of the live session
        self._skey = None  # its frame MAC key
        self._ctr = None  # its cipher (shoe/link/cipher.py: the encryption key inside)
        shoe = self.role == "shoe"
        self._tx_tag = _T_SHOE if shoe else _T_HOST
        self._rx_tag = _T_HOST if shoe else _T_SHOE
        self._tx_dir = _D_SHOE if shoe else _D_HOST
        self._rx_dir = _D_HOST if shoe else _D_SHOE
        self.refused = None  # the last refusal made, or heard in answer to our nonce
        self.peer_version = 0  # the last other protocol version byte heard (0: none)
        self.hold = None  # a reason not to bring the session up
        self.deframer = frame.Deframer(self._check)
        self._raw = bytearray(frame.MAX_FRAME)  # scratch for building frames
        self._asm = bytearray(frame.MAX_PAYLOAD)  # reassembly of a fragmented message
        self._asm_mv = memoryview(self._asm)
        self._asm_n = 0
        self.stats = {}
        # awaiting transport ack (sent or not): an int = a durable eseq whose payload stays in the
        # store (no heap object per event), bytes = a volatile message or a host command
        self._txq = []
        self._tx_base = 1
        self._in_flight = 0
        self._rto_at = 0
        self._backoff = 1
        self._rx_next = 1
        self._rxbuf = {}
        self._fast_base = -1
        self._fast_at = 0
        self._nak_at = 0
        self._resend_base = 0
        self._need_ack = False
        self._frames = 0  # frames numbered in this session (both ways)
        self._peer_up = False  # the peer is known to have the live session too
        self._tx_prog = self._rx_prog = 0  # the last progress each way
        self._patience = 1  # x stall_ms: doubled by each stall renegotiation, 1 on progress
        self._sent_max = 0  # the highest eseq sent whole since boot (store: until acked)
        self._need_hello = True
        self._hello_at = 0
        self._hello_last = -1 << 30
        self._last_tx = -1 << 30
        self._last_rx = -1 << 30
        self._refuse = None  # a REFUSE payload to send
        self._out = []
        # sink(bytes): each frame handed on as soon as it is made (the shoe's UART, App._to_host),
        # so the first frame of a transmit() is on the wire while the rest are being made; None:
        # transmit() returns them all at once
        self.sink = None
        self._raw_now = None
        self._clock = 1 << 20  # internal ms clock (starts high: "long ago" stays negative)

    def _bind(self, shoe_id):
        """The shoe whose commands and messages this end seals and opens: their MACs bind its
        id (docs/protocol.md s.4); the tags are computed once."""
        self.shoe_id = shoe_id
        self._cmd_tag = bound(CMD_TAG, shoe_id)
        self._msg_tag = bound(MSG_TAG, shoe_id)

    # ---- counters -------------------------------------------------------------------------
    def _count(self, reason):
        self.stats[reason] = self.stats.get(reason, 0) + 1

    def errors(self):
        """Every counter: the endpoint's (bad_mac, replay, dup, ...) and the deframer's."""
        d = dict(self.stats)
        for k in self.deframer.errors:
            d["frame_" + k] = self.deframer.errors[k]
        return d

    def link_up(self, now_ms):
        return self.up and self._tick(now_ms) - self._last_rx < self.timeout_ms

    def backlog(self):
        """Messages queued or in flight (not yet acknowledged by the transport)."""
        return len(self._txq)

    def quiet(self):
        """Nothing for this end's timers to do within ~100 ms: in a live session no message
        queued or awaiting its ack; no gap in what arrived; no HELLO, ack or refusal owed
        (heartbeats, and HELLOs every 600 ms while no peer answers, excepted: what waits for a
        session waits for the peer, not for a timer). The shoe's ticker may then tick slower."""
        return not ((self.up and self._txq) or self._rxbuf or self._need_hello
                    or self._need_ack or self._refuse is not None)

    # ---- receiving ------------------------------------------------------------------------
    def _tick(self, now_ms):
        """Our own non-wrapping clock from the caller's (time.ticks_ms() wraps at 2**30 ms on
        MicroPython): the elapsed time modulo 2**30, a step back counted as no time."""
        prev = self._raw_now
        self._raw_now = now_ms
        if prev is not None:
            d = (now_ms - prev) & _TICKS_MASK
            if d < _TICKS_HALF:
                self._clock += d
        return self._clock

    def receive(self, data, now_ms):
        now_ms = self._tick(now_ms)
        self._now = now_ms
        self._out = []
        try:
            self.deframer.feed(data, self._on_frame)
        except Exception as e:  # never raised to the caller: counted
            self._count("internal")
            self.last_internal = repr(e)
        df = self.deframer
        if df.bad_version:
            self.peer_version = df.bad_version
            df.bad_version = 0
            if self._refuse is None:
                self._refuse = {"reason": "version", "supported": list(SUPPORTED),
                                "pn": nonce_of(df.bad_hello) if df.bad_hello else b""}
        self._check_limit()
        out = self._out
        self._out = []
        return out

    def _check(self, ftype, signed, got):
        """The Deframer's MAC check: HELLO and REFUSE under the shoe's key, everything else under
        the live session's key (none: dropped)."""
        if ftype == HELLO:
            key, tag = self.key, _T_HELLO
        elif ftype == REFUSE:
            key, tag = self.key, _T_REFUSE
        else:
            key, tag = self._skey, self._rx_tag
            if key is None:
                return False
        if equal(frame_mac(key, tag, signed), got):
            return True
        if ftype == HELLO:  # another key (or a forgery): answered, changes nothing
            self._count("bad_key")
            self._refuse = {"reason": "bad_key", "pn": nonce_of(signed[frame.HEADER:])}
            if not self.up:
                self.refused = "bad_key"
        elif ftype == REFUSE:  # a peer with another key cannot MAC it: heard, marked unverified
            self._count("refuse_unverified")
            self._on_refuse(bytes(signed[frame.HEADER:]), False)
        return False

    def _on_frame(self, ftype, seq, ack, payload):
        if ftype == HELLO:
            self._on_hello(payload)
            return
        if ftype == REFUSE:
            self._on_refuse(payload, True)
            return
        if not self.up:
            self._count("not_up")
            self._need_hello = True
            return
        self._peer_up = True  # a frame under the session key: the peer has it
        self._last_rx = self._now
        self._on_ack(ack)
        if ftype == ACK and seq and self._in_flight and (
                self._fast_base != self._tx_base or self._now - self._fast_at >= self.rto_ms // 3):
            # the peer holds later frames (seq = bitmap of them): the base and any frame not in
            # the bitmap were lost; resend those now instead of waiting for the timeout
            self._fast_base = self._tx_base
            self._fast_at = self._now
            self._resend_base = seq | 0x10000
        if ftype != DATA and ftype != MORE:
            return
        self._need_ack = True
        self._frames += 1
        if seq > _LIMIT or not seq:  # never numbered so under one key (the peer stops first)
            self._count("seq_limit_rx")
            return
        ahead = (seq - self._rx_next) & _MASK
        if ahead:
            if ahead >= 0x8000:
                self._count("dup")
            elif ahead < self.window and seq not in self._rxbuf:
                self._count("ooo")
                self._rxbuf[seq] = (ftype, self._ctr.crypt(self._rx_dir, ftype, seq, payload))
            else:
                self._count("ooo_drop")
            return
        self._deliver(ftype, self._ctr.crypt(self._rx_dir, ftype, seq, payload))
        while self._rxbuf:
            p = self._rxbuf.pop(self._rx_next, None)
            if p is None:
                break
            self._deliver(p[0], p[1])

    def _held(self):
        """Bit i set: frame rx_next + 1 + i is held (arrived after the missing rx_next)."""
        m = 0
        for q in self._rxbuf:
            i = ((q - self._rx_next) & _MASK) - 1
            if 0 <= i < 16:
                m |= 1 << i
        return m

    def _deliver(self, ftype, payload):
        self._rx_next = (self._rx_next + 1) & _MASK
        self._rx_prog = self._now
        self._patience = 1
        n = self._asm_n
        if ftype == MORE or n:  # reassemble in the preallocated buffer
            m = len(payload)
            if n < 0 or n + m > frame.MAX_PAYLOAD:
                self._asm_n = -1  # too long: drop the message up to its last fragment
                if ftype == DATA:
                    self._asm_n = 0
                    self._count("too_long")
                return
            self._asm[n:n + m] = payload
            n += m
            if ftype == MORE:
                self._asm_n = n
                return
            self._asm_n = 0
            payload = self._asm_mv[0:n]
        self._on_data(payload)

    def _on_data(self, payload):  # a host command
        try:
            kind, body, ctr, i = open_command(payload, self._cmd_keys, self._cmd_tag)
        except LinkError as e:
            self._count(e.reason)
            self._auto_error(e.detail if isinstance(e.detail, int) else None, e.reason)
            return
        st = self.store
        if ctr <= st.ctr:
            self._count("replay")
            self._auto_error(ctr, "replay")
            return
        if kind == ACK_KIND:
            upto = body.get("upto") if isinstance(body, dict) else None
            if not isinstance(upto, int) or upto < 0 or upto > st.eseq:
                self._count("malformed")
                st.set_ctr(ctr)
                self._auto_error(ctr, "malformed")
                return
            if upto > max(self._sent_max, st.outbox_first() - 1):
                # above anything we have sent: the host cannot hold it; change nothing
                self._count("ack_ahead")
                self._auto_error(ctr, "ack_ahead")
                return
            if upto < st.outbox_first():
                # nothing left to prune (the host acknowledges again at every new session):
                # no journal write, not even of the counter, so handshakes cost no flash
                self._count("ack_noop")
                return
            self._detach(upto)
            st.outbox_ack(upto, ctr)
            self._drop_acked()
            return
        if kind[:1] == "_":
            st.set_ctr(ctr)
            self._auto_error(ctr, "unknown")
            return
        st.set_ctr(ctr)  # persisted before the application acts on it
        self._out.append((kind, body, ctr, _ROLES[i]))

    def _auto_error(self, ctr, reason):
        try:
            self.error(ctr, reason)
        except LinkError:
            self._count("dropped_reply")

    def _frame(self, ftype, seq, payload=b""):
        if ftype == HELLO:
            key, tag = self.key, _T_HELLO
        elif ftype == REFUSE:
            key, tag = self.key, _T_REFUSE
        else:
            key, tag = self._skey, self._tx_tag
            if ftype == DATA or ftype == MORE:  # encrypt-then-MAC
                payload = self._ctr.crypt(self._tx_dir, ftype, seq, payload)
        out = self._out_bytes
        if out is None:  # the first frame of this transmit(): a leading delimiter cuts off
            out = self._out_bytes = bytearray(b"\x00")  # any line noise before it
        frame.build_into(out, self._raw, ftype, seq, (self._rx_next - 1) & _MASK,
                         payload, frame.VERSION, key, tag)
        if self.sink is not None:
            self.sink(out)   # (it copies what it keeps)
            out[:] = b""

    # ---- transmitting ---------------------------------------------------------------------
    def wire_busy(self, now_ms):
        """The caller's transmitter still holds bytes for the peer (what went before is still
        on the wire): the retransmission timer does not run out now. It counts from the
        wire's last busy moment, not from when frames were queued behind others (at 115200
        baud a reply of 6 frames is ~65 ms on the wire: with the timer at 100 ms from their
        queueing, a whole batch went out twice and a round's first card waited behind the
        copy). Called before transmit() (App.pump); a method of its own, so that transmit's
        VM frame stays on the C stack (tests/firmware/app/test_idle_alloc.py)."""
        if self._in_flight:
            t = self._tick(now_ms) + self.rto_ms * self._backoff
            if t > self._rto_at:
                self._rto_at = t

    def transmit(self, now_ms):
        now_ms = self._tick(now_ms)
        self._now = now_ms
        self._out_bytes = None  # made by the first frame: an idle call allocates nothing
        self._check_limit()
        self._drop_acked()
        if self._refuse is not None:
            self._frame(REFUSE, 0, codec.encode(self._refuse))
            self._refuse = None
        if self.pending():  # a handshake under way (the live session, if any, carries on)
            if (self._need_hello and now_ms - self._hello_last >= 50) or now_ms >= self._hello_at:
                self._send_hello(now_ms)
            if not self.up:
                return self._finish(now_ms)
        elif self._need_hello or (not self._peer_up and now_ms >= self._hello_at):
            self._send_hello(now_ms)
        if not self._in_flight:
            self._tx_prog = now_ms
        if not self._rxbuf:
            self._rx_prog = now_ms
        stall = self.stall_ms * self._patience
        if not self.pending() and (
                self._frames >= _BUDGET
                or (now_ms - min(self._tx_prog, self._rx_prog) >= stall
                    and now_ms - self._last_rx < self.timeout_ms)
                or (self._in_flight and now_ms - self._last_rx >= stall)):
            # frames arrive but nothing moves, or nothing authentic arrives while frames wait
            # for an ack (a peer gone, or one whose session key is not ours), or the numbering
            # would wrap: a new handshake (fresh keys; the live session carries on meanwhile).
            # Until something moves again each one waits twice as long (up to 8 x stall_ms): a
            # peer slower than our timers is not buried under handshakes it cannot keep up with
            if self._frames < _BUDGET:
                self._patience = min(self._patience * 2, 8)
            self.renegotiate("rekey" if self._frames >= _BUDGET else "stall" if
                             now_ms - self._last_rx < self.timeout_ms else "silent")
            self._send_hello(now_ms)
        self._before_data(now_ms)
        sent_data = self._send_data(now_ms)
        if self._rxbuf and now_ms - self._nak_at >= self.rto_ms // 3:
            self._need_ack = True  # still a gap: remind the sender what is missing
        if self._need_ack and (not sent_data or self._rxbuf):
            self._frame(ACK, self._held())  # seq field: bitmap of frames held beyond the gap
            self._nak_at = now_ms
        elif not sent_data and now_ms - self._last_tx >= self.hb_ms:
            self._frame(PING, 0)
        self._need_ack = False
        return self._finish(now_ms)

    def _before_data(self, now_ms):
        pass

    def _finish(self, now_ms):
        out = self._out_bytes
        self._out_bytes = None
        if out is None:
            return b""
        self._last_tx = now_ms
        return out


