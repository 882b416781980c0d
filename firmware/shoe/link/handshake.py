"""The session handshake of the link (a mixin of ShoeEndpoint, shoe/link/endpoint.py), protocol
version 3 (docs/protocol.md section 3).

Each end offers a fresh nonce in its HELLO (MAC'd with the shoe's key) and brings a session up
only on a HELLO that echoes the nonce it offered: the peer holds the key and is live now. The
session's MAC key and encryption key derive from both nonces; a HELLO that proves nothing never
touches the live session, which is replaced only when the new handshake completes.
`renegotiate()` starts one from this end (a stall, a counter near its limit); `_check_limit()`
ends a session whose sequence numbers ran out. A REFUSE changes nothing: one that names the nonce this
end offers now is remembered (`refused`, `refused_info`) for a caller to say why no session came
up, any other is counted (`refuse_stale`) and ignored. The rules in full: docs/protocol.md s.3.
"""
from shoe.link import codec
from shoe.link.cipher import Ctr
from shoe.link.frame import HELLO
from shoe.link.message import mac
from shoe.link.sendqueue import SEQ_LIMIT, whole_messages

PROTOCOL = 3
SUPPORTED = (3,)
_SESS = b"SHOE3sess"  # the session's frame MAC key
_ENC = b"SHOE3enc"  # the session's encryption key (AES-128)
_NONCE = b"SHOE3nonce"  # a nonce derived when the random source repeats itself


def nonce_of(payload):
    """The nonce `n` a HELLO payload offers (b"" if it has none): what a REFUSE answers."""
    try:
        n = codec.decode(payload).get("n")
        return n if isinstance(n, bytes) and len(n) == 8 else b""
    except Exception:
        return b""


def new_nonce():
    try:
        import os
        return bytes(os.urandom(8))
    except Exception:  # a port without os.urandom
        import random
        return bytes(random.getrandbits(8) for _ in range(8))


