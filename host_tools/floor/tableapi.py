"""The gateway's local API: the table system reaches the shoe through the link the gateway holds.

    api = TableAPI(link, {"table": secret, "reader": reader_secret},
                   unix_path="/var/lib/shoe/T01.api.sock", tcp_port=None, tls=None).start()
    ...; api.stop()

Listens on a Unix socket (mode 0600) and/or a TCP port: 127.0.0.1 in the clear, or under TLS
(`tls`: an ssl context with the gateway's certificate; then on any address given, since the
credential's proof never crosses the wire in the clear and a client checks the certificate);
frames and the credential's challenge-response: host_tools/link/apiwire.py. Each credential is
bound to the roles it may take (apiwire.CREDENTIALS): the table credential any, the reader
credential only `reader`; a login naming a role its credential does not grant is refused with
the reason `role_not_granted`, so a read-only client (monitor, display) holding the reader key
cannot send a command whatever role it claims. Named clients (`clients`, an
apiclients.ClientsFile) each prove their own credential and take only their own roles; removing
one from the file ends its connections (`_revoke`). Under mutual TLS a named client's
certificate must carry its name. After the login a client gets every event the
link delivers from then on ({"t": "event", "kind", "body", "eseq"}: the shoe's bodies unchanged,
so a card of an open round is its commitment until the reveal, as on a direct link), the link's
state ({"t": "link", "up", "sessions"}) when it changes, and the replies to its requests:

    {"t": "command", "id", "kind", "body", "timeout"}  sealed by the gateway with the TABLE key
    {"t": "prepare", "id"} -> {"ctr", "shoe"}           (supervisor role) the next counter, and
    {"t": "sealed", "id", "kind", "ctr", "payload"}    the command the client sealed with the
                                                       supervisor key for it, forwarded unchanged
    {"t": "round", "id", "round"}                      a round's stored round_open/card/reveal
    {"t": "since", "id", "eseq"} -> {"events", "more"} the stored events after eseq, in order,
                                                       as the link delivered them ([kind, body,
                                                       eseq]; at most SINCE): a client's catch-up
                                                       after it lost its connection
    {"t": "stats", "id"}                               the link's figures (ShoeLink.stats)

Role rules (the firmware's allowlist, shoe/roles.py): `reader` may ask status, recall and attest;
`table` also what the table key may send (a kind the allowlist gives only to the supervisor is
refused here, `needs_supervisor`; the shoe decides the conditional ones); only `supervisor`
may hand in sealed commands, and the gateway never signs with any key but the table's: the
shoe checks the supervisor's MAC and counter as on a direct link. No client sends the link's own
commands (`_ack`, `hello`). Events never wait for a client: each has a bounded queue, and a
client that does not keep up is disconnected (it reconnects and catches up with `since`); a
client that dies costs nothing (the gateway's store and publishing never depend on one). Bad
input closes that client's connection with a reason; it never stops the gateway. What ended a
client's request or connection is logged and kept (`errors`, floor/errlog.py) and said on the
operator's lines.
"""

import os
import queue
import socket
import stat
import threading

from host_tools.errors import ShoeError
from host_tools.floor import errlog
from host_tools.link import apiwire
from host_tools.link.shoelink import READ_ONLY
from shoe import roles
from shoe.link import codec
from shoe.link.message import LinkError, unseal

INTERNAL = ("_ack", "hello")
QUEUE = 20000  # events a client may lag behind before it is dropped
SINCE = 500  # events in one catch-up reply (the client asks again while "more")
IN_FLIGHT = 16  # requests of one client waiting on the shoe at once
MAX_CLIENTS = 32
LOGIN_S = 5.0
WATCH_S = 0.25  # how often the link's state is looked at for the clients


