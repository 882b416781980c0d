"""Nothing on the broker is trusted for the shape of the floor: forged, altered, replayed and
cross-shoe state messages are refused and alerted, unknown shoe ids are quarantined (never a
tile), replayed events are counted, events are insert-only for every role, and a collector keeps
one broker session across restarts."""

import json
import os
import subprocess
import sys
import threading
import types

import psycopg
import pytest

from host_tools.errors import ShoeError
from host_tools.floor import keyring, mqtt, pg
from host_tools.floor.collector import Collector
from host_tools.sim.floor import mosquitto
from host_tools.sim.floor.harness import Floor
from host_tools.sim.floor.simshoe import make_keys
from shoe.link.message import GENESIS, seal_message
from tests.host_tools.floor.conftest import wait_all_stored, wait_for
from tests.host_tools.floor.test_hostile import _publish
from tests.host_tools.floor.web import Web


class _Tap:
    """An MQTT client on the broker (as anyone there could be) recording the state messages."""

    def __init__(self, url):
        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion

        self.got = []
        self._lock = threading.Lock()
        self.c = paho.Client(CallbackAPIVersion.VERSION2, client_id="tap")
        self.c.on_message = self._on
        self.c.connect("127.0.0.1", int(url.rsplit(":", 1)[1]))
        self.c.subscribe(mqtt.PREFIX + "/shoe/+/state", qos=1)
        self.c.loop_start()

    def _on(self, c, u, msg):
        with self._lock:
            self.got.append((msg.topic, bytes(msg.payload)))

    def states(self, shoe):
        with self._lock:
            return [p for t, p in self.got if t == mqtt.topic(shoe, "state")]

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


def _publish_retained(url, topic, payload):
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    c = paho.Client(CallbackAPIVersion.VERSION2, client_id="intruder-retained")
    c.connect("127.0.0.1", int(url.rsplit(":", 1)[1]))
    c.loop_start()
    c.publish(topic, payload, qos=1, retain=True).wait_for_publish(10)
    c.disconnect()
    c.loop_stop()


def _ctr(payload):
    return json.loads(json.loads(payload)["state"])["ctr"]


