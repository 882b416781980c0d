"""The gateway's API: credentials bound to roles, and TLS on its TCP listener.

A TableAPI in front of a stand-in link that records every command reaching it (the shoe's side
is tested with a real board in test_tableapi.py): a client holding the reader credential is
refused when it claims the table role, and refused a table command as a reader, with a reason,
and nothing reaches the link; the table credential still works. On a TLS listener a plain client
is refused, a client trusting another CA fails the check, and one trusting the gateway's CA
works.
"""

import os
import socket
import threading

import pytest

from host_tools.errors import ShoeError
from host_tools.floor.tableapi import TableAPI
from host_tools.link import apiwire
from host_tools.link.viagateway import GatewayLink
from tests.host_tools.floor.test_broker_acl import _ca


class _Ep:
    stats = {"sessions": 1}


class FakeLink:
    """What TableAPI uses of a ShoeLink; `sent` records what would have reached the shoe."""

    shoe_id = "T001"
    audit = None

    def __init__(self):
        self.listeners = []
        self.ep = _Ep()
        self.sent = []
        self.lock = threading.Lock()

    def up(self):
        return True

    def stats(self):
        return {"up": True}

    def command(self, kind, body, timeout=5.0, supervisor=False):
        with self.lock:
            self.sent.append(kind)
        return {"ok": kind}


def _keys(tmp_path):
    out = {}
    for cred in ("table", "reader"):
        path = tmp_path / ("gw.key" if cred == "table" else "gw.reader.key")
        out[cred] = (str(path), apiwire.new_secret_file(str(path)))
    return out


@pytest.fixture
def api(tmp_path):
    keys = _keys(tmp_path)
    link = FakeLink()
    sock = tmp_path / "gw.sock"
    a = TableAPI(link, {c: s for c, (p, s) in keys.items()}, unix_path=sock).start()
    a.keys, a.fake, a.url = keys, link, "gateway+unix://%s" % sock
    yield a
    a.stop()


def test_the_reader_credential_cannot_take_the_table_role(api):
    # the reader's own key file beside the socket is what a reader client picks by default
    assert apiwire.key_path(api.url, "reader") == api.keys["reader"][0]
    assert apiwire.key_path(api.url, "table") == api.keys["table"][0]
    # claiming the table role with the reader's key: refused at the login, with the reason
    forged = GatewayLink(api.url + "?key=" + api.keys["reader"][0], role="table")
    with pytest.raises(ShoeError) as e:
        forged.open(timeout=5)
    assert e.value.reason == "role_not_granted"
    assert "the reader credential may not act as table" in str(e.value)
    # as a reader it logs in, and a table command is refused by the gateway, with a reason
    with GatewayLink(api.url, role="reader").open(timeout=5) as reader:
        with pytest.raises(ShoeError) as e:
            reader.command("open_round", {"seats": {}})
        assert e.value.reason == "not_allowed" and "the reader role may only ask" in str(e.value)
        assert reader.command("status") == {"ok": "status"}
    assert api.fake.sent == ["status"]  # nothing but the status reached the shoe
    # the table credential takes the table role
    with GatewayLink(api.url, role="table").open(timeout=5) as table:
        assert table.command("open_round", {"seats": {}}) == {"ok": "open_round"}
    assert api.fake.sent == ["status", "open_round"]
    assert api.refused == 1


def test_a_wrong_key_is_refused_and_both_credentials_must_differ(api, tmp_path):
    other = tmp_path / "other.key"
    apiwire.new_secret_file(str(other))
    with pytest.raises(ShoeError, match="wrong API key"):
        GatewayLink(api.url + "?key=%s" % other, role="reader").open(timeout=5)
    same = apiwire.load_secret(api.keys["table"][0])
    with pytest.raises(ShoeError, match="must differ"):
        TableAPI(FakeLink(), {"table": same, "reader": same}, unix_path=tmp_path / "x.sock")
    with pytest.raises(ShoeError, match="localhost only without TLS"):
        TableAPI(FakeLink(), same, tcp_port=0, tcp_host="0.0.0.0")


def test_tls_listener_refuses_plain_clients_and_checks_the_ca(tmp_path):
    ca, issue = _ca(tmp_path, "gw-ca")
    rogue_ca, _ = _ca(tmp_path, "rogue-ca")
    cert, key = issue("gateway", server=True)
    keys = _keys(tmp_path)
    link = FakeLink()
    api = TableAPI(
        link, {c: s for c, (p, s) in keys.items()}, tcp_port=0, tls=apiwire.server_tls(cert, key)
    ).start()
    try:
        url = api.urls()[0]
        assert url.startswith("gateway+tls://127.0.0.1:")
        port = api.tcp_port
        # a plain client speaking the API's frames: the handshake fails, the connection ends
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        apiwire.send(
            s, {"t": "auth", "role": "table", "cnonce": os.urandom(16), "mac": os.urandom(32)}
        )
        with pytest.raises((apiwire.WireError, OSError)):
            apiwire.recv(s)
        s.close()
        # a plain GatewayLink on the TLS port never gets the challenge: it cannot log in
        with pytest.raises(ShoeError, match="during the login"):
            GatewayLink("gateway+tcp://127.0.0.1:%d?key=%s" % (port, keys["table"][0])).open(
                timeout=1
            )
        # a TLS client trusting another CA fails the certificate check
        with pytest.raises(ShoeError, match="failed the TLS check"):
            GatewayLink("%s?key=%s&ca=%s" % (url, keys["table"][0], rogue_ca)).open(timeout=5)
        # the right CA: it works
        with GatewayLink("%s?key=%s&ca=%s" % (url, keys["table"][0], ca)).open(timeout=5) as ok:
            assert ok.command("status") == {"ok": "status"}
        assert link.sent == ["status"]
        assert api.refused >= 2
    finally:
        api.stop()