def allowed(role, kind, sealed=False):
    """None if `role` may send `kind` through the gateway, else (reason, why)."""
    if not isinstance(kind, str) or not kind or kind in INTERNAL or kind.startswith("_"):
        return "not_allowed", "%r is the link's own command: the gateway sends it" % (kind,)
    if role == "reader":
        if kind in READ_ONLY and not sealed:
            return None
        return "not_allowed", "the reader role may only ask %s" % ", ".join(READ_ONLY)
    if sealed:
        if role != "supervisor":
            return "not_allowed", "only the supervisor role hands in sealed commands"
        return None
    if roles.rule(kind) == roles.SUPERVISOR:
        return (
            "needs_supervisor",
            "the allowlist gives %s to the supervisor (docs/roles.md): "
            "seal it with the supervisor key (the supervisor role)" % kind,
        )
    return None


class _Client:
    def __init__(self, api, sock, name):
        self.api = api
        self.sock = sock
        self.name = name
        self.role = None
        self.out = queue.Queue(QUEUE)
        self.dead = threading.Event()
        self.why = None
        self.writing = None  # the writer thread
        self.busy = 0  # requests waiting on the shoe
        self.client = None  # a named client's name (floor/apiclients.py), after its login
        self.secret = None  # the secret it proved (a change in the clients file ends it)
        self.cert_name = None  # the common name of its TLS client certificate, if any

    def push(self, msg):
        """Queue a message (never blocks: a client that does not keep up is dropped)."""
        if self.dead.is_set():
            return
        try:
            self.out.put_nowait(msg)
        except queue.Full:
            self.drop("it fell %d messages behind" % QUEUE)

    def drop(self, why):
        """End the connection now (a client that fell behind, the gateway stopping)."""
        if not self.dead.is_set():
            self.why = why
            self.dead.set()
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def finish(self):
        """End the connection after what is queued (a last `bye`) has gone out (1 s at most)."""
        try:
            self.out.put_nowait(None)
        except queue.Full:
            pass
        if self.writing is not None:
            self.writing.join(1.0)
        self.drop("gone")

    def writer(self):
        try:
            while not self.dead.is_set():
                try:
                    msg = self.out.get(timeout=0.5)
                except queue.Empty:
                    continue
                if msg is None:
                    break
                apiwire.send(self.sock, msg)
        except OSError:
            pass
        except Exception as e:  # a message the codec cannot carry: end this client, say why
            self.api.client_error(self, "send", e)
            self.drop("could not send a message (%s)" % e)


