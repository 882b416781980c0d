"""Operations (issue 20, item 5): day partitions created ahead and used, retention that archives,
verifies, then detaches (and refuses a tampered archive), insert-only on every partition, the
gateway's store pruned with `verify` still passing, /healthz and /metrics, alerts to a webhook
(a dead one never blocks a commit), and the gateway clock's skew alerted."""

import json
import socket
import threading
import time
import types
import urllib.request
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg
import pytest

from host_tools import hoststate
from host_tools.errors import ShoeError
from host_tools.floor import gateway as gateway_mod
from host_tools.floor import metrics, pg, retention
from host_tools.floor.collector import Collector
from host_tools.floor.errlog import ErrorLog
from host_tools.floor.forward import Forwarder
from host_tools.floor.prune import Pruner
from host_tools.sim.floor.harness import Floor
from host_tools.sim.floor.simshoe import FloorDriver
from tests.host_tools.floor.conftest import wait_for
from tests.host_tools.floor.test_hostile import _publish

_INS = (
    "INSERT INTO events (shoe, eseq, kind, body, prev, hash, mac, payload, chain, collector, "
    "received_at) VALUES (%s, %s, 'phase', '{}', '\\x00', '\\x01', '\\x02', %s, 'ok', 'c', %s)"
)


def _where(conn, shoe, eseq):
    return [
        r[0]
        for r in conn.execute(
            "SELECT tableoid::regclass::text FROM events WHERE shoe=%s AND eseq=%s", (shoe, eseq)
        ).fetchall()
    ]


def test_partitions_retention_and_insert_only(tmp_path, db_url):
    pg.migrate(db_url)
    own = pg.connect(db_url)
    col = pg.connect(db_url)
    col.execute("SET ROLE floor_collector")
    now = datetime.now(timezone.utc)
    day = now.strftime("%Y%m%d")
    # created ahead: today and the next days, owned by the tables' owner, not the collector
    ahead = col.execute("SELECT floor_event_partitions(clock_timestamp(), 5)").fetchall()
    names = {p.name for p in retention.partitions(own)}
    for i in range(5):
        assert "events_p" + (now + timedelta(days=i)).strftime("%Y%m%d") in names
    assert ("events_p" + (now + timedelta(days=4)).strftime("%Y%m%d"),) in ahead
    owners = set(
        r[0]
        for r in own.execute(
            "SELECT pg_get_userbyid(c.relowner) FROM pg_inherits i JOIN pg_class c ON "
            "c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass"
        )
    )
    assert "floor_collector" not in owners
    # old days (as a floor that ran a while ago), rows in them by the collector's role
    old = now - timedelta(days=10)
    own.execute("SELECT floor_event_partitions(%s, 3)", (old,))
    for d in range(3):
        for e in range(1, 4):
            col.execute(_INS, ("T001", d * 10 + e, b"p%d-%d" % (d, e), old + timedelta(days=d)))
    col.execute(_INS, ("T001", 100, b"today", now))
    assert _where(own, "T001", 100) == ["events_p" + day]
    assert _where(own, "T001", 1) == ["events_p" + old.strftime("%Y%m%d")]
    # (shoe, eseq) once across partitions: the same again in another day is skipped
    col.execute(_INS, ("T001", 1, b"again", now))
    col.execute(_INS, ("T001", 100, b"again", old))
    assert (
        own.execute(
            "SELECT count(*) FROM events WHERE shoe='T001' AND eseq IN (1, 100)"
        ).fetchone()[0]
        == 2
    )
    # insert-only on a partition itself, for the owner too, and through the parent
    part = "events_p" + old.strftime("%Y%m%d")
    for c, sql in (
        (own, "UPDATE %s SET kind='x'" % part),
        (own, "DELETE FROM %s" % part),
        (own, "TRUNCATE %s" % part),
        (col, "UPDATE events SET kind='x'"),
        (col, "DELETE FROM events"),
        (col, "TRUNCATE %s" % part),
        (col, "ALTER TABLE events DETACH PARTITION %s" % part),
        (col, "DROP TABLE %s" % part),
    ):
        with pytest.raises(psycopg.Error):
            c.execute(sql)
    # retention: archive the three old days, tamper one archive, and it is not dropped
    arch = tmp_path / "archive"
    rep = retention.retire(own, arch, days=5, archive_only=True)
    assert [r["action"] for r in rep] == ["archived"] * 3 and rep[0]["rows"] == 3
    victim = arch / (part + ".copy")
    data = bytearray(victim.read_bytes())
    data[data.index(b"T001")] = ord("X")
    victim.write_bytes(bytes(data))
    argv = ["floor-retention", "--db", db_url, "--days", "5", "--archive-dir", str(arch)]
    with pytest.raises(ShoeError, match="did not verify"):
        _cli(argv)
    left = {p.name for p in retention.partitions(own)}
    assert (
        part in left
        and not {"events_p" + (old + timedelta(days=d)).strftime("%Y%m%d") for d in (1, 2)} & left
    )
    assert _where(own, "T001", 1) == [part]
    # the archive put right (written again): verified, detached, dropped, recorded
    victim.unlink()
    (arch / (part + ".json")).unlink()
    assert _cli(argv) == 0
    assert part not in {p.name for p in retention.partitions(own)}
    assert own.execute("SELECT count(*) FROM archives").fetchone()[0] == 3
    assert own.execute("SELECT eseq FROM event_horizon WHERE shoe='T001'").fetchone()[0] == 23
    # the archive holds the rows (COPY text), and an archived event sent again is not stored
    assert b"p0-1" not in victim.read_bytes() and b"\\\\x70302d31" in victim.read_bytes()
    col.execute(_INS, ("T001", 2, b"late", now))
    assert own.execute("SELECT count(*) FROM events WHERE shoe='T001'").fetchone()[0] == 1


