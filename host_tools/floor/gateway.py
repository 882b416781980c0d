"""The gateway at the table: holds the authenticated link to a shoe and publishes from its store.

    gw = Gateway(broker_url, name="gw-T001", cursor_path="state/published.json")
    gw.add(shoe_id, link, store)   # link: a ShoeLink storing into `store` (an AuditStore) BEFORE
                                   # it acknowledges an event to the shoe, exactly as today
    gw.start(); ...; gw.stop()

Order of custody: shoe -> ShoeLink (MAC and chain checked by the Endpoint) -> local audit store
(committed) -> acknowledged to the shoe -> published to MQTT from the store (QoS 1, persistent
session, floor/shoe/<id>/events, the signed payload byte for byte inside an envelope carrying the
gateway's receive time, signed: keyring.wrap_event; `timed=False` publishes the bare payload, for
collectors older than the envelope during a rollout) -> the cursor `published` advances only past
events the broker acknowledged (PUBACK), and is saved (the cursor file, all of this gateway's
tables: rewritten at most every SAVE_EVERY and at most SAVE_EVERY after a cursor moved). A broker
outage or a gateway restart therefore loses nothing: publishing resumes from the saved cursor,
re-sending the last unacknowledged batch and, after a crash, what was acknowledged in the last
SAVE_EVERY before it (the collector stores by (shoe, eseq), so a re-send is a no-op). A collector
that finds a gap asks on floor/shoe/<id>/replay {"from": eseq}: the gateway publishes again from
there (its store holds every event). Every 5 s, and when the phase, round, result, irregularities
or link state change, a retained floor/shoe/<id>/state message carries the live table state (phase,
round, last result, open irregularities, link health, store head, published cursor, the shoe's
game/pay table/rules from its status), no key, signed with a key derived from the shoe key and a
counter that only goes up (keyring.seal_state). Publishing does not wait: up to 200 events per
table are in flight, and the cursor follows the PUBACKs in eseq order. `publish_rate` (events/s
per table, `shoectl gateway --publish-rate`) caps how fast a table's store is published, so that
a floor's gateways catching up after a broker outage spread their backlogs instead of sending
them at once; a live table sends under 1 event/s and is never held by a cap above that.
The loop does not poll its tables: each link's listener (ShoeLink.listeners) wakes it when an event
is queued, as do a replay request, a (re)connection and stop(); otherwise it sleeps up to IDLE_WAIT
(link health and the periodic state are looked at then), or BUSY_WAIT while a publish awaits its
PUBACK (paho has no wake for that) or a link without listeners must be polled.
A link that stops for good (ShoeLink.fatal: its audit store failed, so it stores and acknowledges
nothing more) is logged with its reason (within IDLE_WAIT), makes /healthz answer 503 naming it and
sets `failed` (and `fatal`, the reason): `shoectl gateway` then exits 1 with it instead of running
on with nothing to publish. Every other error is logged and kept (`errors`: floor/errlog.py).
One Gateway can serve several shoes (the bench runs 500 in one process); production runs one
per table (`shoectl gateway`).
"""

import json
import logging
import os
import queue
import threading
import time
from pathlib import Path

from host_tools import events as E
from host_tools.errors import ShoeError
from host_tools.floor import keyring, mqtt
from host_tools.floor.errlog import ErrorLog
from host_tools.livetable import LiveTable

_BATCH = 200
SAVE_EVERY = 0.5  # the cursor file is rewritten at most this often (s), and at most this late
IDLE_WAIT = 0.5  # the loop's longest sleep: link health is looked at twice a second anyway
BUSY_WAIT = 0.02  # its sleep while a publish awaits its PUBACK (paho has no wake for it)
PACE_BURST_S = 0.2  # publish_rate: a table may send this many seconds' worth at once (at least 1)


class Pace:
    """At most `rate` events a second, in bursts of at most max(1, rate * PACE_BURST_S): a
    token bucket that starts with one token. `take(now)` -> how many may go now; `spent(n)`."""

    def __init__(self, rate):
        self.rate = float(rate)
        self.burst = max(1.0, self.rate * PACE_BURST_S)
        self.tokens = 1.0
        self.at = None

    def take(self, now):
        if self.at is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return int(self.tokens)

    def spent(self, n):
        self.tokens -= n