class TableAPI:
    def __init__(
        self,
        link,
        secret,
        unix_path=None,
        tcp_port=None,
        tcp_host="127.0.0.1",
        note=None,
        tls=None,
        clients=None,
    ):
        if not unix_path and tcp_port is None:
            raise ValueError("the API needs a Unix socket or a TCP port")
        if (
            tcp_port is not None
            and tls is None
            and tcp_host not in ("127.0.0.1", "::1", "localhost")
        ):
            raise ShoeError(
                "the gateway's API listens on localhost only without TLS, not %s "
                "(give --api-tls-cert/--api-tls-key to listen beyond it)" % tcp_host
            )
        self.link = link
        # credential name -> its secret (a bare secret: the table credential alone)
        self.secrets = {
            k: v
            for k, v in (secret if isinstance(secret, dict) else {"table": secret}).items()
            if v
        }
        for cred in self.secrets:
            if cred not in apiwire.CREDENTIALS:
                raise ValueError("no credential %r" % cred)
        if len(set(self.secrets.values())) != len(self.secrets):
            raise ShoeError("the reader and the table credentials must differ")
        self.tls = tls
        self.named = clients  # apiclients.ClientsFile: named clients, each its own roles
        self.unix_path = str(unix_path) if unix_path else None
        self.tcp_port = tcp_port
        self.tcp_host = tcp_host
        self.clients = set()
        self.refused = 0  # logins refused (tests, figures)
        self.note = note or (lambda text: None)  # a line for the operator (refused logins)
        self.errors = errlog.ErrorLog("tableapi")  # what ended a request or a client, kept
        self._lock = threading.Lock()
        self._socks = []
        self._stop = threading.Event()
        self._threads = []
        self._state = (None, None)

    # ---- addresses ------------------------------------------------------------------------
    def urls(self):
        out = []
        if self.unix_path:
            out.append("gateway+unix://" + os.path.abspath(self.unix_path))
        if self.tcp_port is not None:
            out.append(
                "gateway+%s://%s:%d" % ("tls" if self.tls else "tcp", self.tcp_host, self.tcp_port)
            )
        return out

    def _listen_unix(self):
        path = self.unix_path
        if os.path.exists(path) or os.path.islink(path):
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise ShoeError("%s exists and is not a socket: refusing to replace it" % path)
            probe = socket.socket(socket.AF_UNIX)
            try:
                probe.connect(path)
                probe.close()
                raise ShoeError("another gateway serves %s already" % path)
            except OSError:
                probe.close()
                os.unlink(path)  # a socket nobody serves: left by a killed gateway
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # created 0600: nobody else may even connect
        try:
            s.bind(path)
        except OSError as e:
            s.close()
            raise ShoeError("cannot listen on %s: %s" % (path, e.strerror or e)) from None
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        s.listen(8)
        s.settimeout(0.5)  # accept() wakes up to see stop()
        return s

    def _listen_tcp(self):
        s = socket.socket(socket.AF_INET6 if ":" in self.tcp_host else socket.AF_INET)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((self.tcp_host, self.tcp_port))
        except OSError as e:
            s.close()
            raise ShoeError(
                "cannot listen on %s:%d: %s" % (self.tcp_host, self.tcp_port, e.strerror or e)
            ) from None
        s.listen(8)
        s.settimeout(0.5)
        self.tcp_port = s.getsockname()[1]
        return s

    # ---- life cycle -----------------------------------------------------------------------
    def start(self):
        if self.unix_path:
            self._socks.append(self._listen_unix())
        if self.tcp_port is not None:
            self._socks.append(self._listen_tcp())
        self.link.listeners.append(self._on_event)
        for s in self._socks:
            self._spawn(self._accept, s)
        self._spawn(self._watch_link)
        return self

    def stop(self):
        self._stop.set()
        try:
            self.link.listeners.remove(self._on_event)
        except ValueError:
            pass
        for s in self._socks:
            try:
                s.close()
            except OSError:
                pass
        with self._lock:
            clients = list(self.clients)
        for c in clients:
            c.drop("the gateway stops")
        if self.unix_path:
            try:
                os.unlink(self.unix_path)
            except OSError:
                pass
        for t in self._threads:
            t.join(2.0)

    def _spawn(self, fn, *args):
        t = threading.Thread(target=fn, args=args, daemon=True, name="tableapi")
        t.start()
        self._threads.append(t)
        return t

    def _accept(self, lsock):
        while not self._stop.is_set():
            try:
                sock, addr = lsock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                continue
            tls = self.tls if lsock.family != socket.AF_UNIX else None
            threading.Thread(
                target=self._serve,
                args=(sock, str(addr or "unix"), tls),
                daemon=True,
                name="tableapi-client",
            ).start()

    # ---- events and link state ----------------------------------------------------------
    def _on_event(self, ev):
        """The link's reader thread: copy the event to every client's queue (never blocks)."""
        kind, body, eseq = ev
        msg = {"t": "event", "kind": kind, "body": body, "eseq": eseq}
        with self._lock:
            clients = [c for c in self.clients if c.role]
        for c in clients:
            c.push(msg)

    def _link_msg(self):
        return {
            "t": "link",
            "up": bool(self.link.up()),
            "sessions": self.link.ep.stats.get("sessions", 0),
        }

    def _watch_link(self):
        # the link's state for the logged-in clients, looked at 4 times a second and only while
        # there are any: up() takes the link's lock, which its thread holds while it stores
        while not self._stop.wait(WATCH_S):
            with self._lock:
                if not any(c.role for c in self.clients):
                    continue
            if self.named is not None:
                self._revoke()
            msg = self._link_msg()
            state = (msg["up"], msg["sessions"])
            if state != self._state:
                self._state = state
                with self._lock:
                    clients = [c for c in self.clients if c.role]
                for c in clients:
                    c.push(msg)

    # ---- one client -----------------------------------------------------------------------
    def _serve(self, sock, name, tls=None):
        if tls is not None:  # the handshake in this client's thread: a plain client fails it
            try:
                sock.settimeout(LOGIN_S)
                sock = tls.wrap_socket(sock, server_side=True)
            except (OSError, ValueError) as e:
                self.refused += 1
                self.note(
                    "API connection refused from %s: not TLS (%s)"
                    % (name, getattr(e, "reason", None) or e)
                )
                try:
                    sock.close()
                except OSError:
                    pass
                return
        c = _Client(self, sock, name)
        c.cert_name = apiwire.peer_name(sock) if tls is not None else None
        try:
            with self._lock:
                full = len(self.clients) >= MAX_CLIENTS
                if not full:
                    self.clients.add(c)
            if full:
                apiwire.send(
                    sock,
                    {
                        "t": "refused",
                        "reason": "busy",
                        "message": "%d clients already" % MAX_CLIENTS,
                    },
                )
                return
            if not self._login(c):
                return
            self._spawn_writer(c)
            while not c.dead.is_set():
                try:
                    msg = apiwire.recv(sock)
                except apiwire.WireError as e:
                    if str(e) != "closed":
                        c.push({"t": "bye", "message": "bad input: %s" % e})
                    break
                self._request(c, msg)
        except OSError:
            pass
        except Exception as e:  # bad input never stops the gateway: end this client only
            self.client_error(c, "request", e)
            c.push({"t": "bye", "message": "bad input: %s" % e})
        finally:
            with self._lock:
                self.clients.discard(c)
            c.finish()
            with self._lock:
                self.clients.discard(c)
            try:
                sock.close()
            except OSError:
                pass

    def _spawn_writer(self, c):
        c.writing = threading.Thread(target=c.writer, daemon=True, name="tableapi-writer")
        c.writing.start()

    def _login(self, c):
        import hmac

        nonce = os.urandom(16)
        sock = c.sock
        sock.settimeout(LOGIN_S)
        try:
            apiwire.send(
                sock,
                {
                    "t": "challenge",
                    "v": apiwire.VERSION,
                    "nonce": nonce,
                    "shoe": self.link.shoe_id,
                },
            )
            auth = apiwire.recv(sock)
        except (apiwire.WireError, OSError):
            self.refused += 1
            return False
        role, cnonce, mac = auth.get("role"), auth.get("cnonce"), auth.get("mac")
        client = auth.get("client")
        why = None
        if (
            auth.get("t") != "auth"
            or not isinstance(cnonce, bytes)
            or len(cnonce) != 16
            or not isinstance(mac, bytes)
            or not isinstance(role, str)
            or not (client is None or isinstance(client, str))
        ):
            why = ("malformed", "the login is {t: auth, role, cnonce (16 bytes), mac[, client]}")
        elif role not in apiwire.ROLES:
            why = ("role", "no role %r (reader, table, supervisor)" % role)
        cred = secret_used = None
        if not why and client is not None:  # a named client: its own credential, its roles
            named = self.named.current() if self.named is not None else {}
            secret, granted = named.get(client, (os.urandom(32), ()))  # unknown: same work
            if hmac.compare_digest(mac, apiwire.client_proof(secret, nonce, cnonce, role)):
                cred, secret_used = client, secret
            if cred is None:
                why = ("credential", "wrong API key (the gateway's key file)")
            elif role not in granted:
                why = (
                    "role_not_granted",
                    "client %s may not act as %s (it may: %s)"
                    % (client, role, ", ".join(granted)),
                )
            elif c.cert_name is not None and c.cert_name != client:
                why = (
                    "certificate",
                    "client %s presented the TLS certificate of %s" % (client, c.cert_name),
                )
        elif not why:  # which credential's proof this is (every one tried: no early out)
            for name, secret in sorted(self.secrets.items()):
                if hmac.compare_digest(mac, apiwire.client_proof(secret, nonce, cnonce, role)):
                    cred, secret_used = name, secret
            if cred is None:
                why = ("credential", "wrong API key (the gateway's key file)")
            elif role not in apiwire.CREDENTIALS[cred]:
                why = (
                    "role_not_granted",
                    "the %s credential may not act as %s (it may: %s)"
                    % (cred, role, ", ".join(apiwire.CREDENTIALS[cred])),
                )
        if why:
            self.refused += 1
            self.note("API login refused (%s) from %s" % (why[1], c.name))
            try:
                apiwire.send(sock, {"t": "refused", "reason": why[0], "message": why[1]})
            except OSError:
                pass
            return False
        sock.settimeout(None)
        # welcome first, then events: the client is registered for events at once
        c.out.put(
            {
                "t": "welcome",
                "shoe": self.link.shoe_id,
                "role": role,
                "credential": cred,
                "mac": apiwire.server_proof(secret_used, nonce, cnonce, role),
                **{k: v for k, v in self._link_msg().items() if k != "t"},
            }
        )
        if client is not None:
            c.client, c.secret = client, secret_used
            c.name = "%s (%s)" % (client, c.name)
        c.role = role
        return True

    def _revoke(self):
        """Drop each named client whose credential the clients file no longer grants as it
        logged in (removed, its secret replaced, its role taken away, or the file broken)."""
        named = self.named.current()
        with self._lock:
            clients = [c for c in self.clients if c.role and c.client is not None]
        for c in clients:
            secret, granted = named.get(c.client, (None, ()))
            if secret != c.secret or c.role not in granted:
                self.note("API client %s: credential revoked, connection ended" % c.name)
                c.push({"t": "bye", "message": "this client's API credential was revoked"})
                c.finish()

    def _request(self, c, msg):
        t, rid = msg.get("t"), msg.get("id")
        if t not in ("command", "prepare", "sealed", "round", "since", "stats") or not isinstance(
            rid, int
        ):
            raise apiwire.WireError("unknown request %r" % (t,))
        if t == "stats":  # the link's figures: no key, no MAC, no payload
            return c.push({"t": "reply", "id": rid, "ok": True, "body": self.link.stats()})
        if t == "prepare":
            if c.role != "supervisor":
                return c.push(
                    _refusal(rid, "not_allowed", "only the supervisor role seals commands")
                )
            ctr, shoe = self.link.next_counter()
            if ctr is None:
                return c.push(_refusal(rid, "not_up", "the gateway's link to the shoe is down"))
            return c.push({"t": "prepared", "id": rid, "ok": True, "ctr": ctr, "shoe": shoe})
        # the others may wait on the shoe: one thread each, the client's reads go on
        with self._lock:
            if c.busy >= IN_FLIGHT:
                return c.push(
                    _refusal(
                        rid,
                        "busy",
                        "%d requests of this client are waiting on the shoe already" % IN_FLIGHT,
                    )
                )
            c.busy += 1
        threading.Thread(target=self._answer, args=(c, t, rid, msg), daemon=True).start()

    def _answer(self, c, t, rid, msg):
        try:
            self._answer1(c, t, rid, msg)
        finally:
            with self._lock:
                c.busy -= 1

    def _answer1(self, c, t, rid, msg):
        try:
            c.push(dict(self._do(c, t, msg), t="reply", id=rid))
        except ShoeError as e:
            rep = {"t": "reply", "id": rid, "ok": False, "reason": e.reason, "message": str(e)}
            if isinstance(getattr(e, "body", None), dict):
                rep["body"] = e.body
            c.push(rep)
        except Exception as e:  # broad on purpose: one request fails, the client goes on
            self.client_error(c, t, e)
            c.push(_refusal(rid, "malformed", "the gateway could not do it: %s" % e))

    def client_error(self, c, where, e):
        """An error that ended one client's request or connection: logged and kept (`errors`),
        and said on the operator's lines; the gateway goes on."""
        self.errors.note("api_" + where, "client %s: %s" % (c.name, errlog.text(e)))
        self.note("API client %s: %s failed (%s)" % (c.name, where, errlog.text(e)))

    def _since(self, eseq):
        """The stored events after `eseq` as the link delivered them: each row's signed payload
        decoded (the store keeps the bytes the shoe sealed), so a client that reconnects gets
        the same (kind, body) it would have got live, a face-down card still its commitment;
        each followed by the link's alerts about it (the store's flags), as live."""
        if (
            not isinstance(eseq, int)
            or isinstance(eseq, bool)
            or eseq < 0
            or self.link.audit is None
            or not self.link.shoe_id
        ):
            return {"ok": True, "body": {"events": [], "more": False}}
        shoe = self.link.shoe_id
        rows = self.link.audit.payloads(shoe, eseq, SINCE)
        alerts = {}  # the link's own alerts about those events (a reveal that does not match),
        if rows:  # as it queued them live: right after the event, eseq 0
            for f in self.link.audit.flags(shoe):
                if isinstance(f["eseq"], int) and eseq < f["eseq"] <= rows[-1][0]:
                    body = {"round": f["round"], "detail": f["detail"], "eseq": f["eseq"]}
                    alerts.setdefault(f["eseq"], []).append([f["kind"], body, 0])
        events = []
        for n, payload in rows:
            try:
                items = codec.decode(bytes(payload))
            except (codec.CodecError, TypeError):
                break  # a row that does not decode ends the catch-up here (verify reports it)
            if not isinstance(items, list) or len(items) < 2:
                break
            events.append([items[0], items[1], n])
            events.extend(alerts.get(n, ()))
        return {"ok": True, "body": {"events": events, "more": len(rows) == SINCE}}

    def _do(self, c, t, msg):
        timeout = msg.get("timeout")
        timeout = (
            min(float(timeout), 120.0)
            if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0
            else 5.0
        )
        if t == "round":
            rnd = msg.get("round")
            if not isinstance(rnd, int) or self.link.audit is None or not self.link.shoe_id:
                return {"ok": True, "body": {"events": []}}
            return {
                "ok": True,
                "body": {
                    "events": [
                        [k, b] for k, b in self.link.audit.round_events(self.link.shoe_id, rnd)
                    ]
                },
            }
        if t == "since":
            return self._since(msg.get("eseq"))
        kind = msg.get("kind")
        if t == "command":
            body = msg.get("body", {})
            no = allowed(c.role, kind)
            if no:
                return _refused_by_gateway(kind, *no)
            if not isinstance(body, dict):
                return _refused_by_gateway(kind, "malformed", "a command's body is a map")
            return {
                "ok": True,
                "body": self.link.command(kind, body, timeout=timeout, supervisor=False),
            }
        # sealed: the client's own supervisor command, forwarded byte for byte
        no = allowed(c.role, kind, sealed=True)
        if no:
            return _refused_by_gateway(kind, *no)
        payload, ctr = msg.get("payload"), msg.get("ctr")
        try:
            items = unseal(payload, 4)[0] if isinstance(payload, bytes) else None
        except LinkError:
            items = None
        if not items or items[0] != kind or items[2] != ctr or not isinstance(ctr, int):
            return _refused_by_gateway(
                kind,
                "malformed",
                "the sealed payload is not the command %r with counter %r" % (kind, ctr),
            )
        return {"ok": True, "body": self.link.command_sealed(kind, payload, ctr, timeout=timeout)}


def _refusal(rid, reason, message):
    return {"t": "reply", "id": rid, "ok": False, "reason": reason, "message": message}


def _refused_by_gateway(kind, reason, why):
    return {
        "ok": False,
        "reason": reason,
        "message": "%s refused by the gateway: %s" % (kind, why),
    }
