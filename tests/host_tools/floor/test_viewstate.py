"""The floor view's sessions and acknowledgements in PostgreSQL (migrations/005_view_state.sql):
a login survives a restart of the view and works on a second view process until it expires, an
acknowledgement survives too, a forged or altered token is refused, only the token's SHA-256 is
stored, and acknowledgements are insert-only."""

import hashlib
import time

import psycopg
import psycopg.sql
import pytest

from host_tools.floor import pg
from host_tools.floor.view import FloorView
from tests.host_tools.floor.test_login import PW, Clock, _users
from tests.host_tools.floor.web import Web


@pytest.fixture
def floor(tmp_path, db_url):
    pg.migrate(db_url)
    c = pg.connect(db_url)
    c.execute(
        "INSERT INTO alerts (shoe, kind, detail, collector) "
        "VALUES ('T001', 'bad_mac', 'test', 'c1')"
    )
    c.execute("INSERT INTO shoes (shoe, phase) VALUES ('T001', 'idle')")
    users = _users(tmp_path)
    clock = Clock()
    views = []

    def start():
        v = FloorView(db_url, users=users, idle=60, absolute=600)
        v.sessions.clock = v.throttle.clock = clock
        views.append(v.start())
        return v

    yield start, clock, c
    for v in views:
        v.stop()
    c.close()


def test_a_session_and_an_ack_survive_a_restart_and_are_shared(floor):
    start, clock, c = floor
    a, b = start(), start()  # two view processes on one database
    w = Web(a.url).login("u-surveillance", PW["surveillance"])
    csrf = w.me()["csrf"]
    token = w.cookie
    # only the token's SHA-256 is stored, nowhere the token itself
    rows = c.execute("SELECT token_hash, user_name, role FROM view_sessions").fetchall()
    assert rows == [(hashlib.sha256(token.encode()).digest(), "u-surveillance", "surveillance")]
    assert token.encode() not in repr(rows).encode()
    # the other view knows the session, with the same CSRF token, and records the ack
    other = Web(b.url)
    other.cookie = token
    assert other.me()["csrf"] == csrf
    status, _, body = other.post("api/alerts/1/ack", csrf=csrf)
    assert status == 200 and b"u-surveillance" in body, body
    # restart the first view: the session and the acknowledgement are still there
    a.stop()
    a2 = start()
    w2 = Web(a2.url)
    w2.cookie = token
    alerts = w2.json("api/alerts")["alerts"]
    assert [(x["id"], x["ack_by"]) for x in alerts] == [(1, "u-surveillance")]
    assert any(i["what"] == "alert_acknowledged" for i in w2.json("api/timeline/T001")["items"])
    # a second acknowledgement is kept (insert-only) and the first one stays the one shown
    admin = Web(a2.url).login("u-admin", PW["admin"])
    assert admin.post("api/alerts/1/ack", csrf=admin.me()["csrf"])[0] == 200
    assert admin.json("api/alerts")["alerts"][0]["ack_by"] == "u-surveillance"
    assert c.execute("SELECT user_name FROM alert_acks ORDER BY id").fetchall() == [
        ("u-surveillance",),
        ("u-admin",),
    ]
    # a forged token, an altered one, and the stored hash used as a token: refused
    for forged in (
        "x" * 43,
        token[:-1] + ("A" if token[-1] != "A" else "B"),
        hashlib.sha256(token.encode()).hexdigest(),
    ):
        f = Web(a2.url)
        f.cookie = forged
        assert f.get("api/floor")[0] == 401, forged
        assert f.post("api/alerts/1/ack", csrf=csrf)[0] == 401
    # the session still ends at its idle time, in every process, and is deleted
    clock.t += 61
    assert w2.get("api/floor")[0] == 401
    assert other.get("api/floor")[0] == 401
    assert (
        c.execute("SELECT count(*) FROM view_sessions WHERE role = 'surveillance'").fetchone()[0]
        == 0
    )
    # logout in one process ends the session in the other
    admin = Web(a2.url).login("u-admin", PW["admin"])
    admin2 = Web(b.url)
    admin2.cookie = admin.cookie
    assert admin2.get("api/floor")[0] == 200
    assert admin.post("logout", csrf=admin.me()["csrf"])[0] == 200
    assert admin2.get("api/floor")[0] == 401