class _ShoeFeed:
    """One shoe the gateway serves: its link and store, its live table (host_tools.livetable)
    and how far its events are published."""

    def __init__(self, shoe, link, store, cursor):
        self.shoe = shoe
        self.link = link
        self.store = store
        self.cursor = cursor  # every eseq <= cursor is acknowledged by the broker
        self.dirty = True
        self.live = LiveTable(shoe)  # what the retained state shows
        self.state_sent = None
        self.state_at = 0.0
        self.changed = True  # the state differs from the last one published
        self.link_up = None
        self.link_at = 0.0
        self.sent = cursor  # the last eseq handed to the MQTT client
        self.inflight = {}  # eseq -> (paho MQTTMessageInfo, monotonic time)
        self.need_config = True  # ask the shoe for its pay table and rules (status)
        self.fetching = False
        self.config_retry_at = 0.0
        self.failed = None  # why its link stopped for good (link.fatal), once seen
        self.queued = True  # the link may have queued events since the last drain
        # a link that calls its listeners for each queued event wakes the gateway (below); one
        # that does not (a stand-in) is drained on every turn of the loop, which then polls
        self.wakes = isinstance(getattr(link, "listeners", None), list)
        self.listener = None
        self.pace = None  # Pace: publish_rate

    def rewind(self, to=None):
        """Publish again from `to` (default: the acknowledged cursor)."""
        if to is not None:
            self.cursor = min(self.cursor, to)
        self.inflight.clear()
        self.sent = self.cursor
        self.dirty = True

    def drain(self):
        self.queued = not self.wakes
        got = False
        while True:
            try:
                kind, body, eseq = self.link.events.get_nowait()
            except queue.Empty:
                return got
            got = got or bool(eseq)
            if self.live.apply(kind, body, eseq):
                self.changed = True
            if kind == E.PHASE and self.live.phase == "open_round" and isinstance(body, dict):
                self.need_config = True


