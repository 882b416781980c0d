"""The collector: MQTT -> verify every event again -> PostgreSQL, exactly once per (shoe, eseq).

It trusts no gateway. For each message on floor/shoe/<id>/events it:
  0. takes the gateway's receive time off the envelope, verified (keyring.unwrap_event; a bare
     payload from a gateway without it is taken too, with no time, during a rollout; a time
     whose MAC fails is alerted, `bad_gateway_time`, and the event stored without it), stored
     with the event (events.gateway_at) and compared with this collector's clock (clock_skew);
  1. verifies the MAC over the signed payload with that shoe's key and id
     (host_tools.link.host.open_event: another shoe's event relabelled fails);
     a bad MAC, a malformed payload or an unknown shoe is an alert and is never stored;
  2. checks the hash chain against what PostgreSQL holds: eseq = head + 1 and prev = head hash
     ("ok"), prev differs ("broken": stored, flagged, alerted); an eseq at or below the head is a
     re-delivery (identical bytes: counted, not stored again) or a conflict (other bytes with a
     valid MAC: alerted, not stored); an eseq beyond head + 1 waits while the collector asks the
     gateway to publish again from head + 1 (floor/shoe/<id>/replay); if the hole is still there
     after `gap_timeout` it is alerted as a gap and the chain goes on ("gap"); an event that
     fills such a hole later is still stored (chain "ok" if its predecessor is held);
  3. stores the event (INSERT ... ON CONFLICT DO NOTHING keyed by (shoe, eseq)), checks every
     card's commitment at its round's reveal and every result's cards against the revealed ones
     (host_tools/reveal.py; a mismatch is a `reveal_mismatch` alert), re-evaluates a round
     result with the engine from the revealed cards (host_tools/engine/reeval.py; a
     disagreement is an alert), turns
     irregularities into open alerts (closed when the shoe reports them cleared), updates the
     table's live row, and NOTIFYs `floor` in the same transaction;
  4. only then acknowledges the MQTT message (manual PUBACK): a collector killed mid-batch leaves
     nothing half-done, and what it had not committed is published again.

Several collectors share a floor through per-shoe leases: PostgreSQL session advisory locks
(pg_try_advisory_lock), taken up to a fair share (shoes seen / live collectors, from the
`collectors` heartbeat table). A collector that dies loses its connection and with it its locks;
the others take its shoes within a second and catch up from the database head by asking the
gateways for a replay. The gateway's retained state (its published cursor) also tells the owner
when it is behind (a broker restart lost queued messages) and triggers a replay.

Nothing on the broker is trusted for the shape of the floor (docs/floor.md, Trust):
  - a shoe id with no key in the keyring is quarantined (table `quarantine`, one open
    `unknown_shoe` alert per id): never leased, never a row in `shoes`, so never a tile;
  - the state message is used only if it verifies (keyring.open_state: a MAC under the shoe key's
    state label, bound to the shoe id) and its counter is above the last one taken (kept in
    shoes.state_ctr across restarts and lease moves); anything else is refused, counted
    (shoes.state_refused) and alerted (`bad_state`, `state_replay`); the tile's phase, round and
    results come from verified events only, the state gives link health, the published cursor
    and the table's configuration;
  - an event received again is counted per shoe (shoes.replays) and alerted past
    `replay_alert` within `replay_window` seconds (`replay`); other contents under a stored eseq
    is a `conflict` at once.
The collector's MQTT client id is its name, stable across restarts (default collector-<host>),
and its session persistent: a restart takes up the broker's queue for it instead of leaving it.
With per_lease it subscribes to the events of its leased shoes only (and to every shoe's state,
which says which shoes there are): a lease taken subscribes before it asks for a replay, a lease
given back unsubscribes; events that went to nobody in between come again by that replay.
"""
import functools
import json
import math
import queue
import threading
import time

import psycopg

from host_tools import reveal
from host_tools.engine import reeval
from host_tools import events as E
from host_tools.events import decode, jsonable as _jsonable
from host_tools.errors import ShoeError
from host_tools.floor import keyring as _keyring, mqtt, pg
from host_tools.floor.errlog import ErrorLog
from host_tools.reveal import RoundWatch
from host_tools.link.host import open_event
from host_tools.livetable import LiveTable
from shoe.link.message import GENESIS, LinkError

_LOCK_NS = 0x5E0E  # advisory lock namespace (first int of the two-int form)
_QUARANTINE_MAX = 1000   # distinct unknown ids a collector tracks; the rest are counted as "*"
_ALERT_EVERY = 30.0      # at most one alert per shoe and kind of refused state this often