def _cli(argv):
    import argparse

    from host_tools.commands import floor_retention

    p = argparse.ArgumentParser()
    floor_retention.configure(p)
    return floor_retention.run(p.parse_args(argv[1:]))


def test_legacy_events_become_the_first_partition(db_url):
    """A floor from before 004: its rows stay where they are, in the first partition."""
    conn = pg.connect(db_url)
    conn.execute(
        "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT "
        "NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for v, name, f in pg.migration_files():
        if v < 4:
            conn.execute(f.read_text())
            conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (v, name))
    conn.execute(_INS, ("T009", 7, b"old", datetime.now(timezone.utc)))
    assert pg.migrate(db_url) == [v for v, _, _ in pg.migration_files() if v >= 4]
    assert _where(conn, "T009", 7) == ["events_legacy"]
    conn.execute(_INS, ("T009", 7, b"dup", datetime.now(timezone.utc) + timedelta(days=1)))
    conn.execute(_INS, ("T009", 8, b"new", datetime.now(timezone.utc) + timedelta(days=1)))
    assert conn.execute("SELECT count(*) FROM events WHERE shoe='T009'").fetchone()[0] == 2
    with pytest.raises(psycopg.Error):
        conn.execute("DELETE FROM events_legacy")


class _Hook:
    """A local webhook: records what is POSTed."""

    def __init__(self):
        got = self.got = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                got.extend(
                    json.loads(self.rfile.read(int(self.headers["Content-Length"])))["alerts"]
                )
                self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d/alerts" % self.srv.server_address[1]

    def kinds(self):
        return {a["kind"] for a in list(self.got)}

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _metric(text, name, **labels):
    lab = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    want = name + ("{%s}" % lab if lab else "") + " "
    for line in text.splitlines():
        if line.startswith(want):
            return float(line[len(want) :])
    return None


