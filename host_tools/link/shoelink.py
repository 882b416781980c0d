"""ShoeLink: the host end of the shoe link over any pyserial URL (socket://, loop://, /dev/tty).

    from host_tools.link import ShoeLink, DEMO_KEY
    with ShoeLink("socket://127.0.0.1:7001", DEMO_KEY, audit=store) as link:   # no default key
        link.open(timeout=10)                       # handshake; ShoeError if refused / silent
        reply = link.command("status", {})          # reply body; ShoeError(reason) on error reply
        ev = link.next_event(timeout=1.0)           # (kind, body, eseq) or None
        link.command("ack_error", {...})            # MAC'd with the supervisor key (the roles
                                                    # table, shoe.roles, says it needs it)

One reader thread owns the port and the Endpoint (shoe.link.endpoint, the firmware's own
protocol code): it feeds every chunk read, stores each new durable event in the audit store (if
given) BEFORE it can be acknowledged, queues events for `next_event`, resolves command replies by
their counter ("re"), and writes whatever the Endpoint has to send. When the port fails (the
virtual board restarted and closed its socket, a cable pulled) it reopens the URL every
`reconnect_s` until it answers; the Endpoint and its queued commands survive the reconnection.
Events are acknowledged to the shoe automatically once stored (Endpoint auto_ack), which prunes
the shoe's outbox. The shoe id is learnt from the handshake (`link.shoe_id`).

With an audit store the link keeps the host's state about the shoe (host_tools/hoststate.py,
docs/hoststate.md): it locks the store against a second host process, checks the store and the
counter floor file (`<audit>.counters.json`, or `counters=`) at each handshake, and stores each
batch of events together with the shoe's host record (the highest command counter it was seen
to accept) in one transaction, then rewrites the file atomically. A shoe whose HELLO counter is
below the floor is refused (`counter_reset`: its journal went back), also by a later host
process; a damaged, missing, older or foreign state file refuses the shoe (`host_state`: one
line naming the file) until `shoectl trust --accept`.

One host process per port: start() takes the port's lock (host_tools/link/portlock.py; a
device is also opened with pyserial's exclusive=True) and close() releases it; a second opener
is refused naming the holder (and, for `shoectl gateway`, its API address: `port_via`). A
gateway's API address (gateway+unix://, gateway+tcp://) is not a port: host_tools.link.link_for
gives a GatewayLink for it (host_tools/link/viagateway.py). `listeners` get a copy of every queued
event (the gateway's API); `next_counter()`/`command_sealed()` send a command sealed elsewhere
(the supervisor's, through the gateway).

Every round's commitments are checked at its reveal (host_tools/reveal.py, RoundWatch): a
mismatch is flagged in the audit store and queued as a host event `reveal_mismatch`
{"round", "detail", "eseq"} (eseq 0 in the queue: it is the host's, not the shoe's) right
after the event that showed it.

Nothing on the cable can end a session from outside: a REFUSE frame (which a peer with another
key cannot authenticate) or a HELLO that fails its MAC is only remembered, and `open()` reports
it only if the handshake has not succeeded by its deadline; a REFUSE counts only if it answers
the nonce this host offers now (a replayed one is ignored). Frames of another protocol version
are reported as such (`version`) when no handshake succeeds. After `resync_after` commands in a
row time out, the link starts a new session by itself (`link.resyncs` counts them), on top of the
Endpoint's own stall detection.
"""

import os
import queue
import threading
import time

import serial

from host_tools import events as E
from host_tools.errors import ShoeError
from host_tools.hoststate import HostState, HostStateError, refusal
from host_tools.link.apiwire import is_gateway_url
from host_tools.link.attestation import verify_attestation
from host_tools.link.host import make_endpoint
from host_tools.link.portlock import PortLock
from shoe import roles
from shoe.config import DEMO_KEYS
from shoe.link.handshake import PROTOCOL

# The demo keys are host-side only (the firmware holds no key): host_tools.sim.provision_sim writes
# them into a virtual board's state directory (shoe.json, "demo": true).
DEMO_KEY = DEMO_KEYS["shoe"]

# Commands that change nothing on the shoe: one whose answer a link restart took (refused as a
# `replay` in the new session, or `restarted` with the boot) is simply asked again.
READ_ONLY = ("status", "recall", "attest")