def test_state_is_verified_unknown_shoes_quarantined_replays_counted(tmp_path, broker, db_url):
    with Floor(tmp_path, tables=2, rate=20, broker_url=broker.url, db_url=db_url) as f:
        conn = pg.connect(db_url)
        col = f.collectors[0]
        col.replay_alert = 5
        tap = _Tap(broker.url)
        try:
            f.driver.start()

            def shoe_row(s):
                return conn.execute(
                    "SELECT state_ctr, gateway->>'gateway', replays, "
                    "state_refused FROM shoes WHERE shoe=%s",
                    (s,),
                ).fetchone()

            wait_for(
                lambda: (shoe_row("T001") or [0])[0] > 0 and len(tap.states("T001")) >= 1,
                what="a verified state for T001",
            )
            old = tap.states("T001")[0]
            # a newer state taken: `old` is now a replay
            wait_for(lambda: shoe_row("T001")[0] > _ctr(old), what="a newer state for T001")
            other = tap.states("T002") or wait_for(lambda: tap.states("T002"), what="T002 state")
            env = json.loads(old)
            altered = dict(env, state=env["state"].replace('"gw-floor"', '"evil"'))
            assert altered["state"] != env["state"]
            forged = keyring.seal_state(
                os.urandom(32),
                "T001",
                {"gateway": "evil", "link": {"up": False}, "published": 10**9},
                2**62,
            )
            legacy = json.dumps({"gateway": "evil", "link": {"up": False}}).encode()
            top = mqtt.topic("T001", "state")
            # events: a stored event again (x6), and an unknown shoe's event and state
            real = bytes(
                wait_for(
                    lambda: conn.execute(
                        "SELECT payload FROM events WHERE shoe='T001' AND eseq=2"
                    ).fetchone(),
                    what="event 2",
                )[0]
            )
            zk = make_keys()
            z1, _ = seal_message(zk["shoe"], "phase", {"phase": "idle"}, 1, GENESIS, "Z999")
            _publish(
                broker.url,
                [
                    (top, forged),
                    (top, json.dumps(altered).encode()),
                    (top, other[-1]),
                    (top, legacy),
                    (top, old),
                ]
                + [(mqtt.topic("T001", "events"), real)] * 6
                + [
                    (mqtt.topic("Z999", "events"), z1),
                    (mqtt.topic("Z999", "state"), keyring.seal_state(zk["shoe"], "Z999", {}, 1)),
                ],
            )

            def kinds():
                return {
                    k: n
                    for k, n in conn.execute(
                        "SELECT kind, count(*) FROM alerts GROUP BY kind"
                    ).fetchall()
                }

            want = {"bad_state", "state_replay", "replay", "unknown_shoe"}
            wait_for(lambda: want <= set(kinds()), what=lambda: "alerts (have %s)" % kinds())
            wait_for(
                lambda: shoe_row("T001")[3] >= 5 and shoe_row("T001")[2] >= 6,
                what=lambda: "counts (have %s)" % (shoe_row("T001"),),
            )
            # refused state is never shown: the stored state is the gateway's own
            ctr, gw, replays, refused = shoe_row("T001")
            assert gw == "gw-floor" and ctr < 2**62
            assert conn.execute("SELECT count(*) FROM alerts WHERE shoe='T002'").fetchone()[0] == 0
            # the unknown shoe: quarantined, one alert, never a table (no row, no tile)
            assert conn.execute("SELECT count(*) FROM shoes WHERE shoe='Z999'").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM alerts WHERE shoe='Z999'").fetchone()[0] == 1
            wait_for(
                lambda: (
                    conn.execute(
                        "SELECT sum(messages) FROM quarantine WHERE shoe='Z999'"
                    ).fetchone()[0]
                    == 2
                ),
                what="quarantine count",
            )
            web = Web(f.view.url).login(*f.login)
            page = web.json("api/floor")["tables"]
            assert sorted(t["shoe"] for t in page) == ["T001", "T002"]
            t1 = [t for t in page if t["shoe"] == "T001"][0]
            assert t1["gateway"]["link"]["up"] and t1["replays"] >= 6
            alerts = web.json("api/alerts")
            assert [q["shoe"] for q in alerts["quarantine"]] == ["Z999"]
            assert "unknown_shoe" in {a["kind"] for a in alerts["alerts"]}
            # the real tables go on: a later state is still taken
            n = shoe_row("T001")[0]
            wait_for(lambda: shoe_row("T001")[0] > n, what="states taken after the attack")
            # the last counter taken outlives the collector: `old`, now the retained state (an
            # intruder may publish retained), is the first its successor sees, and is refused
            f.driver.stop()
            f.gateway.stop()  # no newer state from the gateway from now on
            col.kill()
            refused = shoe_row("T001")[3]
            _publish_retained(broker.url, top, old)
            nxt = f.start_collector("collector-2")
            wait_for(lambda: shoe_row("T001")[3] > refused, what="the old state refused again")
            assert nxt.owned["T001"].state_ctr > _ctr(old)
        finally:
            tap.close()


def test_state_message_binds_key_shoe_and_contents():
    k1, k2 = os.urandom(32), os.urandom(32)
    p = keyring.seal_state(k1, "T001", {"link": {"up": True}}, 5)
    st, ctr, _ = keyring.open_state(k1, "T001", p)
    assert ctr == 5 and st["link"]["up"] is True
    for key, shoe, payload, reason in [
        (k2, "T001", p, "bad_mac"),  # another key
        (k1, "T002", p, "bad_mac"),  # another shoe's topic
        (k1, "T001", p.replace(b"true", b"false"), "bad_mac"),
        (k1, "T001", b"{}", "malformed"),
        (k1, "T001", b"\xff", "malformed"),
    ]:
        with pytest.raises(keyring.StateError) as e:
            keyring.open_state(key, shoe, payload)
        assert e.value.reason == reason
    # not the event MAC's key: a state key is derived under its own label
    assert keyring.state_key(k1) != k1


