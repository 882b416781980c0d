"""Logins and roles on the floor view: every route refused without a session (the stream and
the drill-down JSON included), wrong passwords refused and throttled, sessions that expire (idle
and absolute, on the view's clock), CSRF on every POST, the role allowlist, logout, the users
file and `shoectl floor-user`, HTTPS with --cert/--key, and the identity-provider header."""

import datetime
import json
import os
import subprocess
import sys
import time

import pytest

from host_tools.errors import ShoeError
from host_tools.floor import pg
from host_tools.floor.auth import ROLES, Users
from host_tools.floor.view import ROUTES, FloorView
from tests.host_tools.floor.web import Web

PW = {r: "password-of-" + r for r in ROLES}


_HASHED = {}


def _users(tmp_path):
    """A users file with one user per role. argon2id hashes with light parameters: the view
    verifies with the parameters in each hash, and the defaults take ~0.25 s a login here (the
    floor-user test below uses the defaults)."""
    if not _HASHED:
        from argon2 import PasswordHasher

        light = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
        _HASHED.update({"u-" + r: {"role": r, "hash": light.hash(PW[r])} for r in ROLES})
    u = Users(tmp_path / "users.json", {k: dict(v) for k, v in _HASHED.items()})
    u.save()
    return u


def _concrete(pattern):
    return pattern.replace("[^/]+", "T001").replace("[0-9]{1,18}", "1").replace("[0-9]{1,9}", "1")


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


@pytest.fixture
def view(tmp_path, db_url):
    pg.migrate(db_url)
    c = pg.connect(db_url)
    c.execute(
        "INSERT INTO alerts (shoe, kind, detail, collector) "
        "VALUES ('T001', 'bad_mac', 'test', 'c1')"
    )
    c.execute("INSERT INTO shoes (shoe, phase) VALUES ('T001', 'idle')")
    c.execute(
        "INSERT INTO rounds (shoe, eseq, round, outcome, summary, reeval) VALUES "
        "('T001', 9, 1, 'result', '{\"seats\": {\"1\": 10}}', 'agree')"
    )
    c.close()
    v = FloorView(db_url, users=_users(tmp_path), login_limit=3, idle=60, absolute=600)
    clock = Clock()
    v.sessions.clock = v.throttle.clock = clock
    v.start()
    yield v
    v.stop()


def test_every_route_needs_a_session_and_a_role_that_may_use_it(view):
    anon = Web(view.url)
    for method, pattern, _roles, kind in ROUTES:
        path = _concrete(pattern)
        status, headers, body = anon.get(path) if method == "GET" else anon.post(path, csrf="x")
        if kind == "page":
            assert status == 303 and headers["Location"].startswith("/login?next="), path
        else:
            assert status == 401, (method, path, status)
            assert b"tables" not in body and b"T001" not in body
    assert anon.first_event()[0] == 401  # the live stream too
    # an identity-provider header counts for nothing unless the view was told to trust it
    assert (
        anon.get("api/floor", headers={"X-Remote-User": "u-admin", "X-Remote-Groups": "admin"})[0]
        == 401
    )
    assert anon.get("nothing/here")[0] == 404
    assert anon.get("login")[0] == 200
    # a made-up cookie is no session
    anon.cookie = "forged-session-id"
    assert anon.get("api/floor")[0] == 401
    # each role: exactly its allowlisted GET routes; the rest 403
    for role in ROLES:
        w = Web(view.url).login("u-" + role, PW[role])
        assert "HttpOnly" in w.cookie_attrs and "SameSite=Strict" in w.cookie_attrs
        assert "Secure" not in w.cookie_attrs  # plain HTTP here (see the TLS test)
        me = w.me()
        assert (me["user"], me["role"]) == ("u-" + role, role)
        for method, pattern, roles, _kind in ROUTES:
            if method != "GET" or pattern == "/events":
                continue
            status = w.get(_concrete(pattern))[0]
            assert status == (200 if role in roles else 403), (role, pattern, status)
        assert w.first_event()[0] == 200
    # a pit user cannot reach the auditors' access log nor acknowledge an alert
    pit = Web(view.url).login("u-pit", PW["pit"])
    assert pit.get("api/audit")[0] == 403
    assert pit.get("audit")[0] == 403
    # nor a round's cards or the irregularity timeline (surveillance's, auditors', admins')
    for path in ("round/T001/1", "api/round/T001/1", "timeline/T001", "api/timeline/T001"):
        assert pit.get(path)[0] == 403, path
    assert pit.json("api/table/T001")["shift"]["hands"] == 1  # the shift's figures: yes
    assert pit.post("api/alerts/1/ack", csrf=pit.me()["csrf"])[0] == 403
    auditor = Web(view.url).login("u-auditor", PW["auditor"])
    log = auditor.json("api/audit")["access"]
    assert any(r["what"] == "denied" and r["user"] == "u-pit" for r in log)