REASONS = {
    "version": "incompatible protocol version",
    "bad_key": "the shoe's key does not match (wrong key or wrong shoe)",
    "role": "the peer is not a shoe",
    "bad_mac": "command refused: bad MAC (wrong key)",
    "replay": "command refused: replayed or out-of-order counter",
    "malformed": "command refused: malformed",
    "unknown": "command refused: unknown command",
    "needs_supervisor": "command refused: the allowlist gives it to the supervisor "
    "(docs/roles.md)",
    "reply_too_big": "the shoe's reply does not fit in one frame",
    "not_journalled": "the shoe did the command but could not journal it yet (its events follow "
    "once a write succeeds; a power cut before that undoes it): do not send it again, ask status",
    "sequence_reset": "the shoe's event sequence is behind what this host already stored (its "
    "journal was reset, or another shoe uses its id): refusing to mix the logs; "
    "a supervisor can start a new audit store for it with its counter raised: "
    "shoectl trust --accept --new-db PATH",
    "counter_reset": "the shoe's command counter went back (it is below a counter this host saw "
    "it accept: its journal was rolled back or replaced, so commands it already "
    "executed could be replayed): refusing the shoe",
    "ack_ahead": "the shoe refused an acknowledgement of events it has not sent",
    "host_state": "the host's own state about the shoe (audit store, counter floor file) is "
    "damaged",
}
CUT_WAIT_S = 2.0  # after a restart, how long a command's lost reply may come from the outbox
LOCAL = ("sequence_reset", "counter_reset", "host_state")  # decided here from a fresh HELLO


def _now_ms():
    return int(time.monotonic() * 1000)


