"""The floor daemons' errors (issue 22): a gateway whose audit store fails stops with the reason
(unhealthy, `failed` set, `shoectl gateway` exits 1) instead of running on with nothing to
publish; every error is logged and the recent ones kept for /healthz and /metrics; SQL
identifiers are quoted, never formatted in."""

import logging
import sqlite3
import threading
import types

import psycopg
import pytest

from host_tools.audit import AuditStore
from host_tools.commands import gateway as gateway_cmd
from host_tools.errors import ShoeError
from host_tools.floor import keyring, metrics, pg
from host_tools.floor.errlog import ErrorLog
from host_tools.floor.gateway import Gateway
from host_tools.floor.runner import wait_for_signal
from host_tools.link import ShoeLink
from host_tools.sim.floor.simshoe import SimShoe, make_keys
from tests.host_tools.floor.conftest import wait_for


class _FillingStore(AuditStore):
    """An audit store whose disk fills up when told (every later write fails, as SQLite's)."""

    full = False

    def store(self, *a, **k):
        if self.full:
            raise sqlite3.OperationalError("database or disk is full")
        return super().store(*a, **k)


def test_gateway_stops_with_the_reason_when_its_store_fails(tmp_path, broker, caplog):
    keys = make_keys()
    keyring.write(tmp_path / "keys", "T001", keys)
    shoe = SimShoe("T001", keys, seed=1)
    store = _FillingStore(tmp_path / "T001.sqlite")
    link = ShoeLink(
        "sim://T001",
        keys["shoe"],
        audit=store,
        open_port=lambda u: shoe.open_port(u, 0.2),
        read_timeout=0.2,
    )
    link.start()
    gw = Gateway(broker.url, "gw-fail", cursor_path=tmp_path / "gw.json").start()
    gw.add("T001", link, store)
    caplog.set_level(logging.WARNING, logger="shoe.floor.gateway")
    try:
        for _ in range(5):
            shoe.step()
        wait_for(lambda: gw.published >= 5, what=lambda: "published: %d" % gw.published)
        assert not gw.failed.is_set() and metrics.gateway_health(gw)[0]
        store.full = True
        shoe.step()
        wait_for(gw.failed.is_set, what="the gateway to see its link stopped")
        assert "database or disk is full" in gw.fatal and "T001" in gw.fatal
        ok, details = metrics.gateway_health(gw)
        assert not ok and details["problems"][0] == gw.fatal
        assert details["errors"]["recent"][-1]["where"] == "link"
        assert 'shoe_gateway_link_failed{shoe="T001"} 1' in metrics.render(
            metrics.gateway_samples(gw)
        )
        assert [
            r
            for r in caplog.records
            if r.levelno == logging.ERROR and "database or disk is full" in r.getMessage()
        ]
    finally:
        gw.stop()
        link.close()
        store.close()


def test_shoectl_gateway_exits_with_the_reason():
    """Without a broker: the drain sees the link stopped, the wait ends, the reason is raised
    (the CLI prints it and exits 1)."""

    class Stopped:
        fatal = "the audit store failed: database or disk is full"

        def next_event(self, timeout):
            raise ShoeError(self.fatal)

    stop, failed = threading.Event(), threading.Event()
    t = threading.Thread(target=gateway_cmd._drain, args=(Stopped(), stop, failed), daemon=True)
    t.start()
    t.join(10)
    assert failed.is_set() and not t.is_alive()
    wait_for_signal(lambda: None, every=30.0, until=failed)  # returns: failed is set
    err = gateway_cmd._failed(Stopped.fatal)
    assert isinstance(err, ShoeError) and "disk is full" in str(err)


def test_errors_are_logged_counted_and_kept(caplog):
    caplog.set_level(logging.WARNING, logger="shoe.floor.collector")
    e = ErrorLog("collector", keep=3)
    for i in range(5):
        e.note("commit" if i % 2 else "leases", ValueError("boom %d" % i))
    assert e.total == 5 and e.counts == {"leases": 3, "commit": 2}
    assert [r["error"] for r in e.recent()] == ["ValueError: boom %d" % i for i in (2, 3, 4)]
    assert e.last == "leases: ValueError: boom 4"
    assert [r.getMessage() for r in caplog.records][-1] == "leases: ValueError: boom 4"
    fam = metrics.error_family("collector", e)
    assert fam[0] == "shoe_collector_errors_total" and ({"where": "commit"}, 2) in fam[3]


def test_collector_health_shows_its_recent_errors():
    from host_tools.floor.collector import Collector

    c = Collector("mqtt://127.0.0.1:1", "postgresql://x", None, "c-err")
    c.client = types.SimpleNamespace(is_connected=lambda: True)
    c.conn = types.SimpleNamespace(closed=False)
    c.errors.note("commit", psycopg.OperationalError("the server closed the connection"))
    c.errors.note("leases", psycopg.OperationalError("no connection"))
    ok, details = metrics.collector_health(c)
    assert [r["where"] for r in details["errors"]["recent"]] == ["commit", "leases"]
    assert details["errors"]["total"] == 2 and c.last_error.startswith("leases:")