def test_metrics_webhook_dead_webhook_and_skew(tmp_path, broker, db_url, monkeypatch):
    hook = _Hook()
    with Floor(
        tmp_path, tables=2, collectors=0, rate=20, broker_url=broker.url, db_url=db_url, view=False
    ) as f:
        c = Collector(
            f.broker_url,
            f.db_url,
            f.ring,
            "collector-ops",
            forward=Forwarder(webhook=hook.url),
            skew_alert=5.0,
        ).start()
        f.collectors.append(c)
        csrv = metrics.serve(
            "127.0.0.1:0",
            lambda: metrics.collector_samples(c),
            lambda: metrics.collector_health(c),
        )
        gsrv = metrics.serve(
            "127.0.0.1:0",
            lambda: metrics.gateway_samples(f.gateway),
            lambda: metrics.gateway_health(f.gateway),
        )
        conn = pg.connect(db_url)
        try:
            f.driver.start()
            wait_for(
                lambda: c.counts["stored"] >= 40 and len(c.owned) == 2,
                what=lambda: "events stored: %s" % c.counts,
            )
            # the partition of today was made (ahead, by the collector) and is used
            today = "events_p" + datetime.now(timezone.utc).strftime("%Y%m%d")
            assert conn.execute(
                "SELECT DISTINCT tableoid::regclass::text FROM events"
            ).fetchall() == [(today,)]
            # every event carries the gateway's receive time, before the collector's commit
            n, timed, before = conn.execute(
                "SELECT count(*), count(gateway_at), count(*) FILTER (WHERE gateway_at <= "
                "received_at) FROM events"
            ).fetchone()
            assert n > 0 and n == timed == before, (n, timed, before)
            code, body = _get(csrv.url + "/healthz")
            assert code == 200 and json.loads(body)["ok"] is True
            code, text = _get(csrv.url + "/metrics")
            assert code == 200
            stored = _metric(text, "shoe_collector_events_stored_total")
            assert 40 <= stored <= c.counts["stored"]
            assert _metric(text, "shoe_collector_leases") == 2
            assert _metric(text, "shoe_collector_last_commit_timestamp_seconds") > time.time() - 60
            assert _metric(text, "shoe_collector_partitions_ahead") == 3
            assert _metric(text, "shoe_collector_queue_depth") is not None
            code, text = _get(gsrv.url + "/metrics")
            t1 = f.gateway.tables["T001"]
            assert _metric(text, "shoe_gateway_link_up", shoe="T001") == 1
            assert 0 < _metric(text, "shoe_gateway_published_cursor", shoe="T001") <= t1.cursor
            assert _metric(text, "shoe_gateway_broker_connected") == 1
            assert json.loads(_get(gsrv.url + "/healthz")[1])["ok"] is True
            # an alert reaches the webhook (a forged event)
            _publish(f.broker_url, [("floor/shoe/T001/events", b"\x85garbage")])
            wait_for(
                lambda: hook.kinds() & {"malformed", "bad_mac"},
                what=lambda: "the forged event's alert on the webhook: %s" % hook.got,
            )
            assert not {"clock_skew"} & hook.kinds()
            # a webhook that never answers: alerts queue (bounded), commits go on
            dead = socket.socket()
            dead.bind(("127.0.0.1", 0))
            dead.listen(100)
            c.forward = Forwarder(
                webhook="http://127.0.0.1:%d/" % dead.getsockname()[1],
                queue_max=3,
                retries=1,
                timeout=60,
            )
            base = c.counts["stored"]
            _publish(
                f.broker_url, [("floor/shoe/T002/events", b"\x85bad%d" % i) for i in range(20)]
            )
            wait_for(
                lambda: c.counts["stored"] >= base + 40 and c.forward.counts["dropped"],
                what=lambda: (
                    "commits while the webhook hangs: %s %s" % (c.counts, c.forward.counts)
                ),
            )
            assert c.forward.counts["forwarded"] == 0
            _, text = _get(csrv.url + "/metrics")
            assert _metric(text, "shoe_collector_alerts_forwarded_total", result="dropped") > 0
            c.forward._stop.set()
            c.forward = Forwarder(webhook=hook.url)
            dead.close()
            # the gateway's clock a minute ahead: its signed states say so, alerted
            real = time.time
            monkeypatch.setattr(
                gateway_mod,
                "time",
                types.SimpleNamespace(time=lambda: real() + 60.0, monotonic=time.monotonic),
            )
            wait_for(
                lambda: "clock_skew" in hook.kinds(),
                what=lambda: "a clock_skew alert: %s" % c.ops.skew,
            )
            assert (
                conn.execute("SELECT count(*) FROM alerts WHERE kind='clock_skew'").fetchone()[0]
                >= 1
            )
            assert min(c.ops.skew.values()) < -55
        finally:
            csrv.stop()
            gsrv.stop()
            hook.close()
            conn.close()


