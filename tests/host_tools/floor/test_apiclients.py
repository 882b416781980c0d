"""Named clients of the gateway's API (host_tools/floor/apiclients.py): each its own credential
and roles, revoked one by one while the gateway runs, a broken clients file granting nothing;
and mutual TLS on the API's TCP listener, a named client's certificate carrying its name.

A TableAPI in front of test_apiroles's stand-in link (every command that reaches it recorded);
the clients are real GatewayLinks, the clients file is written by `shoectl gateway-client`.
"""

import os
import time

import pytest

from host_tools import cli
from host_tools.errors import ShoeError
from host_tools.floor import apiclients
from host_tools.floor.tableapi import TableAPI
from host_tools.link import apiwire
from host_tools.link.viagateway import GatewayLink
from tests.host_tools.floor.test_apiroles import FakeLink, _keys
from tests.host_tools.floor.test_broker_acl import _ca


def _until(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _add(clients, name, roles, out):
    assert (
        cli.main(
            ["gateway-client", "add", name, "--roles", roles, "--clients", clients, "--out", out]
        )
        == 0
    )


@pytest.fixture
def named(tmp_path):
    clients = str(tmp_path / "gw.clients.json")
    keys = {}
    for name, roles in (("pit-3", "reader"), ("tablesys-1", "reader,table")):
        keys[name] = str(tmp_path / (name + ".key"))
        _add(clients, name, roles, keys[name])
    notes = []
    link = FakeLink()
    sock = tmp_path / "gw.sock"
    api = TableAPI(
        link,
        {c: s for c, (p, s) in _keys(tmp_path).items()},
        unix_path=sock,
        note=notes.append,
        clients=apiclients.ClientsFile(clients, notes.append),
    ).start()
    api.fake, api.notes, api.clients_path, api.client_keys = link, notes, clients, keys
    api.url = "gateway+unix://%s" % sock
    yield api
    api.stop()


def _open(api, name, role):
    return GatewayLink(api.url + "?key=" + api.client_keys[name], role=role).open(timeout=5)


def test_each_named_client_takes_only_its_own_roles(named, tmp_path):
    # the files `gateway-client add` writes: 0600, the key file one line NAME:SECRET
    for f in (named.clients_path, *named.client_keys.values()):
        assert os.stat(f).st_mode & 0o777 == 0o600, f
    name, secret = apiwire.load_credential(named.client_keys["pit-3"])
    assert name == "pit-3" and apiclients.read(named.clients_path)["pit-3"] == (
        secret,
        ("reader",),
    )
    with _open(named, "pit-3", "reader") as pit:
        assert pit.command("status") == {"ok": "status"}
        with pytest.raises(ShoeError) as e:
            pit.command("open_round", {"seats": {}})
        assert e.value.reason == "not_allowed"
    with pytest.raises(ShoeError) as e:
        _open(named, "pit-3", "table")
    assert e.value.reason == "role_not_granted" and "client pit-3 may not act as table" in str(
        e.value
    )
    with _open(named, "tablesys-1", "table") as ts:
        assert ts.command("open_round", {"seats": {}}) == {"ok": "open_round"}
    assert named.fake.sent == ["status", "open_round"]
    # the log names the client, not only its address
    assert any("pit-3" in n and "refused" in n for n in named.notes), named.notes
    # a key file naming another client (its own secret) and a name nobody added: both refused
    # as a wrong key, and nothing tells the two apart
    forged = tmp_path / "forged.key"
    forged.write_text("tablesys-1:" + secret.decode() + "\n")
    os.chmod(forged, 0o600)
    ghost = tmp_path / "ghost.key"
    ghost.write_text("ghost:" + secret.decode() + "\n")
    os.chmod(ghost, 0o600)
    for f in (forged, ghost):
        with pytest.raises(ShoeError) as e:
            GatewayLink(named.url + "?key=%s" % f, role="reader").open(timeout=5)
        assert e.value.reason == "credential", f
    assert named.fake.sent == ["status", "open_round"]


def test_a_removed_client_is_cut_off_and_the_others_go_on(named):
    pit = _open(named, "pit-3", "reader")
    ts = _open(named, "tablesys-1", "table")
    try:
        assert (
            cli.main(["gateway-client", "remove", "pit-3", "--clients", named.clients_path]) == 0
        )
        # its open connection ends (the watcher reads the changed file), its next login fails
        assert _until(lambda: not pit.ep.up or pit.fatal), "the revoked client stayed connected"
        assert "revoked" in (pit.fatal or ""), pit.fatal
        with pytest.raises(ShoeError) as e:
            _open(named, "pit-3", "reader")
        assert e.value.reason == "credential"
        assert any("pit-3" in n and "revoked" in n for n in named.notes), named.notes
        # the other named client and the built-in credentials are untouched
        assert ts.command("status") == {"ok": "status"}
        with GatewayLink(named.url, role="table").open(timeout=5) as t:
            assert t.command("status") == {"ok": "status"}
        # a new credential for a name (added again) ends the connections of the old one
        _add(named.clients_path, "tablesys-1", "reader,table", named.client_keys["tablesys-1"])
        assert _until(lambda: not ts.ep.up or ts.fatal), "the replaced credential stayed"
        with _open(named, "tablesys-1", "table") as again:
            assert again.command("status") == {"ok": "status"}
    finally:
        pit.close()
        ts.close()


def test_a_broken_clients_file_grants_no_named_client(named):
    pit = _open(named, "pit-3", "reader")
    try:
        with open(named.clients_path, "a") as f:
            f.write("{not json")
        assert _until(lambda: not pit.ep.up or pit.fatal), "a broken file left a client in"
        with pytest.raises(ShoeError) as e:
            _open(named, "pit-3", "reader")
        assert e.value.reason == "credential"
        assert any("not valid" in n for n in named.notes), named.notes
        # the built-in credentials still work; fixing the file lets the client in again
        with GatewayLink(named.url, role="reader").open(timeout=5) as r:
            assert r.command("status") == {"ok": "status"}
        _add(named.clients_path + ".new", "pit-3", "reader", named.client_keys["pit-3"])
        os.replace(named.clients_path + ".new", named.clients_path)
        with _open(named, "pit-3", "reader") as p:
            assert p.command("status") == {"ok": "status"}
        # a clients file others may read is refused the same way
        os.chmod(named.clients_path, 0o644)
        with pytest.raises(ShoeError):
            _open(named, "pit-3", "reader")
        assert any("open to others" in n for n in named.notes), named.notes
    finally:
        pit.close()


def test_names_and_roles_are_checked(tmp_path):
    clients = str(tmp_path / "c.json")
    for name, roles in (
        ("table", "reader"),
        ("bad name", "reader"),
        ("ok", "croupier"),
        ("ok", ""),
    ):
        with pytest.raises(ShoeError):
            apiclients.add(clients, name, roles.split(","), str(tmp_path / "k"))
    assert not os.path.exists(clients)
    with pytest.raises(ShoeError, match="not valid"):
        (tmp_path / "x.json").write_text('{"version": 1, "clients": {"a": {"roles": ["god"]}}}')
        os.chmod(tmp_path / "x.json", 0o600)
        apiclients.read(str(tmp_path / "x.json"))


def test_mutual_tls_wants_a_certificate_of_the_ca_carrying_the_clients_name(tmp_path):
    ca, issue = _ca(tmp_path, "gw-ca")
    client_ca, issue_client = _ca(tmp_path, "clients-ca")
    rogue_ca, issue_rogue = _ca(tmp_path, "rogue-ca")
    cert, key = issue("gateway", server=True)
    clients = str(tmp_path / "clients.json")
    pit_key = str(tmp_path / "pit-3.key")
    _add(clients, "pit-3", "reader", pit_key)
    link = FakeLink()
    api = TableAPI(
        link,
        {c: s for c, (p, s) in _keys(tmp_path).items()},
        tcp_port=0,
        tls=apiwire.server_tls(cert, key, client_ca),
        clients=apiclients.ClientsFile(clients),
    ).start()
    try:
        base = "%s?ca=%s&key=%s" % (api.urls()[0], ca, pit_key)
        # no client certificate, or one another CA signed: the TLS handshake fails
        for extra in ("", "&cert=%s&certkey=%s" % issue_rogue("pit-3")):
            with pytest.raises(ShoeError):
                GatewayLink(base + extra, role="reader").open(timeout=5)
        # the clients' CA, but the certificate of another client: refused at the login
        with pytest.raises(ShoeError) as e:
            GatewayLink(base + "&cert=%s&certkey=%s" % issue_client("bar-1"), role="reader").open(
                timeout=5
            )
        assert e.value.reason == "certificate"
        # its own certificate: in
        good = base + "&cert=%s&certkey=%s" % issue_client("pit-3")
        with GatewayLink(good, role="reader").open(timeout=5) as ok:
            assert ok.command("status") == {"ok": "status"}
        assert link.sent == ["status"]
    finally:
        api.stop()
