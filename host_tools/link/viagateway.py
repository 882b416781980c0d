"""GatewayLink: the table system's end of a gateway's API, with ShoeLink's face.

    link = GatewayLink("gateway+unix:///var/lib/shoe/T01.api.sock", supervisor_key=k, role=None)
    link.open(timeout=10); link.command("open_round", {...}); link.next_event(1.0); link.close()

`shoectl table`, `session --port` and `monitor` use it where they would use a ShoeLink (the
factory host_tools.link.link_for picks it for a gateway+unix:// or gateway+tcp:// address). The
gateway holds the shoe's link; this process proves the API credential (apiwire.py) and says its
role: `reader` (status and events), `table` (what the gateway's table key may send; the shoe
decides the rest) or `supervisor` (this process holds the supervisor key: a command the table
key does not always suffice for is sealed HERE with it, for the counter the gateway offers,
exactly as a direct link would seal it; the gateway forwards the sealed bytes and the shoe
checks the key and the role). Events arrive as the gateway's link delivers them (the same
face-down commitments and reveals): from the moment this client is welcome, in order.
The gateway's reveal checks arrive as its `reveal_mismatch` events; `watch` (RoundWatch) here
only keeps the revealed hands for a re-evaluation (`monitor`), loading a round's earlier events
from the gateway's store when this client joined mid-round.
"""

import collections
import os
import queue
import ssl
import threading
import time

from host_tools.errors import ShoeError
from host_tools.link import apiwire
from host_tools.link.host import seal_command
from host_tools.link.shoelink import READ_ONLY
from shoe import roles


class _EpView:
    """What callers read of a ShoeLink's Endpoint: its session count and key."""

    def __init__(self):
        self.stats = {"sessions": 0}
        self.key = None
        self.refused = None
        self.up = False