class ShoeLink:
    def __init__(
        self,
        url,
        key,
        supervisor_key=None,
        audit=None,
        reconnect_s=0.2,
        read_timeout=0.02,
        endpoint_options=None,
        open_port=None,
        resync_after=2,
        counters=None,
        clock_ms=None,
        rtscts=False,
    ):
        if not key:
            raise ValueError("ShoeLink needs the shoe's key (no default)")
        if is_gateway_url(url):
            raise ShoeError(
                "%s is a gateway's API, not a port: this command opens the shoe's "
                "port itself (`shoectl table`, `session --port` and `monitor` go "
                "through a gateway)" % url
            )
        # the host's state about the shoe beside the audit store (none without one)
        self.hoststate = HostState(audit, counters) if getattr(audit, "path", None) else None
        self.counters = self.hoststate.path if self.hoststate else None
        self.host_problem = None  # the HostStateError that refused the shoe
        self.url = url
        # the link's timers (retransmission, heartbeats, handshake repeats) run on clock_ms():
        # the wall clock, or the board's own (an emulated chip runs slower than real time)
        self._clock_ms = clock_ms or _now_ms
        self.resync_after = resync_after
        self.resyncs = 0  # new sessions started after commands timed out
        self._timeouts = 0
        self.audit = audit
        self.reconnect_s = reconnect_s
        self.read_timeout = read_timeout
        # a device: TIOCEXCL/flock too; rtscts: the host sends only while the shoe's RTS (the
        # adapter's CTS) says its receive FIFO has room (the Pico's wiring, docs/hardware.md)
        self._open_port = open_port or (
            lambda u: serial.serial_for_url(
                u,
                baudrate=115200,
                timeout=read_timeout,
                **({} if "://" in u else {"exclusive": True}),
                **({"rtscts": True} if rtscts else {}),
            )
        )
        # one host process per port (portlock.py): not for a port only this process can open
        self.port_lock = None if open_port else PortLock(url)
        self.port_via = None  # the gateway's API address, named to a refused second opener
        self.listeners = []  # f((kind, body, eseq)) for each queued event (reader thread,
        # under the link's lock: must not block)
        self.supervisor_key = supervisor_key
        self.ep = make_endpoint(
            "host",
            key,
            on_peer=self._on_peer,
            peer_check=self._check_peer,
            **(endpoint_options or {}),
        )
        self.shoe_id = None
        self.events = queue.Queue()
        self.reconnects = 0
        self.port_error = None
        self.fatal = None  # why the reader stopped for good (the audit store failed)
        self._lock = threading.Lock()
        self._replies = {}
        self._waiting = {}
        self._boot = None  # (shoe id, boot count) of the last session's HELLO
        self._cut = None  # after a restart: (ctr, eseq, boot, until), _end_cut_commands
        self._port = None
        self._stop = threading.Event()
        self._thread = None
        from host_tools.reveal import RoundWatch

        self.watch = RoundWatch(loader=self._round_events)  # commitments vs reveals

    # ---- life cycle -----------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        """Start the reader thread; with an audit store first lock it and check it and the
        counter floor file (HostStateError: one line naming the file)."""
        if self._thread is None:
            if self.port_lock is not None:
                self.port_lock.acquire(self.port_via)  # ShoeError naming the holder
            if self.hoststate is not None and not self.hoststate.opened:
                try:
                    self.hoststate.open()
                except HostStateError as e:
                    self.host_problem = e
                    raise _host_refusal(e) from None
            self._thread = threading.Thread(target=self._run, name="shoe-link", daemon=True)
            self._thread.start()

    def open(self, timeout=10.0):
        """Start the reader thread and wait for the handshake; ShoeError if it has not happened
        by the deadline (naming the last refusal heard, if any). Only this host's own refusal of
        the shoe (its counters went back) ends the wait early."""
        self.start()
        deadline = time.monotonic() + timeout
        refused = None
        while time.monotonic() < deadline:
            with self._lock:
                if self.ep.up:
                    return self
                refused = self.ep.refused
            if refused in LOCAL:
                raise self._local_refusal(refused, "link to %s refused" % self.url)
            time.sleep(0.01)
        if refused:
            raise ShoeError("link to %s refused: %s" % (self.url, REASONS.get(refused, refused)))
        if self.ep.peer_version:  # its frames carry another version byte: it cannot read ours
            raise ShoeError(
                "link to %s refused: %s (the shoe sends protocol %d frames, this host "
                "speaks %d)" % (self.url, REASONS["version"], self.ep.peer_version, PROTOCOL)
            )
        why = self.port_error or "no handshake"
        raise ShoeError(
            "no answer from the shoe on %s within %.0f s (%s)" % (self.url, timeout, why)
        )

    def _local_refusal(self, refused, prefix):
        """This host's own refusal: `.reason` stays None (a host failure, not the shoe's word);
        a host-state refusal carries the HostStateError (its code) as `.host_state`."""
        if refused == "host_state" and self.host_problem is not None:
            return _host_refusal(self.host_problem, self.shoe_id)
        return ShoeError("%s: %s" % (prefix, REASONS[refused]))

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        if self._port is not None:
            try:
                self._port.close()
            except Exception:
                pass
            self._port = None
        if self.hoststate is not None:
            self.hoststate.close()  # the lock: another host process may use the store now
        if self.port_lock is not None:
            self.port_lock.release()

    def up(self):
        with self._lock:
            return self.ep.link_up(self._clock_ms())

    def stats(self):
        with self._lock:
            return {
                "up": self.ep.link_up(self._clock_ms()),
                "shoe_id": self.shoe_id,
                "delivered": self.ep.delivered,
                "reconnects": self.reconnects,
                "resyncs": self.resyncs,
                "srtt_ms": None if self.ep.srtt is None else round(self.ep.srtt),
                "rto_ms": self.ep.rto_ms,
                "errors": self.ep.errors(),
            }

    # ---- application API ------------------------------------------------------------------
    def command(self, kind, body=None, timeout=5.0, supervisor=None):
        """Send an authenticated command and wait for its reply body; ShoeError on an error reply
        (message names the shoe's reason; `.reason` holds it) or on timeout. The key: the
        supervisor's if `supervisor` (ShoeError if this link has none), the shoe key if False;
        None = from the firmware's roles table (shoe.roles): the shoe key when it always does,
        else the supervisor key if this link holds one (the shoe decides and refuses with
        `needs_supervisor`, changing nothing, a command its key may not send)."""
        if supervisor and not self.supervisor_key:
            raise ShoeError(
                "%s needs the supervisor key (this host has none)" % kind, "needs_supervisor"
            )
        if supervisor is None:
            supervisor = bool(self.supervisor_key) and not roles.table_suffices(kind)
        deadline = time.monotonic() + timeout
        key = self.supervisor_key if supervisor else None
        while True:
            ctr, ev, sessions = self._queue_command(
                kind, deadline, lambda: self.ep.command(kind, {} if body is None else body, key)
            )
            try:
                return self._await_reply(kind, ctr, ev, sessions, deadline, timeout)
            except ShoeError as e:
                # a question whose answer the restart took: ask it again (a new counter) while
                # time is left; anything that acts stays refused ("do not simply send it again")
                again = kind in READ_ONLY and getattr(e, "reason", None) in ("replay", "restarted")
                if not again or time.monotonic() >= deadline:
                    raise

    def next_counter(self):
        """(the counter the next command will carry, the shoe id) while the link is up, else
        (None, id): a command sealed elsewhere (the supervisor's, through the gateway) takes it
        with command_sealed()."""
        with self._lock:
            return (self.ep.ctr + 1 if self.ep.up else None), self.shoe_id

    def counter_at_least(self, ctr):
        """The next command carries a counter above `ctr` (`shoectl trust --accept`: above every
        counter the shoe was seen to accept)."""
        with self._lock:
            self.ep.ctr = max(self.ep.ctr, ctr)

    def command_sealed(self, kind, payload, ctr, timeout=5.0):
        """Send a command sealed elsewhere with counter `ctr` (seal_command with another key:
        the shoe checks that key's MAC and role as for any command) and wait for its reply, as
        command(). ShoeError reason `stale_counter` if the link used `ctr` meanwhile: seal it
        again with next_counter()."""
        deadline = time.monotonic() + timeout

        def queue_it():
            if self.ep.ctr + 1 != ctr:
                raise ShoeError(
                    "%s: counter %d is no longer the next one" % (kind, ctr), "stale_counter"
                )
            self.ep.ctr = ctr
            self.ep.queue_sealed(payload)
            return ctr

        ctr, ev, sessions = self._queue_command(kind, deadline, queue_it)
        return self._await_reply(kind, ctr, ev, sessions, deadline, timeout)

    def _link_summary(self, sessions):
        """What the link looked like when a reply did not come (under the lock): for the
        technician and for a test's failure message."""
        ep, c = self.ep, self.ep.errors()
        return (
            "link %s, srtt %s ms, rto %d ms, %d new session(s) meanwhile, %d retransmitted, "
            "%d queued"
            % (
                "up" if ep.link_up(self._clock_ms()) else "down",
                "-" if ep.srtt is None else "%.0f" % ep.srtt,
                ep.rto_ms,
                c.get("sessions", 0) - sessions,
                c.get("retransmit", 0),
                ep.backlog(),
            )
        )

    def _queue_command(self, kind, deadline, seal):
        """Wait for the link to be up, then seal and queue (under the lock) -> (ctr, Event,
        sessions)."""
        while True:
            if self.fatal:
                raise ShoeError(self.fatal)
            with self._lock:
                if self.ep.up:
                    ctr = seal()
                    ev = threading.Event()
                    self._waiting[ctr] = ev
                    return ctr, ev, self.ep.stats.get("sessions", 0)
                refused = self.ep.refused
            if refused in LOCAL:
                raise self._local_refusal(refused, "link refused")
            if time.monotonic() >= deadline:
                why = (" (refused: %s)" % REASONS.get(refused, refused)) if refused else ""
                raise ShoeError("%s: the shoe is not connected (%s)%s" % (kind, self.url, why))
            time.sleep(0.01)

    def _await_reply(self, kind, ctr, ev, sessions, deadline, timeout):
        ok = ev.wait(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._waiting.pop(ctr, None)
            rep = self._replies.pop(ctr, None)
        if not ok or rep is None:
            if self.fatal:
                raise ShoeError(self.fatal)
            with self._lock:
                self._timeouts += 1
                if self._timeouts >= self.resync_after:  # repeated: start a new session
                    self._timeouts = 0
                    self.resyncs += 1
                    self.ep.renegotiate("resync")
                why = self._link_summary(sessions)
            raise ShoeError("%s: no reply from the shoe within %.1f s (%s)" % (kind, timeout, why))
        with self._lock:
            self._timeouts = 0
        rkind, rbody = rep
        if rkind == "cut":
            raise ShoeError(
                "%s: the shoe restarted (boot %s) after accepting it, and its reply was lost with "
                "the restart; what it did, if anything, is in the shoe's events (check `shoectl "
                "status`) -- do not simply send it again" % (kind, rbody.get("boot")),
                "restarted",
            )
        if rkind == "error":
            reason = rbody.get("reason", "error")
            text = REASONS.get(reason, reason)
            if reason == "replay" and self.ep.stats.get("sessions", 0) != sessions:
                # re-sent after the link restarted: the shoe had it already (and acted on it)
                text = (
                    "the shoe had already received it before the link restarted; its outcome "
                    "is in the shoe's events (check `shoectl status`)"
                )
            detail = rbody.get("detail")
            if isinstance(detail, str) and detail:
                text += " (%s)" % detail  # the shoe's own words, e.g. which seat/amounts
            err = ShoeError("%s refused by the shoe: %s" % (kind, text), reason)
            err.body = rbody
            raise err
        return rbody

    def next_event(self, timeout=None):
        """The next event (kind, body, eseq) in order, or None after `timeout` seconds."""
        if self.fatal and self.events.empty():
            raise ShoeError(self.fatal)
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def __iter__(self):
        while not self._stop.is_set():
            ev = self.next_event(0.1)
            if ev is not None:
                yield ev

    def attest(self, roots, timeout=10.0, nonce=None):
        """Challenge the shoe ("attest" command with a fresh nonce) and check its answer against
        the local firmware tree `roots`; returns (ok, answer, local_manifest)."""
        nonce = nonce or os.urandom(16)
        ans = self.command("attest", {"nonce": nonce}, timeout=timeout)
        return verify_attestation(ans, self.ep.key, nonce, roots) + (ans,)

    # ---- reader thread --------------------------------------------------------------------
    def _on_peer(self, hello):
        self.shoe_id = hello.get("id")
        self._cut_by_restart(hello)
        if self.audit is not None and self.shoe_id:
            return self.audit.last_eseq(self.shoe_id)
        return None

    def _cut_by_restart(self, hello):
        """A new session with a shoe that booted since the last one (reader thread, under the
        lock): a waiting command it had accepted (its counter is at most the shoe's) lost a
        volatile reply with the restart (only durable replies are journalled). Once the shoe's
        outbox has come back (its durable replies answer first) or CUT_WAIT_S has passed, such a
        command ends with reason `restarted` instead of waiting out its timeout and counting
        toward a resync. A command the shoe had not accepted is re-sent by the new session."""
        boot, ctr, eseq = hello.get("boot"), hello.get("ctr"), hello.get("eseq")
        before, self._boot = self._boot, (hello.get("id"), boot)
        if before is not None and before != self._boot and isinstance(ctr, int):
            self._cut = (
                ctr,
                eseq if isinstance(eseq, int) else 0,
                boot,
                time.monotonic() + CUT_WAIT_S,
            )

    def _end_cut_commands(self):
        ctr, eseq, boot, until = self._cut
        if (self.ep.delivered or 0) < eseq and time.monotonic() < until:
            return
        self._cut = None
        for c, ev in self._waiting.items():
            if c <= ctr and c not in self._replies:
                self._replies[c] = ("cut", {"re": c, "boot": boot})
                ev.set()

    def _check_peer(self, hello):
        """At each handshake (reader thread): the host state about this shoe; its counter floor
        goes to the Endpoint (counter_reset below it), a problem refuses the shoe."""
        if self.hoststate is None:
            return None
        sid = hello.get("id") or "?"
        try:
            floor = self.hoststate.check(sid, self.ep.key)
        except HostStateError as e:
            self.host_problem = e
            return "host_state"
        except Exception as e:  # the store failed under us: refuse, never guess
            self.host_problem = HostStateError(
                self.hoststate.store.path, "failed (%s)" % e, "store_damaged"
            )
            return "host_state"
        self.host_problem = None
        key = hello.get("id")  # the Endpoint's own key for the shoe (None when it has no id)
        self.ep.ctr_seen[key] = max(floor, self.ep.ctr_seen.get(key, 0))
        return None

    def _run(self):
        while not self._stop.is_set():
            if self._port is None:
                try:
                    self._port = self._open_port(self.url)
                    self.port_error = None
                except Exception as e:  # not answering yet: retry
                    self.port_error = str(e)
                    self._stop.wait(self.reconnect_s)
                    continue
            try:
                # Wait (up to read_timeout) for the first byte only, then take what is there:
                # read(4096) would sit out the whole timeout on every frame.
                data = self._port.read(1)
                if data:
                    waiting = self._port.in_waiting
                    if waiting:
                        data += self._port.read(min(waiting, 4096))
                now = self._clock_ms()
                with self._lock:
                    msgs = self.ep.receive(data, now) if data else []
                    try:
                        self._dispatch(msgs)
                    except Exception:
                        return  # fatal (audit store): stop before anything is acknowledged
                    out = self.ep.transmit(now)
                if out:
                    self._port.write(out)
                    self._port.flush()
            except Exception as e:  # the port went away: reopen
                self.port_error = str(e)
                try:
                    self._port.close()
                except Exception:
                    pass
                self._port = None
                self.reconnects += 1
                self._stop.wait(self.reconnect_s)

    def _dispatch(self, msgs):
        out = []
        for kind, body, ref, meta in msgs:
            answers = body.get("re") if isinstance(body, dict) else None
            if (
                kind == "reply"
                and ref
                and isinstance(answers, int)
                and not isinstance(answers, bool)
            ):  # a durable reply: the shoe journalled that counter too
                sid = self.shoe_id
                self.ep.ctr_seen[sid] = max(answers, self.ep.ctr_seen.get(sid, 0))
            if kind in ("reply", "error") and answers in self._waiting:
                ctr = body["re"]
                # the first answer wins: a command re-sent in a new session may also draw
                # "replay" after the shoe's own reply (carried over from the old session)
                self._replies.setdefault(ctr, (kind, body))
                self._waiting[ctr].set()
                if not ref:
                    continue
            out.append((kind, body, ref, meta))
        if self._cut is not None:  # after this batch's replies: a durable one answers first
            self._end_cut_commands()
        try:
            self._store([m for m in out if m[2]])
        except Exception as e:  # not stored: it must not be acknowledged either
            self.fatal = (
                str(e) if isinstance(e, HostStateError) else ("the audit store failed: %s" % e)
            )
            self._stop.set()
            for ev in self._waiting.values():  # wake every waiting command
                ev.set()
            raise
        for kind, body, ref, _meta in out:
            self._emit((kind, body, ref))
            if ref:
                self._check_reveal(kind, body, ref)

    def _round_events(self, rnd):
        """A round's events stored before this host process saw them (RoundWatch loader)."""
        if self.audit is None or not self.shoe_id:
            return []
        return self.audit.round_events(self.shoe_id, rnd)

    def _check_reveal(self, kind, body, eseq):
        """Commitments against the reveal, a result against the revealed cards: each alert is
        flagged in the audit store and queued after the event that showed it."""
        try:
            alerts = self.watch.feed(kind, body)
        except Exception as e:  # a bug in the check must not stop the link: say so
            alerts = [
                (
                    E.REVEAL_MISMATCH,
                    body.get("round") if isinstance(body, dict) else None,
                    "the reveal check failed: %r" % (e,),
                )
            ]
        for alert, rnd, detail in alerts:
            if self.audit is not None:
                try:
                    self.audit.flag(self.shoe_id or "?", eseq, alert, rnd, detail)
                except Exception:
                    pass  # the queued alert still goes out; `shoectl verify` checks again
            self._emit((alert, {"round": rnd, "detail": detail, "eseq": eseq}, 0))

    def _emit(self, ev):
        self.events.put(ev)
        for fn in list(self.listeners):
            try:
                fn(ev)
            except Exception:
                pass  # a listener (the gateway's API) never stops the link

    def _store(self, durable):
        """The durable events and the shoe's counter floor (host state: one transaction, then
        the floor file) before anything can be acknowledged."""
        if self.hoststate is not None:
            if durable or self.ep.up:
                self.hoststate.commit(
                    self.shoe_id or "?",
                    self.ep.key,
                    self.ep.ctr_seen.get(self.shoe_id, 0),
                    durable,
                )
        elif self.audit is not None:
            for kind, body, ref, meta in durable:
                self.audit.store(self.shoe_id or "?", ref, kind, body, meta)


def _host_refusal(problem, shoe=None):
    err = ShoeError(refusal(problem, shoe))
    err.host_state = problem
    return err