def test_gateway_store_pruned_and_still_verifies(tmp_path, broker, db_url):
    with Floor(tmp_path, tables=1, rate=60, broker_url=broker.url, db_url=db_url, view=False) as f:
        f.driver.start()
        t = f.gateway.tables["T001"]
        store, key = f.stores[0], f.keys["T001"]["shoe"]
        wait_for(lambda: t.cursor >= 200, what=lambda: "cursor %d" % t.cursor)
        conn = pg.connect(db_url)

        def held(upto):
            return [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT eseq FROM events WHERE eseq <= %s ORDER BY 1", (upto,)
                ).fetchall()
            ]

        # keep_s=0 takes away the hours a real gateway keeps events after the broker's PUBACK
        # (docs/floor.md): here the floor must hold the first ones before any is pruned. On a
        # loaded machine the collector subscribed after the gateway's first events and got them
        # by asking for a replay, once they had been pruned (events 1..18 never reached it)
        wait_for(
            lambda: len(held(60)) == 60,
            what=lambda: (
                "the first 60 events in PostgreSQL: missing %s"
                % sorted(set(range(1, 61)) - set(held(60)))[:20]
            ),
        )
        # never beyond the cursor it is given (what the broker acknowledged and was saved)
        assert Pruner(keep_s=0, keep=50).prune_table(t, 60) > 0
        assert 0 < store.pruned("T001", key)["upto"] <= 60
        f.gateway.pruner = Pruner(keep_s=0, keep=50, every=0)  # pruned as the cursor moves
        wait_for(
            lambda: f.gateway.pruner.pruned > 0 or f.gateway.pruner.last_error,
            what=lambda: "pruned: cursor %d" % t.cursor,
        )
        f.driver.stop()
        wait_for(
            lambda: t.cursor == store.last_eseq("T001") and not t.inflight,
            what=lambda: "all published: cursor %d" % t.cursor,
        )
        assert f.gateway.pruner.last_error is None
        rec = store.pruned("T001", key)
        first = store.events("T001")[0]["eseq"]
        assert rec["upto"] == first - 1 and rec["upto"] <= t.cursor - 50
        # cut at a round's end, and the floor held everything pruned (the broker has it all:
        # the collector stores it in its own time, on a loaded machine after the cursor moved)
        wait_for(
            lambda: len(held(rec["upto"])) == rec["upto"],
            what=lambda: (
                "the pruned events 1..%d in PostgreSQL: missing %s; collectors %s, errors %s"
                % (
                    rec["upto"],
                    sorted(set(range(1, rec["upto"] + 1)) - set(held(rec["upto"])))[:20],
                    [c.counts for c in f.collectors],
                    [c.errors.recent(5) for c in f.collectors],
                )
            ),
        )
        assert conn.execute("SELECT kind FROM events WHERE eseq = %s", (rec["upto"],)).fetchone()[
            0
        ] in ("round_result", "round_void")
        assert (
            conn.execute(
                "SELECT count(DISTINCT eseq) FROM events WHERE eseq <= %s", (rec["upto"],)
            ).fetchone()[0]
            == rec["upto"]
        )
        rep = store.verify("T001", key)
        assert (
            rep["pruned"] == rec["upto"] and rep["events"] == store.last_eseq("T001") - rec["upto"]
        )
        assert not (rep["gaps"] or rep["broken"] or rep["bad_mac"] or rep["reveal"])
        # a prune record moved by hand does not verify: the removed events show as gaps
        with store._lock:
            store._db.execute("UPDATE pruned SET upto = upto - 1")
            store._db.commit()
        assert store.verify("T001", key)["gaps"]
        # and pruning goes on no further: no good record written over it (to hide the gap)
        before, pruned = store.last_eseq("T001"), f.gateway.pruner.pruned
        more = FloorDriver(f.shoes, rate=60).start()
        try:
            wait_for(lambda: t.cursor >= before + 100, what=lambda: "cursor %d" % t.cursor)
        finally:
            more.stop()
        assert f.gateway.pruner.pruned == pruned and store.verify("T001", key)["gaps"]
        # the host state (what the link checks at each open) still holds
        f.links[0].close()  # (it holds the store's lock)
        hs = hoststate.HostState(store)
        hs.open()
        try:
            assert hs.inspect("T001", key)["problems"] == []
        finally:
            hs.close()


def test_alerts_to_syslog():
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(10)
    fw = Forwarder(syslog="127.0.0.1:%d" % rx.getsockname()[1])
    try:
        fw.send([{"shoe": "T001", "eseq": 7, "kind": "bad_mac", "detail": "forged"}])
        line = rx.recv(2048).decode()
        # <PRI>: local0 (16) * 8 + warning (4) = 132
        assert line.startswith("<132>shoe-floor: alert bad_mac shoe=T001 eseq=7 forged")
        with pytest.raises(ShoeError):
            Forwarder(syslog="nohost")
    finally:
        fw.close()
        rx.close()


def test_healthz_says_what_is_wrong():
    """503 with the reason: a link down or the broker gone (gateway), a stalled loop
    (collector)."""
    up = types.SimpleNamespace(up=lambda: True)
    down = types.SimpleNamespace(up=lambda: False)
    client = types.SimpleNamespace(is_connected=lambda: True)
    gw = types.SimpleNamespace(
        name="gw",
        client=client,
        fatal=None,
        errors=ErrorLog("gw"),
        tables={"T001": types.SimpleNamespace(link=up), "T002": types.SimpleNamespace(link=down)},
    )
    srv = metrics.serve("127.0.0.1:0", lambda: [], lambda: metrics.gateway_health(gw))
    try:
        code, body = _get(srv.url + "/healthz")
        assert code == 503 and json.loads(body)["problems"] == ["link to T002 is down"]
        gw.tables.pop("T002")
        assert _get(srv.url + "/healthz")[0] == 200
        assert _get(srv.url + "/nothing")[0] == 404
    finally:
        srv.stop()
    c = Collector("mqtt://127.0.0.1:1", "postgresql://x", None, "c-health")
    c.client, c.conn = client, types.SimpleNamespace(closed=False)
    assert metrics.collector_health(c)[0] is True
    c.ops.loop_at -= 10
    ok, details = metrics.collector_health(c)
    assert not ok and "has not run" in details["problems"][0]