def test_wrong_passwords_are_refused_and_throttled(view):
    w = Web(view.url)
    for bad in ("u-pit", "nobody"):
        status, _, body = w.post("login", {"username": bad, "password": "wrong password"})
        assert status == 401 and w.cookie is None
    assert w.post("login", {"username": "u-pit", "password": ""})[0] == 401
    # three failures for u-pit from this address: even the right password waits now
    status, headers, _ = w.post("login", {"username": "u-pit", "password": PW["pit"]})
    assert status == 429 and int(headers["Retry-After"]) > 0 and w.cookie is None
    # another user from the same address is throttled too (the address has failed 3 times)
    assert w.post("login", {"username": "u-admin", "password": PW["admin"]})[0] == 429
    view.throttle.clock.t += 301  # the window has passed
    w.login("u-pit", PW["pit"])
    assert w.get("api/floor")[0] == 200
    assert [r["what"] for r in view.access].count("login_failed") == 3


def test_sessions_expire_idle_and_absolute_and_logout_ends_them(view):
    clock = view.sessions.clock
    w = Web(view.url).login("u-surveillance", PW["surveillance"])
    clock.t += 59
    assert w.get("api/floor")[0] == 200  # within the idle time: renewed
    clock.t += 59
    assert w.get("api/floor")[0] == 200
    clock.t += 61  # idle too long
    assert w.get("api/floor")[0] == 401
    assert w.get("")[0] == 303
    w.login("u-surveillance", PW["surveillance"])
    for _ in range(11):  # active all along, yet 10 min is all
        clock.t += 55
        w.get("api/me")
    assert w.get("api/floor")[0] == 401
    # logout: CSRF token needed, and the session (and its stream) is gone after
    w.login("u-surveillance", PW["surveillance"])
    csrf = w.me()["csrf"]
    r, c = w.request("GET", "events", keep=True)
    assert r.status == 200
    sid = w.cookie
    assert w.post("logout")[0] == 403  # no token
    assert w.post("logout", csrf="not-the-token")[0] == 403
    status, _, _ = w.post("logout", csrf=csrf)
    assert status == 200 and w.cookie is None
    got = b""
    deadline = time.monotonic() + 120  # a deadline (loaded machine), not a pace
    while b"event: logout" not in got:  # the open stream ends itself
        assert time.monotonic() < deadline, "the stream went on after the logout"
        chunk = r.read1(4096)
        assert chunk, got
        got += chunk
    c.close()
    w.cookie = sid  # the old cookie is worth nothing
    assert w.get("api/floor")[0] == 401


def test_csrf_token_is_bound_to_the_session_and_origin_checked(view):
    a = Web(view.url).login("u-surveillance", PW["surveillance"])
    b = Web(view.url).login("u-admin", PW["admin"])
    token_a, token_b = a.me()["csrf"], b.me()["csrf"]
    assert token_a != token_b
    assert a.post("api/alerts/1/ack")[0] == 403  # missing
    assert a.post("api/alerts/1/ack", csrf=token_b)[0] == 403  # another session's
    assert (
        a.post("api/alerts/1/ack", csrf=token_a, headers={"Origin": "http://evil.example"})[0]
        == 403
    )
    assert a.json("api/alerts")["alerts"][0]["ack_by"] is None
    status, _, body = a.post("api/alerts/1/ack", fields={"csrf": token_a})  # form field
    assert status == 200 and json.loads(body)["by"] == "u-surveillance"
    assert b.json("api/alerts")["alerts"][0]["ack_by"] == "u-surveillance"
    assert b.post("api/alerts/999/ack", csrf=token_b)[0] == 404
    # a login form posted from another site is refused
    assert (
        Web(view.url).post(
            "login",
            {"username": "u-pit", "password": PW["pit"]},
            headers={"Origin": "http://evil.example"},
        )[0]
        == 403
    )


def _self_signed(tmp_path):
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "floor.test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    c, k = tmp_path / "cert.pem", tmp_path / "key.pem"
    c.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    k.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(c), str(k)


def test_tls_serves_https_with_a_secure_cookie(tmp_path, db_url):
    import ssl

    pg.migrate(db_url)
    cert, key = _self_signed(tmp_path)
    with pytest.raises(ShoeError):
        FloorView(db_url, users=_users(tmp_path), cert=cert)  # a key is needed too
    v = FloorView(db_url, users=Users.load(tmp_path / "users.json"), cert=cert, key=key).start()
    try:
        assert v.url.startswith("https://")
        w = Web(v.url, cafile=cert).login("u-pit", PW["pit"])
        assert "Secure" in w.cookie_attrs
        status, headers, _ = w.get("api/floor")
        assert status == 200 and "Strict-Transport-Security" in headers
        assert w.first_event()[0] == 200
        plain = Web(v.url.replace("https", "http"))
        with pytest.raises(ConnectionError):  # no plain HTTP
            plain.get("api/floor")
        with pytest.raises(ssl.SSLCertVerificationError):  # not our CA
            Web(v.url).get("login")
    finally:
        v.stop()