_TABLES = (
    "shoes",
    "events",
    "rounds",
    "alerts",
    "collectors",
    "quarantine",
    "schema_migrations",
    "view_sessions",
    "alert_acks",
)


def test_events_are_insert_only_for_every_role(db_url):
    pg.migrate(db_url)
    c = pg.connect(db_url)
    c.execute("SET ROLE floor_collector")
    c.execute(
        "INSERT INTO events (shoe, eseq, kind, body, prev, hash, mac, payload, chain, "
        "collector) VALUES ('T1', 1, 'phase', '{}', '\\x00', '\\x00', '\\x00', '\\x00', "
        "'ok', 'c')"
    )
    c.execute(
        "INSERT INTO rounds (shoe, eseq, outcome, summary, reeval) VALUES "
        "('T1', 1, 'void', '{}', 'void')"
    )

    def refused(sql, why):
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
            c.execute(sql)
        assert why in str(e.value), (sql, str(e.value))

    # the collector: granted no UPDATE, DELETE or TRUNCATE on events and rounds (privileges)
    for t in ("events", "rounds"):
        refused("UPDATE %s SET eseq = 2" % t, "permission denied")
        refused("DELETE FROM %s" % t, "permission denied")
        refused("TRUNCATE %s" % t, "permission denied")
    # the reader: every write to every table refused
    c.execute("RESET ROLE")
    c.execute("SET ROLE floor_reader")
    assert c.execute("SELECT count(*) FROM events").fetchone()[0] == 1
    for t in _TABLES:
        refused("INSERT INTO %s DEFAULT VALUES" % t, "permission denied")
        col = {
            "schema_migrations": "version",
            "collectors": "name",
            "view_sessions": "role",
            "alert_acks": "role",
        }.get(t, "shoe")
        refused("UPDATE %s SET %s = %s" % (t, col, col), "permission denied")
        refused("DELETE FROM %s" % t, "permission denied")
        refused("TRUNCATE %s" % t, "permission denied")
    refused("SELECT nextval('alerts_id_seq')", "permission denied")
    # every role, the owner's included: the trigger
    c.execute("RESET ROLE")
    for t in ("events", "rounds"):
        refused("UPDATE %s SET eseq = 2" % t, "insert-only")
        refused("DELETE FROM %s" % t, "insert-only")
        refused("TRUNCATE %s" % t, "insert-only")
    assert c.execute("SELECT eseq FROM events").fetchall() == [(1,)]


def _event(key, shoe, eseq, prev):
    return seal_message(key, "phase", {"phase": "idle"}, eseq, prev, shoe)


def test_collector_keeps_one_session_across_restarts(tmp_path, db_url):
    # the default name is the same in another process (no PID in it)
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "from host_tools.floor import mqtt; print(mqtt.default_name('collector'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert other == mqtt.default_name("collector")
    # Mosquitto, the production broker, whose sessions outlive its restarts (the embedded brokers
    # keep theirs in memory only; amqtt keeps none for an anonymous client)
    if mosquitto.find() is None:
        pytest.skip("no mosquitto installed (apt-get install mosquitto): sessions not tested")
    k = make_keys()
    ring = keyring.KeyRing({"X001": k["shoe"]})
    conn = pg.connect(db_url)
    p1, h1 = _event(k["shoe"], "X001", 1, GENESIS)
    p2, _ = _event(k["shoe"], "X001", 2, h1)
    with mosquitto.Mosquitto(tmp_path / "mq") as broker:
        c = Collector(broker.url, db_url, ring, live_s=1.0).start()
        try:
            wait_for(lambda: c.sessions, what="connected")
            assert c.sessions == [False] and c.name == other
            _publish(broker.url, [(mqtt.topic("X001", "events"), p1)])
            wait_for(
                lambda: conn.execute("SELECT count(*) FROM events").fetchone()[0] == 1,
                what="event 1",
            )
            # a second collector under the same name is refused while this one lives
            with pytest.raises(ShoeError, match="another --name"):
                Collector(broker.url, db_url, ring, live_s=1.0, migrate=False).start()
        finally:
            c.kill()  # crashed: its session stays on the broker
        _publish(broker.url, [(mqtt.topic("X001", "events"), p2)])  # queued in that session
        c = Collector(broker.url, db_url, ring, live_s=1.0).start()
        try:
            wait_for(lambda: c.sessions, what="reconnected")
            assert c.sessions == [True]  # the broker's session taken up again
            # event 2 comes from the session's queue (no gateway here could replay it)
            wait_for(
                lambda: conn.execute("SELECT count(*) FROM events").fetchone()[0] == 2,
                what="event 2 from the kept session",
            )
        finally:
            c.stop()
        assert mqtt.forget_session(broker.url, other) is True  # a stale session, ended
        assert mqtt.forget_session(broker.url, other) is False