class Handshake:
    def _hello_fields(self):
        f = {"v": PROTOCOL, "role": self.role, "sid": self.sid, "n": self.nonce,
             "pn": self.peer_nonce, "up": self.up and not self.pending(),
             "id": self.shoe_id, "ctr": self.store.ctr, "eseq": self.store.eseq}
        if getattr(self.store, "boot", None) is not None:
            f["boot"] = self.store.boot
        return f

    def pending(self):
        """True while this end offers a nonce no session uses yet (a handshake under way)."""
        return self._sess is None or self._sess[0] != self.nonce

    def _fresh_nonce(self):
        """A nonce this end has not offered before: the source's, unless it repeats the last one
        (a random source stuck on the same bytes, as the emulated RP2040's is); from then on a
        MAC of it, the last nonce and the boot count. With a repeated nonce the peer brought up
        a session this end never made: the old key on one side, the new one on the other."""
        n = self._new_nonce()
        if n == self.nonce or self._derive:
            if not self._derive:
                self._count("nonce_repeat")
            self._derive = True
            boot = str(getattr(self.store, "boot", 0)).encode()
            n = mac(self.key, _NONCE, self.nonce + n + boot)[:8]
        return n

    def renegotiate(self, reason="renegotiate"):
        """Start a new handshake; the live session carries on until it completes."""
        self._count(reason)
        if not self.pending():
            self.nonce = self._fresh_nonce()
        self._need_hello = True
        self._hello_last = -1 << 30

    def _on_hello(self, payload):  # its frame MAC (shoe's key) already verified
        try:
            h = codec.decode(payload)
            v = h.get("v")
            n = h.get("n")
            pn = h.get("pn")
            role = h.get("role")
        except Exception:
            self._count("bad_hello")
            return
        if v not in SUPPORTED:
            self._count("version")
            self._refuse = {"reason": "version", "supported": list(SUPPORTED), "got": v,
                            "pn": n if isinstance(n, bytes) else b""}
            self.refused = "version"
            return
        if (role == self.role or not isinstance(n, bytes) or len(n) != 8
                or not isinstance(pn, bytes)):
            self._count("bad_hello")
            self._refuse = {"reason": "role", "pn": n if isinstance(n, bytes) else b""}
            return
        if pn == self.nonce and self.pending():
            self._establish(h)  # it answers the nonce we just offered: live, holds the key
            return
        s = self._sess
        if s is not None and s[1] == n:  # the live session's peer
            if pn == s[0]:
                self._last_rx = self._now
                if h.get("up"):
                    self._peer_up = True
                else:
                    self._need_hello = True  # it has not heard our last HELLO yet
            else:
                self._count("hello_stale")  # sent before the session came up: nothing to do
            return
        # proves nothing yet (a new peer, a restarted one, or a replay): offer a fresh nonce;
        # the live session, if any, stays until the peer answers it
        self._count("hello_new")
        if not self.pending():
            self.nonce = self._fresh_nonce()
        self.peer_nonce = n
        self._need_hello = True

    def _establish(self, h):
        n = h["n"]
        self.peer_nonce = n
        self._need_hello = True
        self.peer_sid = h.get("sid")
        self._new_session(h)
        if self.hold:  # this end refuses the session (host: the shoe's counters went back)
            self.refused = self.hold
            self._need_hello = False  # silence: the shoe keeps asking, we keep refusing
            return
        self._sess = (self.nonce, n)
        both = self.nonce + n if self.role == "shoe" else n + self.nonce
        self._skey = mac(self.key, _SESS, both)  # 16 bytes: HMAC-SHA256 truncated
        self._ctr = Ctr(mac(self.key, _ENC, both))  # another 16: AES-128, its own key
        self.up = True
        self.refused = None
        self._last_rx = self._now
        self._tx_prog = self._rx_prog = self._now
        self._peer_up = bool(h.get("up"))  # until it is, our HELLO is repeated
        self._count("sessions")
        self._on_up()

    def _on_up(self):
        pass

    def _check_limit(self):
        """Either way's numbering reached SEQ_LIMIT: this session ends (docs/protocol.md s.5):
        its keys are forgotten, nothing but HELLOs goes out until a new handshake completes, so
        no number is ever used twice under one key."""
        if not self.up or self._sess is None or (
                self._tx_base + self._in_flight <= SEQ_LIMIT and self._rx_next <= SEQ_LIMIT):
            return
        self.renegotiate("seq_limit")  # a fresh nonce, unless one is on offer already
        self.up = False
        self._skey = None
        self._ctr = None
        self._sess = None

    def _new_session(self, h):
        self.peer = h
        self.up = False
        self._skey = None
        self._ctr = None
        self._sess = None
        self._rx_next = 1
        self._rxbuf = {}
        self._asm_n = 0
        self._resend_base = 0
        self._tx_base = 1
        self._in_flight = 0
        self._backoff = 1
        self._need_ack = False
        self._frames = 0
        self._txq = whole_messages(self._txq)
        self._requeue(h)

    def _send_hello(self, now_ms):
        self._frame(HELLO, 0, codec.encode(self._hello_fields()))
        self._need_hello = False
        self._hello_last = now_ms
        self._hello_at = now_ms + min(self.hb_ms, 2 * self.rto_ms)

    def _on_refuse(self, payload, verified):
        """A REFUSE changes nothing. One that answers the HELLO this end offers now (its `pn` is
        our nonce) is remembered (`refused`, `refused_info`) so that a caller whose handshake has
        not succeeded by its deadline can say why; any other (a replay of an old refusal, one
        made up) is counted and ignored."""
        try:
            info = codec.decode(payload)
            pn = info.get("pn")
        except Exception:
            info = pn = None
        if pn != self.nonce:
            self._count("refuse_stale")
            return
        self._count("refused")
        if self.up:
            return
        self.refused = str(info.get("reason", "refused"))
        info["verified"] = verified
        self.refused_info = info
