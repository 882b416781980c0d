"""The floor end to end on real engines: simulated shoes -> ShoeLink -> audit stores -> gateway ->
the embedded broker (aedes) -> collectors -> PostgreSQL -> floor view; collectors die, the broker
restarts, nothing is lost or stored twice."""

from host_tools.floor import pg
from host_tools.floor.gateway import Gateway
from host_tools.sim.floor.harness import Floor
from tests.host_tools.floor.conftest import wait_all_stored, wait_for
from tests.host_tools.floor.web import Web


def _no_dups(conn):
    return conn.execute("SELECT count(*) - count(DISTINCT (shoe, eseq)) FROM events").fetchone()[0]


def test_floor_survives_collector_death_broker_restart_and_gateway_restart(
    tmp_path, broker, db_url
):
    with Floor(
        tmp_path,
        tables=6,
        collectors=2,
        rate=15,
        broker_url=broker.url,
        db_url=db_url,
        gap_timeout=30,
    ) as f:
        conn = pg.connect(db_url)
        f.driver.start()
        wait_for(lambda: sum(f.emitted().values()) > 150, what="events")
        # both collectors hold shoes (leases shared), and nothing was stored twice so far
        wait_for(lambda: all(len(c.owned) >= 2 for c in f.collectors), what="shared leases")
        assert sorted(s for c in f.collectors for s in c.owned) == sorted(f.keys)

        # a collector dies: the other takes its shoes and catches up
        dead = f.collectors[0]
        dead.kill()
        wait_for(lambda: len(f.collectors[1].owned) == 6, what="take-over")
        n = sum(f.emitted().values())
        wait_for(lambda: sum(f.emitted().values()) > n + 100, what="more events")

        # the broker restarts (sessions in memory: it keeps nothing): gateways and collector
        # reconnect, catch up
        broker.restart()
        n = sum(f.emitted().values())
        wait_for(lambda: sum(f.emitted().values()) > n + 100, what="events after restart")

        # the gateway restarts: it resumes from its saved cursor. Every table has had an event
        # acknowledged by the broker first: a condition to wait on, not a count of emitted
        # events (in a loaded run one table had no PUBACK yet, and its saved cursor was rightly 0)
        wait_for(
            lambda: min(t.cursor for t in f.gateway.tables.values()) > 0,
            what="a broker-acknowledged event of every table",
        )
        f.gateway.stop()
        saved = {s: t.cursor for s, t in f.gateway.tables.items()}
        n = sum(f.emitted().values())
        wait_for(lambda: sum(f.emitted().values()) > n + 60, what="events while gateway away")
        gw = Gateway(broker.url, "gw-floor", cursor_path=tmp_path / "gw.json")
        for sid, link, store in zip(sorted(f.keys), f.links, f.stores):
            gw.add(sid, link, store)
        assert {s: t.cursor for s, t in gw.tables.items()} == saved  # resumed, not from 0
        f.gateway = gw.start()

        f.driver.stop()
        wait_all_stored(f, conn)
        assert _no_dups(conn) == 0
        # every chain link checked and intact; every result re-evaluated and agreeing
        assert conn.execute("SELECT count(*) FROM events WHERE chain <> 'ok'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM alerts").fetchone()[0] == 0
        rounds = conn.execute("SELECT reeval, count(*) FROM rounds GROUP BY reeval").fetchall()
        assert dict(rounds).get("agree", 0) >= 6 and "disagree" not in dict(rounds)
        # the view serves every table with its live state
        web = Web(f.view.url).login(*f.login)
        tables = web.json("api/floor")["tables"]
        assert {t["shoe"]: t["head_eseq"] for t in tables} == f.emitted()
        assert all(t["gateway"]["link"]["up"] for t in tables)
        one = web.json("api/table/T001")
        assert one["rounds"] and one["rounds"][0]["reeval"] == "agree"


def test_migrations_are_versioned_and_roles_separate_writers_from_readers(db_url):
    import psycopg
    import pytest

    first = pg.migrate(db_url)
    assert first == [v for v, _, _ in pg.migration_files()]
    assert pg.migrate(db_url) == []  # applied once
    c = pg.connect(db_url)
    c.execute("SET ROLE floor_reader")
    assert c.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.execute("INSERT INTO alerts (shoe, kind, detail, collector) VALUES ('x','y','z','w')")
    c.execute("RESET ROLE")
    c.execute("SET ROLE floor_collector")
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        c.execute("DELETE FROM events")  # the collector appends, never deletes