def test_per_lease_subscriptions_bring_each_collector_only_its_shoes(tmp_path, broker, db_url):
    with Floor(
        tmp_path, tables=4, collectors=0, rate=20, broker_url=broker.url, db_url=db_url, view=False
    ) as f:
        conn = pg.connect(db_url)
        for i in (1, 2):
            f.collectors.append(
                Collector(broker.url, db_url, f.ring, "collector-%d" % i, per_lease=True).start()
            )
        f.driver.start()
        wait_for(
            lambda: (
                all(c.owned for c in f.collectors) and sum(len(c.owned) for c in f.collectors) == 4
            ),
            what="shared leases",
        )
        wait_for(lambda: all(c.counts["stored"] > 20 for c in f.collectors), what="stored")
        owned = [set(c.owned) for c in f.collectors]
        foreign = [c.counts["foreign"] for c in f.collectors]
        n = sum(f.emitted().values())
        wait_for(lambda: sum(f.emitted().values()) > n + 100, what="more events")
        # (subscribed to every shoe's events, each would have had ~half of these)
        grew = [c.counts["foreign"] - n0 for c, n0 in zip(f.collectors, foreign)]
        assert [set(c.owned) for c in f.collectors] == owned  # (no lease moved meanwhile)
        assert grew == [0, 0]
        # a collector dies: the survivor subscribes to its shoes and misses nothing
        f.collectors[0].kill()
        wait_for(lambda: len(f.collectors[1].owned) == 4, what="take-over")
        # (a lease is taken, then its shoe subscribed: the collector's thread may be between)
        wait_for(lambda: f.collectors[1]._subscribed == set(f.keys), what="subscriptions")
        f.driver.stop()
        wait_all_stored(f, conn)
        assert conn.execute("SELECT count(*) FROM alerts").fetchone()[0] == 0


def test_a_signed_state_the_floor_cannot_store_is_refused_not_a_crash(db_url):
    """Bad input never stops the collector: a signed state with NaN time or an overflowing
    cursor is refused as bad_state (the batch and the next good state still commit)."""
    k = make_keys()
    ring = keyring.KeyRing({"X001": k["shoe"]})
    c = Collector("mqtt://127.0.0.1:1", db_url, ring, "c-bad")
    pg.migrate(db_url)
    c.conn = pg.connect(db_url)
    c.conn.execute("SET ROLE floor_collector")
    c.client = types.SimpleNamespace(publish=lambda *a, **k: None, ack=lambda *a: None)
    c._take("X001")
    top = mqtt.topic("X001", "state")
    c._process(
        [
            (top, keyring.seal_state(k["shoe"], "X001", {"at": float("nan")}, 5), 0, 0),
            (top, keyring.seal_state(k["shoe"], "X001", {"published": 10**30}, 6), 0, 0),
            (
                top,
                keyring.seal_state(k["shoe"], "X001", {"link": {"up": True}, "at": 1.0}, 7),
                0,
                0,
            ),
        ]
    )
    assert c.last_error is None
    row = c.conn.execute(
        "SELECT state_refused, state_ctr, gateway->'link'->>'up' FROM shoes"
    ).fetchone()
    assert row == (2, 7, "true")