def test_set_role_quotes_the_name(db_url):
    pg.migrate(db_url)
    conn = pg.connect(db_url)
    pg.set_role(conn, "floor_reader")
    assert conn.execute("SELECT current_user").fetchone()[0] == "floor_reader"
    conn.execute("RESET ROLE")
    # a name that would be SQL if formatted in is only ever a (missing) role's name
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        pg.set_role(conn, "floor_reader; CREATE TABLE pwned (x int)")
    conn.close()
    conn = pg.connect(db_url)
    assert conn.execute("SELECT to_regclass('pwned')").fetchone()[0] is None
    conn.close()


def test_a_failed_commit_is_logged_kept_and_costs_nothing(
    tmp_path, broker, db_url, caplog, monkeypatch
):
    """PostgreSQL refuses a batch: the collector says so (log, /healthz, /metrics), goes on,
    and every event is stored once all the same (the batch was not acknowledged)."""
    from host_tools.floor import collector_sql
    from host_tools.sim.floor.harness import Floor
    from tests.host_tools.floor.conftest import wait_all_stored

    real, failed = collector_sql.commit, []

    def commit(c, w, name):
        if w.events and not failed:
            failed.append(len(w.events))
            raise psycopg.OperationalError("the server closed the connection unexpectedly")
        return real(c, w, name)

    monkeypatch.setattr(collector_sql, "commit", commit)
    caplog.set_level(logging.WARNING, logger="shoe.floor.collector")
    with Floor(
        tmp_path, tables=1, collectors=1, rate=30, broker_url=broker.url, db_url=db_url, view=False
    ) as f:
        conn = pg.connect(db_url)
        f.driver.start()
        c = f.collectors[0]
        wait_for(lambda: failed and c.counts["stored"] >= 20, what=lambda: c.counts)
        f.driver.stop()
        wait_all_stored(f, conn)
        assert (
            conn.execute("SELECT count(*) - count(DISTINCT eseq) FROM events").fetchone()[0] == 0
        )
        assert c.errors.counts == {"commit": 1}
        assert "server closed the connection" in c.errors.recent()[0]["error"]
        assert 'shoe_collector_errors_total{where="commit"} 1' in metrics.render(
            metrics.collector_samples(c)
        )
        assert metrics.collector_health(c)[1]["errors"]["total"] == 1
        assert any("commit: OperationalError" in r.getMessage() for r in caplog.records)
        conn.close()


def test_shoectl_gateway_exits_1_when_its_disk_fills(tmp_path):
    """`shoectl gateway` on a virtual board; its files may not grow any more (RLIMIT_FSIZE set
    on the running process: Python ignores SIGXFSZ, so a write past it fails as on a full
    disk); a table system plays rounds through its API: the gateway exits 1 naming the failed
    store instead of running on with nothing stored."""
    import os
    import resource
    import subprocess
    import sys

    from host_tools.sim.provision_sim import ensure_demo_keys
    from host_tools.sim.simboard import SimBoard
    from tests.host_tools.floor.test_tableapi import script

    ensure_demo_keys(tmp_path / "flash")
    board = SimBoard(str(tmp_path / "flash"), power_returns=False).start()
    key = tmp_path / "operator.key"
    key.write_text("a key the operator chose, long enough\n")
    key.chmod(0o600)
    db = tmp_path / "gw.sqlite"
    run = [sys.executable, "-m", "host_tools"]
    proc = subprocess.Popen(
        run
        + [
            "gateway",
            "--port",
            "socket://127.0.0.1:%d" % board.host_port,
            "--demo-keys",
            "--db",
            str(db),
            "--api-socket",
            "none",
            "--api-tcp",
            "0",
            "--api-key",
            str(key),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ses = None
    try:
        line = proc.stdout.readline()
        assert "table system API on gateway+tcp://" in line, proc.stderr.read()
        url = line.split(" on ")[1].split()[0] + "?key=%s" % key
        assert "no broker" in proc.stdout.readline()
        size = os.path.getsize(db)
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (size, size))  # the disk is full
        ses = subprocess.Popen(
            run
            + [
                "session",
                "--port",
                url,
                "--demo-keys",
                "--reader",
                "socket://127.0.0.1:%d" % board.reader_port,
                "--script",
                str(script(tmp_path / "rounds.json", 3)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, (out, err)
        assert "shoectl: gateway stopped:" in err and "shoe.floor.gateway ERROR" in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        if ses is not None:
            ses.kill()
            ses.wait()
        board.stop()
