"""The session handshake of the link (a mixin of ShoeEndpoint, shoe/link/endpoint.py): HELLO
frames with version, roles, session ids and a MAC, refusals, and a new session when the peer
restarts (docs/protocol.md section 3)."""
from shoe.crypto import equal
from shoe.link import codec
from shoe.link.frame import HELLO
from shoe.link.message import hello_mac
from shoe.link.sendqueue import _nfrag, _whole_messages

PROTOCOL = 1
SUPPORTED = (1,)


class Handshake:
    def _hello_fields(self):
        f = {"v": PROTOCOL, "role": self.role, "sid": self.sid, "peer": self.peer_sid,
             "up": self.up, "id": self.shoe_id, "ctr": self.store.ctr, "eseq": self.store.eseq}
        if getattr(self.store, "boot", None) is not None:
            f["boot"] = self.store.boot
        return f

    def _on_hello(self, payload):
        try:
            h = codec.decode(payload)
            v = h.get("v")
            sid = h.get("sid")
            role = h.get("role")
            mac = h.pop("mac", None)
        except Exception:
            self._count("bad_hello")
            return
        if v not in SUPPORTED:
            self._count("version")
            self._refuse = {"reason": "version", "supported": list(SUPPORTED), "got": v}
            self.refused = "version"
            return
        if role == self.role or not isinstance(sid, int) or not sid:
            self._count("bad_hello")
            self._refuse = {"reason": "role"}
            return
        if not isinstance(mac, bytes) or not equal(hello_mac(self.key, h), mac):
            self._count("bad_key")
            self._refuse = {"reason": "bad_key"}
            self.refused = "bad_key"
            return
        self._last_rx = self._now
        if sid != self.peer_sid:
            self._new_session(h)
            self._need_hello = True
        elif h.get("peer") != self.sid or not h.get("up"):
            self._need_hello = True
        if self.hold:  # this end refuses the session (host: the shoe's sequence went back)
            self.refused = self.hold
            return
        if h.get("peer") == self.sid and not self.up:
            self.up = True
            self.refused = None
            self._count("sessions")
            self._on_up()

    def _on_up(self):
        pass

    def _new_session(self, h):
        self.peer_sid = h["sid"]
        self.peer = h
        self.up = False
        self._rx_next = 1
        self._rxbuf = {}
        self._asm_n = 0
        self._resend_base = 0
        self._tx_base = 1
        self._in_flight = 0
        self._backoff = 1
        self._need_ack = False
        self._txq = _whole_messages(self._txq)
        self._requeue(h)

    def _requeue(self, h):
        """A new session: the whole durable outbox again, then the volatile messages."""
        out = []
        for e in range(self.store.outbox_first(), self.store.eseq + 1):
            for i in range(_nfrag(len(self.store.payload(e)))):
                out.append(e * 16 + i)
        self._txq = out + self._txq

    def _send_hello(self, now_ms):
        f = self._hello_fields()
        f["mac"] = hello_mac(self.key, self._hello_fields())
        self._frame(HELLO, 0, codec.encode(f))
        self._need_hello = False
        self._hello_last = now_ms
        self._hello_at = now_ms + self.hb_ms