def test_identity_provider_header_only_when_configured(tmp_path, db_url):
    pg.migrate(db_url)
    with pytest.raises(ShoeError):
        FloorView(db_url)  # no users and no header: no view
    v = FloorView(
        db_url,
        trust_header="X-Remote-User",
        role_map={"floor-pit": "pit", "floor-audit": "auditor"},
    ).start()
    try:
        w = Web(v.url)
        assert w.get("api/floor")[0] == 401
        h = {"X-Remote-User": "kim", "X-Remote-Groups": "staff, floor-audit"}
        status, _, body = w.get("api/me", headers=h)
        assert status == 200 and json.loads(body)["role"] == "auditor"
        assert w.get("api/audit", headers=h)[0] == 200
        pit = {"X-Remote-User": "lee", "X-Remote-Groups": "floor-pit"}
        assert w.get("api/audit", headers=pit)[0] == 403  # the same cookie, another user
        assert (
            w.get("api/floor", headers={"X-Remote-User": "x", "X-Remote-Groups": "staff"})[0]
            == 401
        )  # no mapped group: no role
        two = {"X-Remote-User": "y", "X-Remote-Groups": "floor-pit,floor-audit"}
        assert w.get("api/floor", headers=two)[0] == 401  # two roles: refused, not guessed
        assert w.post("login", {"username": "u-pit", "password": "x" * 12})[0] == 403
    finally:
        v.stop()


def test_users_file_and_the_floor_user_command(tmp_path, monkeypatch, capsys):
    import io

    from host_tools import cli as shoectl

    f = tmp_path / "users.json"

    class Result:
        def __init__(self, rc, out):
            self.returncode, self.stdout = rc, out

    def cli(*a, stdin=""):
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))  # not a terminal: one line
        capsys.readouterr()
        try:
            rc = shoectl.main(["floor-user", *a, "--users", str(f)])
        except SystemExit as e:  # argparse: a bad --role
            rc = e.code
        return Result(rc, capsys.readouterr().out)

    assert cli("add", "ana", "--role", "pit", stdin="a long password\n").returncode == 0
    assert f.stat().st_mode & 0o777 == 0o600
    text = f.read_text()
    assert "a long password" not in text and "$argon2id$" in text
    assert cli("add", "ana", "--role", "pit", stdin="another password\n").returncode == 1
    r = cli("add", "bo", "--role", "croupier", stdin="a long password\n")
    assert r.returncode != 0
    assert cli("add", "cy", "--role", "pit", stdin="short\n").returncode == 1
    assert cli("role", "ana", "--role", "auditor").returncode == 0
    u = Users.load(f)
    assert u.verify("ana", "a long password") == "auditor"
    assert u.verify("ana", "a wrong password") is None
    assert cli("list").stdout.split() == ["ana", "auditor"]
    assert cli("remove", "ana").returncode == 0
    assert Users.load(f).verify("ana", "a long password") is None
    os.chmod(f, 0o644)
    with pytest.raises(ShoeError, match="readable by others"):
        Users.load(f)


def test_a_changed_users_file_ends_the_sessions_it_takes_away(tmp_path, view):
    w = Web(view.url).login("u-admin", PW["admin"])
    other = Users.load(tmp_path / "users.json")
    other.remove("u-admin")
    other.save()
    os.utime(other.path, ns=(0, 10**18))  # a clearly different mtime
    view._users_at = 0  # do not wait the second out
    assert w.get("api/floor")[0] == 401
    assert Web(view.url).post("login", {"username": "u-admin", "password": PW["admin"]})[0] == 401


def test_the_demo_prints_a_one_time_login_that_works(tmp_path, db_url):
    """`shoectl floor --demo N` (make floor) for someone new: the printed demo login opens it."""
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "host_tools",
            "floor",
            "--demo",
            "2",
            "--db",
            db_url,
            "--http",
            "127.0.0.1:0",
            "--dir",
            str(tmp_path / "demo"),
            "--rate",
            "5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = [p.stdout.readline() for _ in range(3)]
        login = [x for x in lines if x.startswith("floor demo login (DEMO ONLY")]
        url = [x.split()[-1] for x in lines if x.startswith("floor view: ")]
        assert login and url, lines
        import re

        user, password = re.search(r": user (\S+) password (\S+)$", login[0].strip()).groups()
        assert Web(url[0]).get("api/floor")[0] == 401
        w = Web(url[0]).login(user, password)
        assert w.me()["role"] == "admin"
        from tests.host_tools.floor.conftest import wait_for

        wait_for(lambda: len(w.json("api/floor")["tables"]) == 2, what="the demo's tables")
        assert Web(url[0]).post("login", {"username": user, "password": "demo"})[0] == 401
    finally:
        p.terminate()
        p.wait(30)
    assert p.returncode == 0, p.stderr.read()[-2000:]
