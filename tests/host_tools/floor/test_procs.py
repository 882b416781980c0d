"""The multi-process floor (host_tools/sim/floor/procfloor.py, bench/bench_floor_procs.py) at a
tiny size: every event each shoe sealed is stored once, and every process it started has exited."""

import os
import tempfile

from host_tools.floor import pg
from host_tools.sim.floor.procfloor import ProcFloor
from tests.host_tools.floor.conftest import wait_for


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not reaped) is not running
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_tables_spread_over_processes_lose_nothing_and_leave_no_process(db_url):
    with ProcFloor(
        tempfile.mkdtemp(prefix="test-procs-"),
        tables=4,
        per_process=2,
        collectors=2,
        rate=8,
        broker="amqtt",
        db_url=db_url,
    ) as f:
        assert len(f.groups) == 2
        conn = pg.connect(f.db_url)
        f.go()
        wait_for(lambda: sum(f.emitted().values()) >= 40, what="40 events sealed")
        f.stop_driving()
        sealed = f.emitted()
        rows = {}

        def stored():
            rows.update(
                {
                    r[0]: r[1:]
                    for r in conn.execute(
                        "SELECT shoe, count(*), count(DISTINCT eseq), min(eseq), max(eseq) "
                        "FROM events GROUP BY shoe"
                    ).fetchall()
                }
            )
            return all(rows.get(s, (0, 0, 0, 0))[1] >= e for s, e in sealed.items())

        wait_for(stored, what=lambda: "every sealed event stored: %s vs %s" % (sealed, rows))
        for s, e in sealed.items():  # exactly eseq 1..e, each once: 0 lost, 0 duplicated
            assert rows[s] == (e, e, 1, e), (s, rows[s], e)
        conn.close()
        pids = list(f.pids)
        assert len(pids) >= 2 + 2 + 1 + 1  # groups, collectors, broker, view
    assert {(s, e) for s, e, t in f.sent()} == {
        (s, e) for s, n in sealed.items() for e in range(1, n + 1)
    }
    assert [p for p in pids if _alive(p)] == []


def test_held_gateways_publish_their_backlog_at_the_paced_rate(db_url):
    """bench_floor_procs.py --paced: the stores fill while the gateways are held, then each
    gateway publishes at most publish_rate events/s per table, and still loses nothing."""
    from host_tools.floor.gateway import Pace

    rate = 4.0
    with ProcFloor(
        tempfile.mkdtemp(prefix="test-paced-"),
        tables=4,
        per_process=2,
        collectors=1,
        rate=8,
        broker="aedes",
        db_url=db_url,
        view=False,
        publish_rate=rate,
        hold=True,
    ) as f:
        conn = pg.connect(f.db_url)
        f.go()
        wait_for(lambda: min(f.emitted().values()) >= 12, what="12 events sealed by each shoe")
        f.stop_driving()
        sealed = f.emitted()
        assert f.handed() == {}  # held: nothing handed to MQTT
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0
        f.publish()
        count = "SELECT shoe, count(*), count(DISTINCT eseq) FROM events GROUP BY shoe"
        wait_for(
            lambda: {r[0]: r[1] for r in conn.execute(count).fetchall()} == sealed,
            what="every sealed event stored",
        )
        assert all(n == d for _, n, d in conn.execute(count).fetchall())  # none twice
        conn.close()
    pub = f.published()
    assert sorted((s, e) for s, e, _ in pub) == sorted(
        (s, e) for s, n in sealed.items() for e in range(1, n + 1)
    )
    burst = Pace(rate).burst
    for shoe, n in sealed.items():
        times = sorted(t for s, _, t in pub if s == shoe)
        # no faster than the cap (slower is allowed: a loaded machine), the first burst aside
        assert times[-1] - times[0] >= (n - burst - 1) / rate * 0.95, (shoe, n, times)


