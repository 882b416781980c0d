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

The collector in four files, transport apart from what it does with the messages (as mpremote
keeps its transport apart from its commands): collector.py the MQTT loop, batches and commits;
checks.py the checks above (a mixin); leases.py the leases and what is held of each shoe;
collector_sql.py every SQL statement (role and identifiers through psycopg.sql).
"""

import json
import math
import queue
import threading
import time

import psycopg

from host_tools.floor import collector_sql as sql
from host_tools.floor import mqtt, pg
from host_tools.floor.checks import Checks
from host_tools.floor.errlog import ErrorLog
from host_tools.floor.leases import Leases


class Collector(Leases, Checks):
    def __init__(
        self,
        broker_url,
        db_url,
        keyring,
        name=None,
        role="floor_collector",
        prefix=mqtt.PREFIX,
        gap_timeout=30.0,
        live_s=3.0,
        on_commit=None,
        migrate=True,
        replay_alert=1000,
        replay_window=60.0,
        per_lease=False,
        forward=None,
        skew_alert=5.0,
        partitions_ahead=3,
    ):
        self.migrate = migrate
        self.forward = forward  # forward.Forwarder: alerts to syslog / a webhook
        self.skew_alert = skew_alert  # seconds of gateway clock skew that raise an alert
        self.partitions_ahead = partitions_ahead
        self.ops = _Ops()  # figures for /metrics and /healthz (metrics.py)
        # per_lease: subscribe to the events of the leased shoes only (the states of all: they
        # say which shoes there are); else to every shoe's events, dropping others' shoes'
        self.per_lease = per_lease
        self._subscribed = set()  # per_lease: the shoes whose events we subscribe to
        self._resubscribe = None  # per_lease: set by a (re)connection: None/new/kept
        self.broker_url = broker_url
        self.db_url = db_url
        self.keys = keyring
        self.name = name or mqtt.default_name("collector")
        self.replay_alert = replay_alert
        self.replay_window = replay_window
        self.sessions = []  # session_present of each CONNACK (a restart: True)
        self.quarantined = {}  # unknown shoe id -> messages seen
        self._state_alerted = {}  # (shoe, kind) -> when last alerted
        self.role = role
        self.prefix = prefix
        self.gap_timeout = gap_timeout
        self.live_s = live_s
        self.on_commit = on_commit  # callback([(shoe, eseq)], commit time) (bench)
        self.q = queue.Queue()
        self.known = set()  # shoes seen on the broker
        self.owned = {}  # shoe -> leases.ShoeHead
        self.config = {}  # shoe -> {"paytable", "rules"} from the gateway state
        self.counts = {
            "stored": 0,
            "duplicates": 0,
            "rejected": 0,
            "alerts": 0,
            "replays": 0,
            "quarantined": 0,
            "state_refused": 0,
            "foreign": 0,
            "bad_gateway_time": 0,
        }
        self._stop = threading.Event()
        self._thread = None
        self._alert_once = set()
        self._live = 1
        self.errors = ErrorLog("collector")  # every error, logged; the latest for /healthz
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
        sql.register(self.conn, self.name)
        self.client = mqtt.client(
            self.broker_url,
            self.name,
            clean=False,
            on_connect=self._on_connect,
            on_message=self._on_message,
            manual_ack=True,
        )
        self._thread = threading.Thread(target=self._run, name="collector", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._stop.is_set():
            return  # stopped already (or killed)
        self._stop.set()
        if self._thread:
            self._thread.join(10)
        if self.client is not None:
            self.client.disconnect()  # first: it wakes the network loop, which then ends
            self.client.loop_stop()  # (the other way round the loop sleeps out its 1 s select)
        if self.conn is not None:
            try:
                sql.goodbye(self.conn, self.name)
            except psycopg.Error as e:  # its heartbeat ages out instead
                self.errors.note("goodbye", e)
            self.conn.close()

    def kill(self):
        """Die as a crashed process does (tests, bench): no goodbye, connections dropped."""
        self._stop.set()
        if self._thread:
            self._thread.join(10)
        self.client.loop_stop()
        sock = self.client.socket()  # closed under paho, not disconnect(): no DISCONNECT
        if sock is not None:  # packet, the broker sees the peer die (session kept)
            sock.close()
        self.conn.close()

    # ---- MQTT -------------------------------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if not reason_code.is_failure:
            self.sessions.append(bool(flags.session_present))
            if self.per_lease:  # the events: _subscriptions(), in the loop
                self._resubscribe = "kept" if flags.session_present else "new"
                client.subscribe(self.prefix + "/shoe/+/state", 1)
                return
            client.subscribe(
                [(self.prefix + "/shoe/+/events", 1), (self.prefix + "/shoe/+/state", 1)]
            )

    def _on_message(self, client, userdata, msg):
        self.q.put(
            (msg.topic, bytes(msg.payload), msg.mid, msg.qos, bool(msg.retain), time.time())
        )

    def _ask_replay(self, shoe, h, now):
        # at most every 3 s per shoe: a replay re-sends the whole range, and asking again
        # while the first one is still on its way only adds load
        if now - h.asked_at < 3.0:
            return
        h.asked_at = now
        self.counts["replays"] += 1
        self.client.publish(
            mqtt.topic(shoe, "replay", self.prefix),
            json.dumps({"from": h.eseq + 1, "by": self.name}),
            qos=1,
        )

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
            made = sql.make_partitions(self.conn, self.partitions_ahead + 1)
            self.ops.partitions_made += len(made)
            self.ops.ahead_ok = self.partitions_ahead
            self.ops.open_alerts = sql.open_alerts(self.conn)
        except psycopg.Error as e:  # database away: the next round tries again (sooner)
            self.errors.note("partitions", e)
            self.ops.error_at = time.time()
            self.ops.ahead_ok = 0
            self.ops.next_maintain = now + 5.0

    def _process(self, batch):
        now = time.monotonic()
        w = sql.Writes()
        for item in batch:
            # (topic, payload, mid, qos, retained, arrival time) from _on_message
            topic, payload, mid, qos = item[:4]
            arrived = item[5] if len(item) > 5 and not item[4] else None
            shoe, what = mqtt.shoe_of(topic, self.prefix)
            if shoe is None:
                continue
            if shoe not in self.known and self.keys.get(shoe) is None:
                self._quarantine(shoe, topic, w)  # never leased: never a row, never a tile
                continue
            if shoe not in self.known:  # a new shoe: lease it now if it is our share
                self.known.add(shoe)
                if len(self.owned) < math.ceil(len(self.known) / self._live):
                    self._try_take(shoe)
            h = self.owned.get(shoe)
            if h is None:
                if what == "events":
                    self.counts["foreign"] += 1  # another collector's shoe (per_lease: few)
                continue
            if what == "events":
                self._event(shoe, h, payload, w, item[5] if len(item) > 5 else None)
            elif what == "state":
                self._state(shoe, h, payload, w, arrived)
        for shoe, h in self.owned.items():  # holes that do not fill
            if h.pending and h.gap_since is not None:
                if now - h.gap_since > self.gap_timeout:
                    first = min(h.pending)
                    w.alert(
                        shoe,
                        first,
                        "gap",
                        "events %d..%d never arrived (asked the gateway "
                        "to publish them again)" % (h.eseq + 1, first - 1),
                    )
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
            self.ops.next_maintain = 0.0  # a partition missing? make sure at once
            for shoe in list(w.touched):  # reload what the database really holds
                self.owned.pop(shoe, None)
                sql.unlock(self.conn, shoe)
            return
        times = [b[5] for b in batch if len(b) > 5]
        if times:
            self.ops.lag = time.time() - min(times)
        for _topic, _payload, mid, qos, *_ in batch:
            if qos:
                self.client.ack(mid, qos)

    # ---- writing ----------------------------------------------------------------------------
    def _commit(self, w):
        if w.empty():
            return
        sql.commit(self.conn, w, self.name)
        t = time.time()
        self.counts["stored"] += len(w.events)
        self.counts["alerts"] += len(w.alerts) + len(w.unknown)
        self.ops.committed(t, self.counts["stored"])
        if self.forward is not None and (w.alerts or w.unknown):
            self.forward.send(
                [
                    {
                        "shoe": a[0],
                        "eseq": a[1],
                        "kind": a[2],
                        "detail": a[3],
                        "collector": self.name,
                        "at": t,
                    }
                    for a in w.alerts
                ]
                + [
                    {
                        "shoe": u,
                        "eseq": None,
                        "kind": "unknown_shoe",
                        "detail": "messages for a shoe id this floor has no key for",
                        "collector": self.name,
                        "at": t,
                    }
                    for u in w.unknown
                ]
            )
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
        self.skew = {}  # shoe -> collector clock minus the gateway's (s)
        self.skew_obs = {}  # shoe -> [(arrived, skew)] of the last 30 s
        self.open_alerts = 0
        self.ahead_ok = 0
        self.partitions_made = 0
        self._marks = []  # (time, stored) of recent commits

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