class _Head:
    __slots__ = ("eseq", "hash", "pending", "gap_since", "asked_at", "published", "behind_since",
                 "watch", "state_ctr", "state_mac", "dups", "dup_since", "dup_alerted", "live")

    def __init__(self, eseq, h, loader=None):
        self.live = LiveTable()   # the tile's phase, round and last result, from its events
        self.eseq = eseq
        self.hash = h
        self.pending = {}         # eseq -> (payload, gateway time) beyond head + 1, waiting
        self.gap_since = None
        self.asked_at = 0.0
        self.published = 0        # the gateway's published cursor (retained state)
        self.behind_since = None
        self.watch = RoundWatch(loader)   # commitments vs reveals (a round begun before the
        #                                   lease: its events from the database)
        self.state_ctr = 0        # the last verified state message's counter and MAC
        self.state_mac = None
        self.dups = 0             # events received again in the current window
        self.dup_since = 0.0
        self.dup_alerted = False


class Collector:
    def __init__(self, broker_url, db_url, keyring, name=None, role="floor_collector",
                 prefix=mqtt.PREFIX, gap_timeout=30.0, live_s=3.0, on_commit=None, migrate=True,
                 replay_alert=1000, replay_window=60.0, per_lease=False, forward=None,
                 skew_alert=5.0, partitions_ahead=3):
        self.migrate = migrate
        self.forward = forward            # forward.Forwarder: alerts to syslog / a webhook
        self.skew_alert = skew_alert      # seconds of gateway clock skew that raise an alert
        self.partitions_ahead = partitions_ahead
        self.ops = _Ops()                 # figures for /metrics and /healthz (metrics.py)
        # per_lease: subscribe to the events of the leased shoes only (the states of all: they
        # say which shoes there are); else to every shoe's events, dropping others' shoes'
        self.per_lease = per_lease
        self._subscribed = set()          # per_lease: the shoes whose events we subscribe to
        self._resubscribe = None          # per_lease: set by a (re)connection: None/new/kept
        self.broker_url = broker_url
        self.db_url = db_url
        self.keys = keyring
        self.name = name or mqtt.default_name("collector")
        self.replay_alert = replay_alert
        self.replay_window = replay_window
        self.sessions = []                # session_present of each CONNACK (a restart: True)
        self.quarantined = {}             # unknown shoe id -> messages seen
        self._state_alerted = {}          # (shoe, kind) -> when last alerted
        self.role = role
        self.prefix = prefix
        self.gap_timeout = gap_timeout
        self.live_s = live_s
        self.on_commit = on_commit        # callback([(shoe, eseq)], commit time) (bench)
        self.q = queue.Queue()
        self.known = set()                # shoes seen on the broker
        self.owned = {}                   # shoe -> _Head
        self.config = {}                  # shoe -> {"paytable", "rules"} from the gateway state
        self.counts = {"stored": 0, "duplicates": 0, "rejected": 0, "alerts": 0, "replays": 0,
                       "quarantined": 0, "state_refused": 0, "foreign": 0,
                       "bad_gateway_time": 0}
        self._stop = threading.Event()
        self._thread = None
        self._alert_once = set()
        self._live = 1
        self.errors = ErrorLog("collector")   # every error, logged; the latest for /healthz
        self.conn = None
        self.client = None

    @property
    def last_error(self):
        return self.errors.last

    # ---- life cycle -------------------------------------------------------------------------
    def start(self):
        if self.migrate:
            pg.migrate(self.db_url)
        self.conn = pg.connect(self.db_url)
        if self.role:
            pg.set_role(self.conn, self.role)
        self._one_of_this_name()
        self.conn.execute("INSERT INTO collectors (name) VALUES (%s) ON CONFLICT (name) DO "
                          "UPDATE SET seen_at = clock_timestamp()", (self.name,))
        self.client = mqtt.client(self.broker_url, self.name, clean=False,
                                  on_connect=self._on_connect, on_message=self._on_message,
                                  manual_ack=True)
        self._thread = threading.Thread(target=self._run, name="collector", daemon=True)
        self._thread.start()
        return self

    def _one_of_this_name(self):
        """Two live collectors under one name would take the broker session from each other:
        wait out a crashed predecessor's heartbeat (live_s), refuse a live one."""
        deadline = time.monotonic() + self.live_s + 1.0
        while True:
            live = self.conn.execute(
                "SELECT seen_at > clock_timestamp() - make_interval(secs => %s) FROM collectors "
                "WHERE name = %s", (self.live_s, self.name)).fetchone()
            if not live or not live[0]:
                return
            if time.monotonic() > deadline:
                self.conn.close()
                raise ShoeError("a collector named %s is running (its heartbeat is fresh): give "
                                "this one another --name" % self.name)
            time.sleep(0.2)

    def stop(self):
        if self._stop.is_set():
            return                       # stopped already (or killed)
        self._stop.set()
        if self._thread:
            self._thread.join(10)
        if self.client is not None:
            self.client.loop_stop()
            self.client.disconnect()
        if self.conn is not None:
            try:
                self.conn.execute("DELETE FROM collectors WHERE name = %s", (self.name,))
            except psycopg.Error as e:   # its heartbeat ages out instead
                self.errors.note("goodbye", e)
            self.conn.close()

    def kill(self):
        """Die as a crashed process does (tests, bench): no goodbye, connections dropped."""
        self._stop.set()
        if self._thread:
            self._thread.join(10)
        self.client.loop_stop()
        self.client._sock_close()
        self.conn.close()

    # ---- MQTT -------------------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if not reason_code.is_failure:
            self.sessions.append(bool(flags.session_present))
            if self.per_lease:                # the events: _subscriptions(), in the loop
                self._resubscribe = "kept" if flags.session_present else "new"
                client.subscribe(self.prefix + "/shoe/+/state", 1)
                return
            client.subscribe([(self.prefix + "/shoe/+/events", 1),
                              (self.prefix + "/shoe/+/state", 1)])

    def _subscriptions(self):
        """per_lease: subscribe to the events of every leased shoe, and only those."""
        again, self._resubscribe = self._resubscribe, None
        if again:
            gone = set(self._subscribed)
            if again == "kept":          # a session from before this start: drop what it holds
                gone |= set(self.keys.shoes())
            self._subscribed = set()
        else:
            gone = self._subscribed - set(self.owned)
        gone -= set(self.owned)
        if gone:
            self.client.unsubscribe([mqtt.topic(s, "events", self.prefix) for s in sorted(gone)])
            self._subscribed -= gone
        for shoe in sorted(set(self.owned) - self._subscribed):
            self._subscribe(shoe)

    def _subscribe(self, shoe):
        self.client.subscribe(mqtt.topic(shoe, "events", self.prefix), 1)
        self._subscribed.add(shoe)

    def _on_message(self, client, userdata, msg):
        self.q.put((msg.topic, bytes(msg.payload), msg.mid, msg.qos, bool(msg.retain),
                    time.time()))

    def _ask_replay(self, shoe, h, now):
        # at most every 3 s per shoe: a replay re-sends the whole range, and asking again
        # while the first one is still on its way only adds load
        if now - h.asked_at < 3.0:
            return
        h.asked_at = now
        self.counts["replays"] += 1
        self.client.publish(mqtt.topic(shoe, "replay", self.prefix),
                            json.dumps({"from": h.eseq + 1, "by": self.name}), qos=1)

    # ---- leases -----------------------------------------------------------------------------
    def _leases(self):
        c = self.conn
        c.execute("UPDATE collectors SET seen_at = clock_timestamp() WHERE name = %s",
                  (self.name,))
        live = c.execute("SELECT count(*) FROM collectors WHERE seen_at > clock_timestamp() - "
                         "make_interval(secs => %s)", (self.live_s,)).fetchone()[0] or 1
        self._live = max(1, live)
        share = math.ceil(len(self.known) / self._live)
        # give back what is beyond a fair share (another collector joined)
        for shoe in sorted(self.owned)[share + 1:] if len(self.owned) > share + 1 else []:
            c.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_LOCK_NS, shoe))
            del self.owned[shoe]
        for shoe in sorted(self.known - set(self.owned)):
            if len(self.owned) >= share:
                break
            self._try_take(shoe)

    def _try_take(self, shoe):
        got = self.conn.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))",
                                (_LOCK_NS, shoe)).fetchone()[0]
        if got:
            self._take(shoe)

    def _take(self, shoe):
        row = self.conn.execute("SELECT head_eseq, head_hash, state_ctr, state_mac FROM shoes "
                                "WHERE shoe = %s", (shoe,)).fetchone()
        loader = functools.partial(self._round_events, shoe)
        h = _Head(row[0], bytes(row[1]) if row and row[1] else GENESIS, loader) if row else \
            _Head(0, GENESIS, loader)
        if row:
            h.state_ctr, h.state_mac = row[2], bytes(row[3]) if row[3] else None
        self.owned[shoe] = h
        if self.per_lease and self.client is not None:
            self._subscribe(shoe)           # before the replay request below
        self.conn.execute("INSERT INTO shoes (shoe, owner) VALUES (%s, %s) ON CONFLICT (shoe) "
                          "DO UPDATE SET owner = EXCLUDED.owner, updated_at = clock_timestamp()",
                          (shoe, self.name))
        self._ask_replay(shoe, h, time.monotonic())   # catch up on whatever the last owner missed

    def _round_events(self, shoe, rnd):
        """A round's round_open, card and reveal events already in the database."""
        return [(k, b) for k, b in self.conn.execute(
            "SELECT kind, body FROM events WHERE shoe = %s AND kind IN ('round_open', 'card', "
            "'reveal') AND body->>'round' = %s ORDER BY eseq", (shoe, str(rnd))).fetchall()]

    # ---- the loop ---------------------------------------------------------------------------
    def _run(self):
        next_lease = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            self.ops.loop_at = time.time()
            if now >= self.ops.next_maintain:
                self._maintain(now)
            if now >= next_lease:
                try:
                    self._leases()
                except psycopg.Error as e:  # database away: keep trying
                    self.errors.note("leases", e)
                if self.per_lease:
                    self._subscriptions()
                next_lease = now + 0.5
            batch = []
            try:
                batch.append(self.q.get(timeout=0.05))
                while len(batch) < 1000:
                    batch.append(self.q.get_nowait())
            except queue.Empty:
                pass
            try:
                self._process(batch)
            except Exception as e:
                # the daemon's top loop: never die; what was not acknowledged comes again
                # (replay), and the error is said and kept
                self.errors.note("batch", e)
                self.ops.error_at = time.time()

    def _maintain(self, now):
        """Every minute: the event partitions for today and `partitions_ahead` days on
        (migrations/004_partitions.sql: created by the owner's function, not owned by this
        role), and the number of open alerts (metrics)."""
        self.ops.next_maintain = now + 60.0
        try:
            made = self.conn.execute("SELECT floor_event_partitions(clock_timestamp(), %s)",
                                     (self.partitions_ahead + 1,)).fetchall()
            self.ops.partitions_made += len(made)
            self.ops.ahead_ok = self.partitions_ahead
            self.ops.open_alerts = self.conn.execute(
                "SELECT count(*) FROM alerts WHERE closed_at IS NULL").fetchone()[0]
        except psycopg.Error as e:   # database away: the next round tries again (sooner)
            self.errors.note("partitions", e)
            self.ops.error_at = time.time()
            self.ops.ahead_ok = 0
            self.ops.next_maintain = now + 5.0

    def _process(self, batch):
        now = time.monotonic()
        w = _Writes()
        for item in batch:
            # (topic, payload, mid, qos, retained, arrival time) from _on_message
            topic, payload, mid, qos = item[:4]
            arrived = item[5] if len(item) > 5 and not item[4] else None
            shoe, what = mqtt.shoe_of(topic, self.prefix)
            if shoe is None:
                continue
            if shoe not in self.known and self.keys.get(shoe) is None:
                self._quarantine(shoe, topic, w)   # never leased: never a row, never a tile
                continue
            if shoe not in self.known:          # a new shoe: lease it now if it is our share
                self.known.add(shoe)
                if len(self.owned) < math.ceil(len(self.known) / self._live):
                    self._try_take(shoe)
            h = self.owned.get(shoe)
            if h is None:
                if what == "events":
                    self.counts["foreign"] += 1   # another collector's shoe (per_lease: few)
                continue
            if what == "events":
                self._event(shoe, h, payload, w, item[5] if len(item) > 5 else None)
            elif what == "state":
                self._state(shoe, h, payload, w, arrived)
        for shoe, h in self.owned.items():    # holes that do not fill
            if h.pending and h.gap_since is not None:
                if now - h.gap_since > self.gap_timeout:
                    first = min(h.pending)
                    w.alert(shoe, first, "gap", "events %d..%d never arrived (asked the gateway "
                            "to publish them again)" % (h.eseq + 1, first - 1))
                    self._accept(shoe, h, *h.pending.pop(first), w, chain="gap")
                    self._drain(shoe, h, w)
                else:
                    self._ask_replay(shoe, h, now)
            elif h.published > h.eseq and self.q.qsize() < 50:
                # the gateway says it published more than we hold, and nothing is waiting in
                # our queue: the broker lost them (a restart) or they went to a dead collector
                if h.behind_since is None:
                    h.behind_since = now
                elif now - h.behind_since > 2.0:
                    self._ask_replay(shoe, h, now)
            else:
                h.behind_since = None
        try:
            self._commit(w)
        except Exception as e:
            # broad on purpose: whatever failed inside the transaction (PostgreSQL, or a value
            # it refused), nothing of the batch is stored, so the heads this batch advanced
            # must be reloaded from the database; the batch is not acknowledged (it comes again)
            self.errors.note("commit", e)
            self.ops.error_at = time.time()
            self.ops.next_maintain = 0.0      # a partition missing? make sure at once
            for shoe in list(w.touched):      # reload what the database really holds
                self.owned.pop(shoe, None)
                self.conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))",
                                  (_LOCK_NS, shoe))
            return
        times = [b[5] for b in batch if len(b) > 5]
        if times:
            self.ops.lag = time.time() - min(times)
        for topic, payload, mid, qos, *_ in batch:
            if qos:
                self.client.ack(mid, qos)

    def _event(self, shoe, h, payload, w, arrived=None):
        key = self.keys.get(shoe)
        if key is None:
            self.counts["rejected"] += 1
            if shoe not in self._alert_once:
                self._alert_once.add(shoe)
                w.alert(shoe, None, "unknown_shoe", "events for a shoe this floor has no key for")
            return
        try:
            payload, gw_at = _keyring.unwrap_event(key, shoe, payload)
        except _keyring.StateError as e:
            # the envelope's time is the gateway's: forged or altered on the way. The payload
            # inside is still the shoe's (its own MAC decides): store it, without that time
            payload, gw_at = _keyring.split_event(payload)[0], None
            self.counts["bad_gateway_time"] += 1
            w.alert(shoe, None, "bad_gateway_time", "an event's gateway time refused (%s): "
                    "the event is stored without it" % e)
        if gw_at is not None and not (math.isfinite(gw_at) and 0 < gw_at < 2 ** 33):
            gw_at = None
        try:
            kind, body, eseq, prev, head, mac, _ = open_event(payload, key, shoe)
        except LinkError as e:
            self.counts["rejected"] += 1
            w.alert(shoe, None, e.reason, "event rejected: %s (forged or altered on the way)"
                    % ("its MAC does not verify with the shoe's key" if e.reason == "bad_mac"
                       else "not a shoe event"))
            return
        if not eseq:
            self.counts["rejected"] += 1
            w.alert(shoe, None, "malformed", "a volatile message published as an event")
            return
        if eseq <= h.eseq:
            same = w.payloads.get((shoe, eseq))
            if same is None:
                r = self.conn.execute("SELECT payload FROM events WHERE shoe=%s AND eseq=%s",
                                      (shoe, eseq)).fetchone()
                same = bytes(r[0]) if r else None
            if same == payload:
                self.counts["duplicates"] += 1
                self._replayed(shoe, h, eseq, w)
            elif same is None and eseq <= self._horizon(shoe):
                # archived and dropped by the retention (floor-retention): not stored again
                self.counts["duplicates"] += 1
                self._replayed(shoe, h, eseq, w)
            elif same is None:
                # a late arrival into a hole already alerted as a gap: store it, chained to
                # its predecessor if that is held
                before = GENESIS if eseq == 1 else w.hashes.get((shoe, eseq - 1))
                if before is None:
                    r = self.conn.execute("SELECT hash FROM events WHERE shoe=%s AND eseq=%s",
                                          (shoe, eseq - 1)).fetchone()
                    before = bytes(r[0]) if r else None
                kind, shown = decode(kind, body)
                w.event(shoe, eseq, kind, _jsonable(shown), prev, head, mac, payload,
                        "ok" if before == prev else "gap", self.name, gw_at)
            else:
                self.counts["rejected"] += 1
                self._replayed(shoe, h, eseq, w)
                w.alert(shoe, eseq, "conflict", "event %d arrived again with other contents (a "
                        "valid MAC): the shoe's key or journal is suspect; the stored one is kept"
                        % eseq)
            return
        if gw_at is not None and arrived is not None:
            self._skew(shoe, arrived - gw_at, arrived, w, state=False)
        if eseq > h.eseq + 1:
            h.pending[eseq] = (payload, gw_at)
            if h.gap_since is None:
                h.gap_since = time.monotonic()
            self._ask_replay(shoe, h, time.monotonic())
            return
        self._accept(shoe, h, payload, gw_at, w, opened=(kind, body, eseq, prev, head, mac))
        self._drain(shoe, h, w)

    def _horizon(self, shoe):
        r = self.conn.execute("SELECT eseq FROM event_horizon WHERE shoe = %s",
                              (shoe,)).fetchone()
        return r[0] if r else 0

    def _drain(self, shoe, h, w):
        while h.eseq + 1 in h.pending:
            self._accept(shoe, h, *h.pending.pop(h.eseq + 1), w)
        if not h.pending:
            h.gap_since = None
        else:
            for e in [e for e in h.pending if e <= h.eseq]:
                del h.pending[e]

    def _accept(self, shoe, h, payload, gw_at, w, opened=None, chain=None):
        kind, body, eseq, prev, head, mac = opened or open_event(payload, self.keys.get(shoe),
                                                                  shoe)[:6]
        if chain is None:
            chain = "ok" if prev == h.hash else "broken"
            if chain == "broken":
                w.alert(shoe, eseq, "chain_break", "event %d does not follow the stored chain "
                        "head of event %d: something between them was removed or altered"
                        % (eseq, h.eseq))
        try:
            found = h.watch.feed(kind, body)
        except Exception as e:
            # broad on purpose: the events are a shoe's (or a forger's) and the check must not
            # turn one into a poison message that stops the table's chain: alerted, logged
            self.errors.note("reveal_check", e)
            found = [(reveal.ALERT, None, "the reveal check failed: %r" % (e,))]
        kind, shown = decode(kind, body)
        w.event(shoe, eseq, kind, _jsonable(shown), prev, head, mac, payload, chain, self.name,
                gw_at)
        h.eseq, h.hash = eseq, head
        h.live.apply(kind, shown, eseq)
        w.live(shoe, h)
        for alert, _, detail in found:
            w.alert(shoe, eseq, alert, detail[:500])
        if kind == E.ROUND_RESULT and isinstance(shown, dict):
            cfg = w.config.get(shoe) or self.config.get(shoe) or {}
            bad = reeval.disagreements(shown, shown.get("paytable") or cfg.get("paytable"),
                                       shown.get("rules", cfg.get("rules")),
                                       h.watch.hands(shown.get("round")))
            w.round(shoe, eseq, shown.get("round"), "result", _summary(shown),
                    "disagree" if bad else "agree")
            if bad:
                w.alert(shoe, eseq, "disagreement", "; ".join(bad)[:500])
        elif kind == E.ROUND_VOID and isinstance(shown, dict):
            w.round(shoe, eseq, shown.get("round"), "void",
                    {"reason": shown.get("reason"), "detail": shown.get("detail")}, "void")
        elif kind == E.IRREGULARITY and isinstance(shown, dict):
            w.alert(shoe, eseq, "irregularity", "%s%s" % (shown.get("reason"), (
                ": %s" % shown["detail"]) if shown.get("detail") else ""), ref=shown.get("id"))
        elif kind == E.IRREGULARITY_CLEARED and isinstance(shown, dict):
            w.closes.append((shoe, str(shown.get("id"))))

    def _quarantine(self, shoe, topic, w):
        self.counts["quarantined"] += 1
        shoe = shoe[:64]
        if shoe not in self.quarantined and len(self.quarantined) >= _QUARANTINE_MAX:
            shoe = "*"                      # a flood of made-up ids: one row for the rest
        first = shoe not in self.quarantined
        self.quarantined[shoe] = self.quarantined.get(shoe, 0) + 1
        q = w.quarantine.setdefault(shoe, [0, topic[:200]])
        q[0] += 1
        if first:
            w.unknown.append(shoe)

    def _replayed(self, shoe, h, eseq, w):
        """An event this floor already holds came again: counted; past `replay_alert` within
        `replay_window` seconds, alerted (a re-sent batch after an outage stays far below)."""
        now = time.monotonic()
        if now - h.dup_since > self.replay_window:
            h.dup_since, h.dups, h.dup_alerted = now, 0, False
        h.dups += 1
        w.replays[shoe] = w.replays.get(shoe, 0) + 1
        if h.dups >= self.replay_alert and not h.dup_alerted:
            h.dup_alerted = True
            w.alert(shoe, eseq, "replay", "%d events received again within %.0f s (the last: "
                    "event %d): replayed on the broker, or a gateway re-sending its store"
                    % (h.dups, self.replay_window, eseq))

    def _refuse_state(self, shoe, kind, detail, w):
        self.counts["state_refused"] += 1
        w.state_refused[shoe] = w.state_refused.get(shoe, 0) + 1
        now = time.monotonic()
        if now - self._state_alerted.get((shoe, kind), -1e9) >= _ALERT_EVERY:
            self._state_alerted[(shoe, kind)] = now
            w.alert(shoe, None, kind, ("state message refused, not shown: %s (further ones are "
                                       "counted in the table's state_refused)" % detail)[:500])

    def _state(self, shoe, h, payload, w, arrived=None):
        key = self.keys.get(shoe)
        if key is None:                     # (quarantined before it gets here)
            return
        try:
            st, ctr, mac = _keyring.open_state(key, shoe, payload)
        except _keyring.StateError as e:
            self._refuse_state(shoe, "bad_state", {
                "bad_mac": "forged, altered or another table's (its MAC does not verify)",
                "wrong_shoe": "signed for another table",
            }.get(e.reason, "not a signed state message (%s)" % e), w)
            return
        if ctr == h.state_ctr and mac == h.state_mac:
            return                          # the retained message delivered again
        if ctr <= h.state_ctr and arrived is None:
            # a retained copy delivered at a (re)subscription (MQTT sets the retain flag only
            # then) older than a state already taken: refused and counted, but not alerted,
            # since a broker's retained copy lagging the live one at a resubscription is normal
            self.counts["state_refused"] += 1
            w.state_refused[shoe] = w.state_refused.get(shoe, 0) + 1
            return
        if ctr <= h.state_ctr:
            self._refuse_state(shoe, "state_replay", "counter %d is not above the last one "
                               "taken (%d): an old state replayed" % (ctr, h.state_ctr), w)
            return
        shown = {k: st.get(k) for k in ("gateway", "link", "published", "head", "at")}
        try:
            published = int(st.get("published") or 0)
            at = float(st.get("at") or 0)
            json.dumps(shown, allow_nan=False)
            if not (math.isfinite(at) and 0 <= published < 2 ** 63):
                raise ValueError(at)
        except (ValueError, TypeError, OverflowError):
            # signed, so from the gateway itself: a bug there, refused like a forgery
            self._refuse_state(shoe, "bad_state", "signed, but not a state this floor can "
                               "store", w)
            return
        h.state_ctr, h.state_mac, h.published = ctr, mac, published
        if arrived is not None:
            self._skew(shoe, arrived - at, arrived, w)
        # link health, the published cursor and the configuration; phase, round and results
        # on the tile come from verified events only
        w.gateway[shoe] = (shown, ctr, mac, min(at, time.time()))
        if isinstance(st.get("config"), dict):   # the table's pay table and rules (status reply)
            self.config[shoe] = st["config"]

    def _skew(self, shoe, skew, arrived, w, state=True):
        """The gateway's clock against ours, from verified state messages that came live (not
        the retained one a subscription delivers: that one is as old as it is) and from each
        event's verified gateway time (state=False). The signed time is when the gateway sent
        the state or received the event; transit only adds to `arrived - at`, so a gateway
        ahead by more than `skew_alert` seconds shows at once (an event cannot arrive before the
        gateway had it), and one behind by the smallest value over the last 30 s of state
        messages, once that holds 3 states spread over 10 s or more (a backlog the broker
        queued while this collector was away arrives in one burst, late, and is no skew; events
        never tell "behind": a gateway catching up publishes old events for as long as it takes).
        A `clock_skew` alert, at most one per shoe every 30 s."""
        if not state:
            if skew >= 0:
                return
            self.ops.skew[shoe] = min(skew, self.ops.skew.get(shoe, 0.0))
            least = None
        else:
            obs = self.ops.skew_obs.setdefault(shoe, [])
            obs.append((arrived, skew))
            while obs and obs[0][0] < arrived - 30.0:
                obs.pop(0)
            least = min(v for _, v in obs)
            self.ops.skew[shoe] = least if skew >= 0 else skew
        if not self.skew_alert:
            return
        if skew < -self.skew_alert:
            off = -skew
        elif least is not None and least > self.skew_alert and len(obs) >= 3 and \
                obs[-1][0] - obs[0][0] >= 10.0:
            off = least
        else:
            return
        now = time.monotonic()
        if now - self._state_alerted.get((shoe, "clock_skew"), -1e9) >= _ALERT_EVERY:
            self._state_alerted[(shoe, "clock_skew")] = now
            w.alert(shoe, None, "clock_skew", "the gateway's clock is %.1f s %s the collector's "
                    "(alert past %.1f s; from its %s): times from that table are suspect"
                    % (off, "ahead of" if skew < 0 else "behind", self.skew_alert,
                       "signed state messages" if state else "events' receive times"))

    # ---- writing ----------------------------------------------------------------------------
    def _commit(self, w):
        if w.empty():
            return
        c = self.conn
        with c.transaction():
            if w.events:
                with c.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO events (shoe, eseq, kind, body, prev, hash, mac, payload, "
                        "chain, collector, gateway_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,"
                        "to_timestamp(%s))", w.events)
                # (shoe, eseq) stored once: the insert trigger skips a duplicate across the
                # day partitions (migrations/004_partitions.sql), as ON CONFLICT DO NOTHING did
            if w.rounds:
                with c.cursor() as cur:
                    cur.executemany("INSERT INTO rounds (shoe, eseq, round, outcome, summary, "
                                    "reeval) VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                                    w.rounds)
            for shoe, ref in w.closes:
                c.execute("UPDATE alerts SET closed_at = clock_timestamp() WHERE shoe=%s AND "
                          "kind='irregularity' AND ref=%s AND closed_at IS NULL", (shoe, ref))
            if w.alerts:
                with c.cursor() as cur:
                    cur.executemany("INSERT INTO alerts (shoe, eseq, kind, detail, ref, collector)"
                                    " VALUES (%s,%s,%s,%s,%s,%s)",
                                    [a + (self.name,) for a in w.alerts])
            for shoe, lv in w.lives.items():
                c.execute(
                    "INSERT INTO shoes AS s (shoe, head_eseq, head_hash, phase, round, last_kind,"
                    " last_event_at, last_result, owner) VALUES (%s,%s,%s,%s,%s,%s,"
                    "clock_timestamp(),%s,%s) ON CONFLICT (shoe) DO UPDATE SET "
                    "head_eseq=EXCLUDED.head_eseq, head_hash=EXCLUDED.head_hash, "
                    "phase=COALESCE(EXCLUDED.phase, s.phase), round=COALESCE(EXCLUDED.round, "
                    "s.round), last_kind=EXCLUDED.last_kind, last_event_at=EXCLUDED.last_event_at,"
                    " last_result=COALESCE(EXCLUDED.last_result, s.last_result), "
                    "owner=EXCLUDED.owner, updated_at=clock_timestamp() "
                    "WHERE s.head_eseq < EXCLUDED.head_eseq",
                    (shoe, lv["eseq"], lv["hash"], lv.get("phase"), lv.get("round"), lv["kind"],
                     json.dumps(lv["result"]) if lv.get("result") else None, self.name))
            for shoe, (st, ctr, mac, at) in w.gateway.items():
                # gateway_at: the signed time (a retained state of a dead gateway shows as old)
                c.execute("UPDATE shoes SET gateway=%s, gateway_at=to_timestamp(%s), "
                          "state_ctr=%s, state_mac=%s, updated_at=clock_timestamp() "
                          "WHERE shoe=%s AND state_ctr < %s",
                          (json.dumps(st), at, ctr, mac, shoe, ctr))
            for shoe, n in w.replays.items():
                c.execute("UPDATE shoes SET replays = replays + %s, updated_at=clock_timestamp() "
                          "WHERE shoe=%s", (n, shoe))
            for shoe, n in w.state_refused.items():
                c.execute("UPDATE shoes SET state_refused = state_refused + %s, "
                          "updated_at=clock_timestamp() WHERE shoe=%s", (n, shoe))
            for shoe, (n, topic) in w.quarantine.items():
                c.execute("INSERT INTO quarantine AS q (shoe, collector, messages, last_topic) "
                          "VALUES (%s,%s,%s,%s) ON CONFLICT (shoe, collector) DO UPDATE SET "
                          "messages = q.messages + EXCLUDED.messages, last_topic = "
                          "EXCLUDED.last_topic, last_seen = clock_timestamp()",
                          (shoe, self.name, n, topic))
            for shoe in w.unknown:          # one open alert per unknown id on the floor
                c.execute("INSERT INTO alerts (shoe, kind, detail, collector) SELECT %s, "
                          "'unknown_shoe', %s, %s WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE "
                          "shoe = %s AND kind = 'unknown_shoe' AND closed_at IS NULL)",
                          (shoe, "messages for a shoe id this floor has no key for: quarantined "
                           "(not shown as a table; counts in quarantine)", self.name, shoe))
            c.execute("SELECT pg_notify('floor', %s)", (",".join(sorted(w.touched))[:7000],))
        t = time.time()
        self.counts["stored"] += len(w.events)
        self.counts["alerts"] += len(w.alerts) + len(w.unknown)
        self.ops.committed(t, self.counts["stored"])
        if self.forward is not None and (w.alerts or w.unknown):
            self.forward.send([{"shoe": a[0], "eseq": a[1], "kind": a[2], "detail": a[3],
                                "collector": self.name, "at": t} for a in w.alerts] +
                              [{"shoe": u, "eseq": None, "kind": "unknown_shoe", "detail":
                                "messages for a shoe id this floor has no key for",
                                "collector": self.name, "at": t} for u in w.unknown])
        if self.on_commit and w.events:
            self.on_commit([(e[0], e[1]) for e in w.events], t)


class _Ops:
    """What /metrics and /healthz read (host_tools/floor/metrics.py)."""

    def __init__(self):
        self.loop_at = time.time()
        self.next_maintain = 0.0
        self.last_commit = None
        self.error_at = 0.0
        self.lag = 0.0
        self.skew = {}                # shoe -> collector clock minus the gateway's (s)
        self.skew_obs = {}            # shoe -> [(arrived, skew)] of the last 30 s
        self.open_alerts = 0
        self.ahead_ok = 0
        self.partitions_made = 0
        self._marks = []              # (time, stored) of recent commits

    def committed(self, t, stored):
        self.last_commit = t
        self._marks.append((t, stored))
        while len(self._marks) > 2 and self._marks[0][0] < t - 10.0:
            self._marks.pop(0)

    def rate(self):
        m = list(self._marks)
        if len(m) < 2 or time.time() - m[-1][0] > 10.0:
            return 0.0
        return (m[-1][1] - m[0][1]) / max(1e-3, m[-1][0] - m[0][0])


def _summary(res):
    return {"game": res.get("game"), "dealer": res.get("dealer", {}).get("category"),
            "seats": {s: v.get("net") for s, v in (res.get("seats") or {}).items()}}


class _Writes:
    """What one batch writes, in one transaction."""

    def __init__(self):
        self.events, self.rounds, self.alerts, self.closes = [], [], [], []
        self.payloads = {}
        self.hashes = {}
        self.lives = {}
        self.gateway = {}
        self.config = {}
        self.touched = set()
        self.replays = {}
        self.state_refused = {}
        self.quarantine = {}
        self.unknown = []

    def empty(self):
        return not (self.events or self.alerts or self.lives or self.gateway or self.closes or
                    self.replays or self.state_refused or self.quarantine)

    def event(self, shoe, eseq, kind, body, prev, head, mac, payload, chain, collector,
              gateway_at=None):
        self.events.append((shoe, eseq, kind, json.dumps(body, sort_keys=True), prev, head, mac,
                            payload, chain, collector, gateway_at))
        self.payloads[(shoe, eseq)] = payload
        self.hashes[(shoe, eseq)] = head
        self.touched.add(shoe)

    def live(self, shoe, h):
        """The table's row as its live table (h.live) stands after this batch's events."""
        t = h.live
        result = t.last_result
        if result is not None and result["outcome"] == "result":
            result = dict(_summary(t.result), round=t.result.get("round"), outcome="result")
        self.lives[shoe] = {"eseq": h.eseq, "hash": h.hash, "kind": t.kind, "phase": t.phase,
                            "round": t.last_round, "result": result}

    def round(self, shoe, eseq, rnd, outcome, summary, verdict):
        self.rounds.append((shoe, eseq, rnd, outcome, json.dumps(_jsonable(summary)), verdict))

    def alert(self, shoe, eseq, kind, detail, ref=None):
        self.alerts.append((shoe, eseq, kind, detail, None if ref is None else str(ref)))
        self.touched.add(shoe)