def _roundtrip(pub_url, sub_url, topic, payload):
    """Publish QoS 1 on pub_url; -> what a subscriber on sub_url received (within 30 s)."""
    from host_tools.floor import mqtt

    got = []
    sub = mqtt.client(
        sub_url,
        "t-sub-%d" % os.getpid(),
        clean=True,
        on_connect=lambda c, *a: c.subscribe(topic, 1),
        on_message=lambda c, u, m: got.append(bytes(m.payload)),
    )
    pub = mqtt.client(pub_url, "t-pub-%d" % os.getpid(), clean=True)
    try:
        wait_for(lambda: sub.is_connected() and pub.is_connected(), what="both connected")

        def sent_and_got():
            if not got:
                pub.publish(topic, payload, qos=1)
            return got

        wait_for(
            sent_and_got, what="%s carried from %s to %s" % (topic, pub_url, sub_url), interval=0.5
        )
    finally:
        for c in (sub, pub):
            c.disconnect()
            c.loop_stop()
    return got[0]


def test_aedes_runner_carries_messages_restarts_and_stops():
    import pytest

    from host_tools.sim.floor import aedes

    if not aedes.available():
        pytest.skip(
            "aedes is not installed (make venv runs npm ci in host_tools/sim/floor/broker_js)"
        )
    b = aedes.AedesBroker()
    b.start()
    try:
        assert _roundtrip(b.url, b.url, "floor/shoe/T1/events", b"one") == b"one"
        first = b.proc.pid
        b.restart()  # the same port, a new process
        assert b.proc.pid != first and not _alive(first)
        assert _roundtrip(b.url, b.url, "floor/shoe/T1/events", b"two") == b"two"
        pid = b.proc.pid
    finally:
        b.stop()
    assert not _alive(pid)


def test_bridged_edges_carry_events_to_the_core_and_replays_back():
    import pytest

    from host_tools.sim.floor import brokers, mosquitto

    if not mosquitto.find():
        pytest.skip("mosquitto is not installed")
    with brokers.MosquittoBridge(tempfile.mkdtemp(prefix="test-bridge-"), edges=2) as br:
        pids = [p.pid for p in br.procs]
        assert len(pids) == 3
        for edge in br.edge_urls:  # gateways publish on their edge; collectors read the core
            assert _roundtrip(edge, br.url, "floor/shoe/T9/events", edge.encode()) == edge.encode()
            # a collector's replay request on the core reaches the gateways on the edge
            assert (
                _roundtrip(br.url, edge, "floor/shoe/T9/replay", b'{"from": 1}') == b'{"from": 1}'
            )
    assert [p for p in pids if _alive(p)] == []


def test_table_system_drives_rounds_through_the_gateway_api_and_a_backlog_is_not_a_loss(db_url):
    """--table-system: rounds are opened and decided through each table's gateway API, and
    what the broker never carried is found in the gateways' stores (held), not called lost."""
    with ProcFloor(
        tempfile.mkdtemp(prefix="test-procs-ts-"),
        tables=2,
        per_process=2,
        collectors=1,
        rate=40,
        broker="amqtt",
        db_url=db_url,
        view=False,
        table_system={"decide_s": 0.0, "gap_s": 0.0},
    ) as f:
        assert len(f.tablesys) == 1
        conn = pg.connect(f.db_url)
        f.go()

        def results():
            return dict(
                conn.execute(
                    "SELECT shoe, count(*) FROM events WHERE kind = 'round_result' GROUP BY shoe"
                ).fetchall()
            )

        wait_for(
            lambda: all(v >= 2 for v in results().values()) and len(results()) == 2,
            what=lambda: "2 rounds settled at each table: %s" % results(),
        )
        f.broker.stop()  # the outage: the gateways keep storing
        heads = f.emitted()
        wait_for(
            lambda: all(v >= heads[s] + 20 for s, v in f.emitted().items()),
            what="20 more events sealed at each table during the outage",
        )
        ts = f.stop_driving()
        assert ts["rounds"] >= 4, ts
        sealed = f.emitted()
        have = {}
        for s, e in conn.execute("SELECT shoe, eseq FROM events"):
            have.setdefault(s, set()).add(e)
        missing = {
            s: [e for e in range(1, n + 1) if e not in have.get(s, ())] for s, n in sealed.items()
        }
        assert all(len(m) >= 20 for m in missing.values()), missing
        held = f.held(dict(missing, T0001=missing["T0001"] + [sealed["T0001"] + 1]))
        for s, m in missing.items():  # every one not in PostgreSQL is still held
            assert sorted(held[s]["in_store"] + held[s]["in_outbox"]) == m, (s, held[s])
            assert held[s]["sealed"] == sealed[s]
        conn.close()