def test_acknowledgements_are_insert_only_and_floor_view_writes_nothing_else(floor):
    start, clock, c = floor
    c.execute("SET ROLE floor_view")
    c.execute("INSERT INTO alert_acks (alert, user_name, role) VALUES (1, 'x', 'admin')")
    for sql in (
        "UPDATE alert_acks SET user_name = 'y'",
        "DELETE FROM alert_acks",
        "TRUNCATE alert_acks",
        "INSERT INTO alerts (shoe, kind, detail, collector) VALUES ('T1', 'k', 'd', 'c')",
        "UPDATE shoes SET phase = 'x'",
        "UPDATE view_sessions SET role = 'admin'",
        "SELECT * FROM events",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute(sql)
    c.execute("RESET ROLE")
    for sql in ("UPDATE alert_acks SET user_name = 'y'", "DELETE FROM alert_acks"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="insert-only"):
            c.execute(sql)
    assert c.execute("SELECT user_name FROM alert_acks").fetchall() == [("x",)]


def test_the_views_metrics_and_health(floor):
    import json
    import urllib.error
    import urllib.request

    from host_tools.floor import metrics
    from tests.host_tools.floor.conftest import wait_for

    start, clock, c = floor
    v = start()
    srv = metrics.serve(
        ("127.0.0.1", 0), lambda: metrics.view_samples(v), lambda: metrics.view_health(v)
    )
    try:
        w = Web(v.url)
        assert w.post("login", {"username": "u-pit", "password": "wrong"})[0] == 401
        w.login("u-admin", PW["admin"])
        assert w.get("")[0] == 200 and w.get("api/floor")[0] == 200
        assert Web(v.url).get("api/floor")[0] == 401
        w.post("api/alerts/1/ack", csrf=w.me()["csrf"])
        c.execute(
            "INSERT INTO alerts (shoe, kind, detail, collector) "
            "VALUES ('T001', 'replay', 'test', 'c1')"
        )
        text = urllib.request.urlopen(srv.url + "/metrics", timeout=10).read().decode()
        lines = dict(ln.rsplit(" ", 1) for ln in text.splitlines() if not ln.startswith("#"))
        assert lines["shoe_view_logins_failed_total"] == "1"
        assert lines['shoe_view_logins_total{outcome="failed"}'] == "1"
        assert lines['shoe_view_logins_total{outcome="ok"}'] == "1"
        assert lines['shoe_view_requests_total{code="401",kind="api"}'] == "1"
        assert lines['shoe_view_requests_total{code="200",kind="page"}'] == "1"
        assert lines['shoe_view_requests_total{code="303",kind="login"}'] == "1"
        assert lines["shoe_view_open_alerts"] == "2"
        assert lines["shoe_view_unacknowledged_alerts"] == "1"
        assert lines["shoe_view_sessions"] == "1"
        assert "# TYPE shoe_view_request_seconds histogram" in text
        n = int(lines['shoe_view_request_seconds_count{kind="api"}'])
        assert n >= 3 and lines['shoe_view_request_seconds_bucket{kind="api",le="+Inf"}'] == str(n)
        assert 0 < float(lines['shoe_view_request_seconds_sum{kind="api"}']) < n * 5.0
        buckets = [
            int(lines['shoe_view_request_seconds_bucket{kind="api",le="%r"}' % le])
            for le in (0.005, 0.1, 5.0)
        ]
        assert buckets == sorted(buckets) and buckets[-1] <= n
        # healthy while the listener runs and PostgreSQL answers; not once the view stops

        def healthy():
            try:
                return json.loads(urllib.request.urlopen(srv.url + "/healthz", timeout=60).read())[
                    "ok"
                ]
            except urllib.error.HTTPError as e:  # 503: a loaded machine's listener late, so far
                assert e.code == 503, e
                return False

        wait_for(healthy, what="a healthy view")
        v.stop()
        wait_for(lambda: time.time() - v.ops.listen_at > 0.5, what="the listener stopped")
        v.ops.listen_at -= 10  # its last turn 10 s ago (rather than wait 5 s here)
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(srv.url + "/healthz", timeout=10)
        assert e.value.code == 503 and b"change listener" in e.value.read()
    finally:
        srv.stop()


def test_a_database_outage_is_answered_503_and_the_view_recovers(floor, pg_server):
    """PostgreSQL unavailable (connections refused, every session cut): each request is answered
    503 with the reason and counted; the view keeps serving, and once the database is back the
    same login works again (its session is in PostgreSQL). Without the handler a request's
    connection is dropped with no answer."""
    start, clock, c = floor
    v = start()
    w = Web(v.url).login("u-pit", PW["pit"])
    assert w.get("api/floor")[0] == 200
    name = c.execute("SELECT current_database()").fetchone()[0]
    db = psycopg.sql.Identifier(name)
    c = pg.connect(pg_server)  # the server's own database: this one's connections are cut
    c.execute(psycopg.sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(db))
    c.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = %s AND pid <> pg_backend_pid()",
        (name,),
    )
    try:
        for path in ("api/floor", "api/table/T001", "api/me"):
            status, _, body = w.get(path)
            assert status == 503 and b"database is unavailable" in body, (path, status, body)
        assert v.db_errors >= 3
    finally:
        c.execute(psycopg.sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(db))
        c.close()
    assert w.get("api/floor")[0] == 200
    assert w.json("api/table/T001")["table"]["shoe"] == "T001"


def test_an_unknown_shoe_counts_its_messages_once_however_many_collectors_saw_them(floor):
    """Each collector counts the messages of a shoe id the floor has no key for in its own
    quarantine row (every collector receives them); the page shows the messages, not their sum
    over the collectors."""
    start, clock, c = floor
    for collector, n in (("c1", 7), ("c2", 7), ("c3", 5)):  # c3 started later
        c.execute(
            "INSERT INTO quarantine (shoe, collector, messages, last_topic) VALUES "
            "('Z999', %s, %s, 'floor/shoe/Z999/events')",
            (collector, n),
        )
    w = Web(start().url).login("u-surveillance", PW["surveillance"])
    q = w.json("api/alerts")["quarantine"]
    assert [(r["shoe"], r["messages"]) for r in q] == [("Z999", 7)]