class GatewayLink:
    def __init__(
        self,
        url,
        key=None,
        supervisor_key=None,
        audit=None,
        role=None,
        reconnect_s=0.5,
        **_ignored,
    ):
        self.url = url
        self.supervisor_key = supervisor_key
        self.role = role or ("supervisor" if supervisor_key else "table")
        if self.role not in apiwire.ROLES:
            raise ValueError("role")
        self.key_file = apiwire.key_path(url, self.role)  # the reader's own credential
        self.client_name = None  # set from the key file at open(): a named client's
        if self.role == "supervisor" and not supervisor_key:
            raise ShoeError("the supervisor role needs the supervisor key")
        self.audit = None  # the gateway's store holds every event
        self.shoe_id = None
        self.ep = _EpView()
        self.events = queue.Queue()
        self.fatal = None
        self.resyncs = 0
        self.reconnects = 0
        self.reconnect_s = reconnect_s  # None: a lost connection is final (fatal)
        self.gaps = []  # (first, last) eseq ranges the gateway's store no longer held
        self._last = 0  # the last durable event (eseq) queued: where a catch-up starts
        self._alerts = set()  # (kind, eseq, detail) of the alerts queued lately
        self._alert_order = collections.deque()
        self._connected = threading.Event()  # set while requests may be sent on _sock
        self._sock = None
        self._send_lock = threading.Lock()
        self._ids = 0
        self._waiting = {}  # request id -> [Event, reply]
        self._thread = None
        self._closing = threading.Event()  # close(): ends the reader and its reconnecting
        from host_tools.reveal import RoundWatch

        self.watch = RoundWatch(loader=self._round_events)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- life cycle -----------------------------------------------------------------------
    def open(self, timeout=10.0):
        """Connect, prove the credential, and wait until the gateway's link to the shoe is up;
        ShoeError naming what failed."""
        self.client_name, secret = apiwire.load_credential(self.key_file)
        deadline = time.monotonic() + timeout
        while True:
            try:
                sock = apiwire.connect(self.url, max(0.1, deadline - time.monotonic()))
                break
            except OSError as e:
                if isinstance(e, ssl.SSLError):  # not a certificate our CA signed: no retry
                    raise ShoeError(
                        "the gateway on %s failed the TLS check: %s" % (self.url, e.reason or e)
                    ) from None
                if time.monotonic() >= deadline:
                    raise ShoeError(
                        "no gateway answers on %s (%s): is `shoectl gateway` running "
                        "with this API address?" % (self.url, e.strerror or e)
                    ) from None
                time.sleep(0.1)
        try:
            welcome = self._handshake(sock, secret, deadline)
        except BaseException:
            sock.close()
            raise
        sock.settimeout(None)
        self._sock = sock
        self._connected.set()
        self.shoe_id = welcome.get("shoe")
        self._link_state(welcome)
        self._thread = threading.Thread(target=self._run, name="gateway-client", daemon=True)
        self._thread.start()
        while not self.ep.up:
            if self.fatal:
                raise ShoeError(self.fatal)
            if time.monotonic() >= deadline:
                raise ShoeError(
                    "the gateway on %s has no link to the shoe (its link has been "
                    "down for %.0f s)" % (self.url, timeout)
                )
            time.sleep(0.02)
        return self

    def _handshake(self, sock, secret, deadline):
        sock.settimeout(max(0.5, deadline - time.monotonic()))
        try:
            ch = apiwire.recv(sock)
            if ch.get("t") != "challenge" or not isinstance(ch.get("nonce"), bytes):
                raise ShoeError("%s is not a shoe gateway's API" % self.url)
            if ch.get("v") != apiwire.VERSION:
                raise ShoeError(
                    "the gateway on %s speaks API version %r, this host %d"
                    % (self.url, ch.get("v"), apiwire.VERSION)
                )
            cnonce = os.urandom(16)
            auth = {
                "t": "auth",
                "role": self.role,
                "cnonce": cnonce,
                "mac": apiwire.client_proof(secret, ch["nonce"], cnonce, self.role),
            }
            if self.client_name:  # a named client's own credential (floor/apiclients.py)
                auth["client"] = self.client_name
            apiwire.send(sock, auth)
            rep = apiwire.recv(sock)
        except (apiwire.WireError, OSError) as e:
            raise ShoeError(
                "the gateway on %s closed the connection during the login (%s)" % (self.url, e)
            ) from None
        if rep.get("t") == "refused":
            raise ShoeError(
                "the gateway on %s refused this client: %s"
                % (self.url, rep.get("message") or rep.get("reason")),
                rep.get("reason"),
            )
        import hmac

        want = apiwire.server_proof(secret, ch["nonce"], cnonce, self.role)
        if rep.get("t") != "welcome" or not hmac.compare_digest(
            want, rep.get("mac") if isinstance(rep.get("mac"), bytes) else b""
        ):
            raise ShoeError(
                "the gateway on %s did not prove the API key: not our gateway" % self.url
            )
        return rep

    def close(self):
        self._closing.set()
        if self._sock is not None:
            try:
                self._sock.shutdown(2)
            except OSError:
                pass
            self._sock.close()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None

    def up(self):
        return self.ep.up and not self.fatal

    def stats(self):
        """The gateway's link figures (as ShoeLink.stats: no key, no payload) and `via`."""
        out = {"up": self.up(), "shoe_id": self.shoe_id}
        try:
            rep = self._request({"t": "stats"}, 5.0, again=True)
            if rep.get("ok") and isinstance(rep.get("body"), dict):
                out = dict(rep["body"])
        except ShoeError:
            pass
        out["via"] = self.url
        return out

    # ---- the reader thread ----------------------------------------------------------------
    def _link_state(self, msg):
        self.ep.up = bool(msg.get("up"))
        if isinstance(msg.get("sessions"), int):
            self.ep.stats["sessions"] = msg["sessions"]

    def _run(self):
        """Read the gateway's messages. A lost connection (the gateway restarted, or dropped
        this client for lagging) is made again every `reconnect_s` (the key file read again),
        and the events stored meanwhile are fetched (`since`) before the live ones, each once
        and in order; requests wait for it, and one in flight when it was lost is asked again
        only if it changes nothing (_request). A `bye` (a revoked credential, bad input), a
        refused login, another shoe behind the address, or close() end it for good."""
        while True:
            why, final = self._read(self._sock)
            self.ep.up = False
            with self._send_lock:  # after this no request is sent on the lost connection
                self._connected.clear()
                for w in list(self._waiting.values()):
                    w[0].set()
            if self._closing.is_set():
                self._connected.set()
                return
            if final or self.reconnect_s is None:
                self.fatal = why
                self._connected.set()  # wake the requests waiting for it: they see `fatal`
                return
            if not self._reconnect(why):
                self._connected.set()  # (fatal or closed): the waiting requests give up
                return

    def _deliver(self, msg):
        eseq = msg.get("eseq") or 0
        body = msg.get("body")
        if eseq == 0 and isinstance(body, dict) and isinstance(body.get("eseq"), int):
            # an alert about an event: live and in a catch-up reply both, queued once
            key = (msg.get("kind"), body["eseq"], str(body.get("detail")))
            if key in self._alerts:
                return
            self._alerts.add(key)
            self._alert_order.append(key)
            if len(self._alert_order) > 1024:
                self._alerts.discard(self._alert_order.popleft())
        if isinstance(eseq, int) and eseq > 0:
            if eseq <= self._last:
                return  # already queued (live and in a catch-up reply both)
            if self._last and eseq > self._last + 1:  # not in the gateway's store any more
                self.gaps.append((self._last + 1, eseq - 1))  # (pruned once the floor held it)
            self._last = eseq
        self.events.put((msg.get("kind"), msg.get("body"), eseq))

    def _read(self, sock, until=None):
        """Messages until the connection ends -> (why, final); with `until` (a request id), only
        until that reply, which is returned as ("reply", msg) (events before it are held back
        and returned with it: ("reply", msg, held))."""
        held = []
        try:
            while True:
                msg = apiwire.recv(sock)
                t = msg["t"]
                if t == "event":
                    if until is None:
                        self._deliver(msg)
                    else:
                        held.append(msg)
                elif t == "link":
                    self._link_state(msg)
                elif t in ("reply", "prepared"):
                    if until is not None and msg.get("id") == until:
                        return "reply", msg, held
                    w = self._waiting.get(msg.get("id"))
                    if w is not None:
                        w[1] = msg
                        w[0].set()
                elif t == "bye":
                    why = msg.get("message") or "the gateway said bye"
                    return "the gateway on %s closed the connection (%s)" % (self.url, why), True
        except (apiwire.WireError, OSError, KeyError) as e:
            return "the gateway on %s closed the connection (%s)" % (self.url, e), False

    def _reconnect(self, why):
        """Connect and log in again until it works or is refused for good; then catch up."""
        shoe = self.shoe_id
        while not self._closing.is_set():
            if self._closing.wait(self.reconnect_s):
                return False
            try:
                sock = apiwire.connect(self.url, 5.0)
            except ssl.SSLError as e:
                self.fatal = "the gateway on %s failed the TLS check: %s" % (self.url, e)
                return False
            except OSError:
                continue  # the gateway is not back yet
            try:
                # the key file again: a gateway writes fresh built-in keys at each start
                self.client_name, secret = apiwire.load_credential(self.key_file)
                welcome = self._handshake(sock, secret, time.monotonic() + 10.0)
                if shoe is not None and welcome.get("shoe") not in (None, shoe):
                    raise ShoeError(
                        "the gateway on %s now serves shoe %r, not %r"
                        % (self.url, welcome.get("shoe"), shoe),
                        "other_shoe",
                    )
                sock.settimeout(None)
                with self._send_lock:
                    old, self._sock = self._sock, sock
                    try:
                        old.close()
                    except OSError:
                        pass
                    self._ids += 1
                    rid = self._ids
                    self._connected.set()  # requests go out again (their replies: _read)
                self.shoe_id = shoe or welcome.get("shoe")
                self._link_state(welcome)
                self.reconnects += 1
                if self._catch_up(sock, rid):
                    return True
                self.ep.up = False
                with self._send_lock:  # lost again during the catch-up: as in _run
                    self._connected.clear()
                    for w in list(self._waiting.values()):
                        w[0].set()
            except ShoeError as e:
                sock.close()
                if e.reason not in (None, "busy"):  # refused: credential, role, certificate
                    self.fatal = "%s (after: %s)" % (e, why)
                    return False
            except (apiwire.WireError, OSError):
                sock.close()
        return False

    def _catch_up(self, sock, rid):
        """The stored events after the last one queued, then the live ones that came meanwhile
        (each once: by eseq). False if the connection ended again."""
        while True:
            try:
                with self._send_lock:
                    apiwire.send(sock, {"t": "since", "id": rid, "eseq": self._last})
            except OSError:
                return False
            got = self._read(sock, until=rid)
            if got[0] != "reply":
                return False
            _, rep, held = got
            body = rep.get("body") if rep.get("ok") else None
            evs = body.get("events") if isinstance(body, dict) else None
            evs = [e for e in evs or () if isinstance(e, list) and len(e) == 3]
            for kind, b, eseq in evs:
                self._deliver({"kind": kind, "body": b, "eseq": eseq})
            for msg in held:
                self._deliver(msg)
            if not (isinstance(body, dict) and body.get("more") and evs):
                return True
            with self._send_lock:
                self._ids += 1
                rid = self._ids

    # ---- requests -------------------------------------------------------------------------
    def _request(self, msg, timeout, again=False):
        """Send a request and wait for its reply. While the connection is being made again the
        request waits for it (within `timeout`) and is sent then: nothing was sent yet, so
        nothing can be done twice. One sent on a connection lost before its reply has an unknown
        outcome: sent again (on the new connection) only when `again` says it changes nothing
        (a query); else ShoeError `link_lost`."""
        deadline = time.monotonic() + timeout
        what = msg.get("kind") or msg["t"]
        while True:
            if self.fatal:
                raise ShoeError(self.fatal)
            if self._closing.is_set():
                raise ShoeError("the link to the gateway on %s is closed" % self.url)
            w = None
            with self._send_lock:  # the same lock _run holds to mark a loss and release waiters
                if self._connected.is_set():
                    self._ids += 1
                    rid = msg["id"] = self._ids
                    w = self._waiting[rid] = [threading.Event(), None]
                    try:
                        apiwire.send(self._sock, msg)
                    except OSError:
                        pass  # lost under it: _run releases the waiter (no reply)
            if w is None:
                if not self._connected.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                    if time.monotonic() >= deadline:
                        raise ShoeError(
                            "%s: the gateway on %s was not reachable again within %.1f s"
                            % (what, self.url, timeout)
                        )
                continue
            w[0].wait(max(0.0, deadline - time.monotonic()))
            self._waiting.pop(rid, None)
            if w[1] is not None:
                return w[1]
            if self.fatal:
                raise ShoeError(self.fatal)
            if not w[0].is_set():
                raise ShoeError(
                    "%s: no answer from the gateway on %s within %.1f s"
                    % (what, self.url, timeout)
                )
            # released by the loss of the connection
            if not again or self.reconnect_s is None or time.monotonic() >= deadline:
                raise ShoeError(
                    "%s: the connection to the gateway on %s was lost before its answer: "
                    "its outcome is unknown (ask status)" % (what, self.url),
                    "link_lost",
                )

    @staticmethod
    def _result(rep):
        if rep.get("ok"):
            return rep.get("body")
        err = ShoeError(rep.get("message") or rep.get("reason") or "refused", rep.get("reason"))
        if isinstance(rep.get("body"), dict):
            err.body = rep["body"]
        raise err

    def command(self, kind, body=None, timeout=5.0, supervisor=None):
        """As ShoeLink.command: the key from the roles table (the supervisor's, sealed here,
        when this client holds it and the table key does not always do), or as told."""
        if supervisor and not self.supervisor_key:
            raise ShoeError(
                "%s needs the supervisor key (this host has none)" % kind, "needs_supervisor"
            )
        if supervisor is None:
            supervisor = bool(self.supervisor_key) and not roles.table_suffices(kind)
        body = {} if body is None else body
        if not supervisor:
            return self._result(
                self._request(
                    {"t": "command", "kind": kind, "body": body, "timeout": float(timeout)},
                    timeout + 5.0,
                    again=kind in READ_ONLY,  # a query asked again after a lost connection
                )
            )
        deadline = time.monotonic() + timeout
        while True:  # seal for the counter the gateway's link will use next
            left = deadline - time.monotonic()
            prep = self._request({"t": "prepare"}, max(left, 0.0) + 5.0)
            ctr, shoe = prep.get("ctr"), prep.get("shoe")
            if not prep.get("ok") or not isinstance(ctr, int) or not isinstance(shoe, str):
                if prep.get("reason") != "not_up" or left <= 0:
                    return self._result(prep)
                time.sleep(0.02)
                continue
            payload = seal_command(self.supervisor_key, kind, body, ctr, shoe)
            rep = self._request(
                {
                    "t": "sealed",
                    "kind": kind,
                    "ctr": ctr,
                    "payload": payload,
                    "timeout": max(left, 0.5),
                },
                max(left, 0.5) + 5.0,
            )
            if rep.get("reason") == "stale_counter" and time.monotonic() < deadline:
                continue  # the gateway's link sent a command meanwhile (an ack): seal again
            return self._result(rep)

    def _round_events(self, rnd):
        try:
            rep = self._request({"t": "round", "round": rnd}, 10.0, again=True)
        except ShoeError:
            return []
        evs = (rep.get("body") or {}).get("events") if rep.get("ok") else None
        return [tuple(e) for e in evs or () if isinstance(e, list) and len(e) == 2]

    def next_event(self, timeout=None):
        """The next event (kind, body, eseq) in order, or None after `timeout` seconds."""
        if self.fatal and self.events.empty():
            raise ShoeError(self.fatal)
        try:
            ev = self.events.get(timeout=timeout)
        except queue.Empty:
            return None
        try:
            self.watch.feed(ev[0], ev[1])  # the hands for a re-evaluation; the alerts are
        except Exception:  # the gateway's (its reveal_mismatch events)
            pass
        return ev

    def __iter__(self):
        while not self._closing.is_set():
            ev = self.next_event(0.1)
            if ev is not None:
                yield ev