class Gateway:
    def __init__(
        self,
        broker_url,
        name,
        cursor_path=None,
        prefix=mqtt.PREFIX,
        state_every=5.0,
        fetch_config=False,
        timed=True,
        publish_rate=None,
    ):
        if publish_rate is not None and not 0 < publish_rate < float("inf"):
            raise ValueError("publish_rate: events/s per table, > 0 (or None: no cap)")
        self.publish_rate = publish_rate
        self.trace = None  # trace(shoe, eseq): called as each event is handed to MQTT (benches)
        self.fetch_config = fetch_config
        self.timed = timed  # each event in the envelope with the gateway's time
        self.broker_url = broker_url
        self.name = name
        self.prefix = prefix
        self.state_every = state_every
        self.cursor_path = Path(cursor_path) if cursor_path else None
        self.tables = {}
        self.published = 0
        self.republished = 0
        self.errors = ErrorLog("gateway")  # every error, logged; the latest for /healthz
        self.fatal = None  # why a shoe's link stopped for good (its store failed)
        self.failed = threading.Event()  # set with `fatal`: `shoectl gateway` exits on it
        self.save_every = SAVE_EVERY
        self._saved_at = 0.0
        self._unsaved = False  # a cursor advanced since the file was written
        self._made_dir = False
        self._saved = self.saved_cursors()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = None
        self.client = None

    # ---- cursors ----------------------------------------------------------------------------
    def saved_cursors(self):
        """{shoe: eseq} as last saved (what a restart resumes from); {} if none or unreadable."""
        if self.cursor_path and self.cursor_path.exists():
            try:
                return {k: int(v) for k, v in json.loads(self.cursor_path.read_text()).items()}
            except (ValueError, AttributeError):
                return {}
        return {}

    def _save_cursors(self):
        if not self.cursor_path:
            return
        if not self._made_dir:
            self.cursor_path.parent.mkdir(parents=True, exist_ok=True)
            self._made_dir = True
        # the cursors as one snapshot, written outside the lock: on a busy disk the write can
        # take tens of ms, and paho's thread takes the lock for a replay request
        with self._lock:
            data = json.dumps({s: t.cursor for s, t in self.tables.items()})
        tmp = self.cursor_path.with_suffix(".tmp")
        tmp.write_text(data)
        os.replace(tmp, self.cursor_path)

    # ---- set-up -----------------------------------------------------------------------------
    def add(self, shoe, link, store):
        t = _ShoeFeed(shoe, link, store, self._saved.get(shoe, 0))
        if self.publish_rate:
            t.pace = Pace(self.publish_rate)
        if t.wakes:
            t.listener = lambda ev, t=t: self._queued(t)
            link.listeners.append(t.listener)
        with self._lock:
            self.tables[shoe] = t
        if self.client is not None and self.client.is_connected():
            self.client.subscribe(mqtt.topic(shoe, "replay", self.prefix), qos=1)
        self._wake.set()

    def _queued(self, t):
        """The link queued an event (its reader thread, under its lock: only a flag and a wake)."""
        t.queued = True
        self._wake.set()

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            return
        with self._lock:
            shoes = list(self.tables)
        if shoes:
            client.subscribe([(mqtt.topic(s, "replay", self.prefix), 1) for s in shoes])
        for t in self.tables.values():
            t.dirty = True
            t.state_sent = None
            t.changed = True
        self._wake.set()

    def _on_message(self, client, userdata, msg):
        shoe, what = mqtt.shoe_of(msg.topic, self.prefix)
        t = self.tables.get(shoe)
        if t is None or what != "replay":
            return
        try:
            frm = int(json.loads(msg.payload)["from"])
        except (ValueError, KeyError, TypeError):
            return
        with self._lock:
            if frm - 1 < t.sent:
                self.republished += t.sent - max(0, frm - 1)
                t.rewind(max(0, frm - 1))
        self._wake.set()

    def start(self):
        self.client = mqtt.client(
            self.broker_url,
            self.name,
            clean=False,
            on_connect=self._on_connect,
            on_message=self._on_message,
        )
        self._thread = threading.Thread(target=self._run, name="gateway", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(10)
        if self.client is not None:
            self.client.disconnect()  # first: it wakes the network loop, which then ends
            self.client.loop_stop()  # (the other way round the loop sleeps out its 1 s select)
        self._save_cursors()
        with self._lock:
            tables = list(self.tables.values())
        for t in tables:  # a gateway started again on the same links adds its own
            if t.wakes and t.listener in t.link.listeners:
                t.link.listeners.remove(t.listener)

    # ---- the loop ---------------------------------------------------------------------------
    def _run(self):
        wait = BUSY_WAIT
        while not self._stop.is_set():
            # woken by the links (an event queued), a replay request, a connection, a config
            # fetched, stop(); otherwise it sleeps up to IDLE_WAIT (BUSY_WAIT while a publish
            # awaits its PUBACK or a link cannot wake it, or until a cursor save is due)
            self._wake.wait(wait)
            self._wake.clear()
            with self._lock:
                tables = list(self.tables.values())
            for t in tables:
                if t.queued and t.drain():
                    t.dirty = True
                if t.failed is None and getattr(t.link, "fatal", None):
                    self._link_failed(t)
                if (
                    self.fetch_config
                    and t.need_config
                    and not t.fetching
                    and time.monotonic() >= t.config_retry_at
                    and t.failed is None
                ):
                    t.fetching = True
                    threading.Thread(target=self._fetch_config, args=(t,), daemon=True).start()
            if not self.client.is_connected():
                for t in tables:  # paho re-sends its own in-flight messages; publish
                    if t.inflight:  # again from the cursors anyway (a no-op downstream)
                        t.rewind()
            else:
                try:
                    self._publish_states(tables)  # first: a new config goes before the results
                    self._publish_events([t for t in tables if t.dirty])
                except Exception as e:
                    # the daemon's top loop: whatever failed (the broker gone mid-batch, paho
                    # refusing a publish, a store read) is said, and publishing starts again
                    # from the acknowledged cursors (a re-send is a no-op downstream); never
                    # die here
                    self.errors.note("publish", e)
                    for t in tables:
                        t.rewind()
            wait = self._save_if_due(tables)

    def _save_if_due(self, tables):
        """Write the cursor file if a cursor advanced and the last write is SAVE_EVERY old;
        -> how long the loop may sleep."""
        now = time.monotonic()
        wait = IDLE_WAIT
        if self._unsaved:
            due = self._saved_at + self.save_every - now
            if due <= 0:
                self._saved_at = now
                try:
                    self._save_cursors()
                    self._unsaved = False
                    if getattr(self, "pruner", None) is not None:  # ops: the store pruned up
                        self.pruner.after_save(self)  # to the saved cursor (floor/prune.py)
                except Exception as e:  # a full disk: said, tried again SAVE_EVERY later;
                    self.errors.note("cursor", e)  # publishing goes on (never die here)
                    wait = min(wait, self.save_every)
            else:
                wait = min(wait, due)
        if any(t.inflight or not t.wakes or (t.pace and t.dirty) for t in tables):
            wait = BUSY_WAIT  # (a paced table with more to send: its next token)
        return wait

    @property
    def last_error(self):
        return self.errors.last

    def _link_failed(self, t):
        """The shoe's link stopped for good (ShoeLink.fatal: its audit store failed, so it
        acknowledges nothing more): said once, the gateway unhealthy, `failed` set. What the
        store holds is still published; nothing new can come."""
        t.failed = str(t.link.fatal)
        t.changed = True
        reason = "shoe %s: the link stopped: %s" % (t.shoe, t.failed)
        self.errors.note("link", reason, level=logging.ERROR)
        if self.fatal is None:
            self.fatal = reason
        self.failed.set()

    def _publish_events(self, tables):
        """Hand new events to paho (at most _BATCH in flight per table) without waiting; the
        cursor advances as PUBACKs arrive, in eseq order; a refused or stale publish rewinds
        `sent` to the cursor so the store is published again from there."""
        if self.fetch_config:  # the collector re-evaluates results with the table's config:
            tables = [t for t in tables if t.live.config is not None]  # let it have that first
        trace = self.trace
        for t in tables:
            now = time.monotonic()
            room = _BATCH - len(t.inflight)
            if t.pace is not None:
                room = min(room, t.pace.take(now))
            if room <= 0:
                continue
            rows = t.store.payloads(t.shoe, t.sent, room, received=True)
            if len(rows) < room:
                t.dirty = False
            if t.pace is not None:
                t.pace.spent(len(rows))
            topic = mqtt.topic(t.shoe, "events", self.prefix)
            key = t.link.ep.key if self.timed else None
            for eseq, payload, received in rows:
                # the receive time as the store has it (when the link stored the event), so a
                # re-publication carries the same time
                msg = (
                    keyring.wrap_event(key, t.shoe, received, payload)
                    if key is not None and received is not None
                    else bytes(payload)
                )
                t.inflight[eseq] = (self.client.publish(topic, msg, qos=1), now)
                t.sent = eseq
                if trace is not None:
                    trace(t.shoe, eseq)
        self._advance()

    def _advance(self):
        changed = False
        now = time.monotonic()
        with self._lock:
            for t in self.tables.values():
                while t.inflight:
                    first = min(t.inflight)
                    info, at = t.inflight[first]
                    if _acked(info):
                        del t.inflight[first]
                        if first > t.cursor:
                            self.published += first - t.cursor
                            t.cursor = first
                            changed = True
                        continue
                    if _refused(info) or now - at > 10.0:  # publish again from the cursor
                        t.rewind()
                    break
        if changed:
            self._unsaved = True  # written by the loop, at most every save_every

    def _fetch_config(self, t):
        """The table's configuration (pay table, rules) from the shoe's status reply: the
        collector re-evaluates results with it (a result names its pay table only if packed so)."""
        try:
            cfg = t.link.command("status", {}, timeout=5.0).get("config") or {}
            t.live.config = {
                "game": cfg.get("game"),
                "paytable": cfg.get("paytable"),
                "rules": cfg.get("rules"),
            }
            t.need_config = False
            t.changed = True
        except (ShoeError, OSError, AttributeError) as e:  # refused, no answer, no dict
            self.errors.note("status", e)
            t.config_retry_at = time.monotonic() + 2.0  # ask again, not at once
        finally:
            t.fetching = False
            self._wake.set()

    def _publish_states(self, tables):
        now = time.time()
        for t in tables:
            if now - t.link_at >= 0.5:  # link health: looked at twice a second
                t.link_at = now
                up = t.link.up()
                if up != t.link_up:
                    t.link_up = up
                    t.changed = True
            if not t.changed and t.state_sent is not None and now - t.state_at < self.state_every:
                continue
            st = dict(
                t.live.state(),
                published=t.cursor,
                gateway=self.name,
                link=_link_health(t.link),
                at=now,
            )
            # signed under the shoe key's state label, with a counter that only goes up (the
            # collector refuses an older or equal one): keyring.seal_state
            t.state_ctr = max(getattr(t, "state_ctr", 0) + 1, int(now * 1000))
            self.client.publish(
                mqtt.topic(t.shoe, "state", self.prefix),
                keyring.seal_state(t.link.ep.key, t.shoe, st, t.state_ctr),
                qos=1,
                retain=True,
            )
            t.state_sent = True
            t.changed = False
            t.state_at = now


def _acked(info):
    """The broker acknowledged this QoS 1 publish (PUBACK); False if not (yet) or refused."""
    try:
        return info.is_published()
    except (RuntimeError, ValueError):  # paho: not connected / queue full when published
        return False


def _refused(info):
    try:
        info.is_published()
        return False
    except (RuntimeError, ValueError):
        return True


def _link_health(link):
    """Link figures safe to show anywhere: no key, no MAC, no payload."""
    try:
        s = link.stats()
    except (ShoeError, OSError, AttributeError):  # a link closed or gone
        return {"up": False}
    errs = s.get("errors") or {}
    return {
        "up": bool(s.get("up")),
        "reconnects": s.get("reconnects", 0),
        "errors": sum(v for v in errs.values() if isinstance(v, int)),
    }
