"""Per-gateway and per-collector MQTT credentials and topic ACLs (shoectl floor-broker-config),
enforced alike by the embedded broker (amqtt) and by Mosquitto, with passwords and with client
certificates (a throwaway CA made here with `cryptography`): a gateway cannot publish another
shoe's topics nor read events, a collector cannot publish events, strangers cannot connect."""
import datetime
import ipaddress
import queue
import ssl
import subprocess
import sys

import pytest

from host_tools.floor import brokerauth, keyring, mosquitto
from host_tools.floor.mqtt import BrokerURL, EmbeddedBroker, free_port, topic
from host_tools.floor.simshoe import make_keys
from tests.host_tools.floor.conftest import wait_for

SHOES = ("T001", "T002")


def _config(tmp_path, port, tls=None):
    keys = tmp_path / "keys"
    for s in SHOES:
        keyring.write(keys, s, make_keys())
    out = tmp_path / "broker"
    args = [sys.executable, "-m", "host_tools", "floor-broker-config", "--keys", str(keys),
            "--out", str(out), "--collectors", "collector-1,collector-2", "--port", str(port),
            "--bind", "127.0.0.1", "--data", str(tmp_path / "data")]
    if tls:
        args += ["--tls-ca", tls["ca"], "--tls-cert", tls["cert"], "--tls-key", tls["key"],
                 "--require-certificate"]
    subprocess.run(args, check=True, capture_output=True, text=True)
    (tmp_path / "data").mkdir(exist_ok=True)
    pw = {p.name[:-len(".password")]: p.read_text().strip()
          for p in (out / "credentials").glob("*.password")}
    return out, pw


class Peer:
    """A paho client that records whether it got in and every message it receives. A persistent
    session: Mosquitto 2.0.11 answers a denied publish with PUBACK reason 135 even on MQTT 3.1.1,
    which paho takes for a protocol error and reconnects; the subscriptions stay."""

    def __init__(self, port, user=None, password=None, tls=None):
        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion
        self.state = None
        self.got = queue.Queue()
        self.subacks = {}
        c = self.c = paho.Client(CallbackAPIVersion.VERSION2, client_id="t-%s-%d" % (
            user, free_port()), protocol=paho.MQTTv311, clean_session=False)
        if user:
            c.username_pw_set(user, password)
        if tls:
            c.tls_set(ca_certs=tls["ca"], certfile=tls.get("cert"), keyfile=tls.get("key"))
        c.reconnect_delay_set(0.05, 0.5)
        c.on_connect = lambda cl, u, f, rc, p: setattr(self, "state",
                                                       "refused" if rc.is_failure else "in")
        c.on_disconnect = lambda cl, u, f, rc, p: self.state is None and \
            setattr(self, "state", "refused")
        c.on_message = lambda cl, u, m: self.got.put((m.topic, m.payload))
        c.on_subscribe = lambda cl, u, mid, rcs, p: self.subacks.__setitem__(mid, rcs)
        try:
            c.connect("127.0.0.1", port, keepalive=10)
        except (OSError, ssl.SSLError):
            self.state = "refused"
            return
        c.loop_start()
        wait_for(lambda: self.state, what="CONNACK or refusal")

    def sub(self, filt):
        rc, mid = self.c.subscribe(filt, qos=1)
        wait_for(lambda: mid in self.subacks, what="SUBACK")
        return not self.subacks[mid][0].is_failure

    def pub(self, t, payload):
        wait_for(self.c.is_connected, what="connected")
        info = self.c.publish(t, payload, qos=1)
        wait_for(info.is_published, what="PUBACK")

    def messages(self):
        out = []
        while not self.got.empty():
            out.append(self.got.get())
        return out

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()


def _check(port, login, stranger_refused, suback_refuses=True):
    """The ACL as seen from outside. login(user) -> a connected Peer. amqtt refuses a
    subscription the ACL does not cover (SUBACK 0x80); Mosquitto 2.0 grants it on MQTT 3.1.1 and
    checks each message on delivery instead: either way nothing arrives (checked below)."""
    stranger_refused()
    col = login("collector-1")
    assert col.sub(topic("+", "events")) and col.sub(topic("+", "state"))
    gw1, gw2 = login("gw-T001"), login("gw-T002")
    # a gateway may not read events (nor subscribe to everything), only its replay topic
    for f in (topic("+", "events"), "floor/#", topic("T002", "replay")):
        assert gw1.sub(f) is not suback_refuses, f
    assert gw1.sub(topic("T001", "replay"))
    # gw-T001 publishes as T002 (refused), then as itself; the collector sees only the second
    gw1.pub(topic("T002", "events"), b"forged by gw-T001")
    gw1.pub(topic("T002", "state"), b"forged state")
    gw1.pub(topic("T001", "events"), b"own event")
    wait_for(lambda: not col.got.empty(), what="the gateway's own event")
    # gw-T002's event and then a replay request from the collector: gw-T001 gets the replay
    # (so anything delivered to it before is in its queue) and never T002's event
    gw2.pub(topic("T002", "events"), b"T002 event")
    wait_for(lambda: col.got.qsize() >= 2, what="T002's event at the collector")
    col.pub(topic("T001", "replay"), b'{"from": 1}')
    wait_for(lambda: not gw1.got.empty(), what="the replay request at gw-T001")
    assert gw1.messages() == [(topic("T001", "replay"), b'{"from": 1}')]
    # a collector may not publish events or state
    col.pub(topic("T001", "events"), b"forged by a collector")
    col.pub(topic("T001", "state"), b"forged by a collector")
    gw1.pub(topic("T001", "state"), b"own state")
    wait_for(lambda: col.got.qsize() >= 3, what="gw-T001's state")
    assert col.messages() == [(topic("T001", "events"), b"own event"),
                              (topic("T002", "events"), b"T002 event"),
                              (topic("T001", "state"), b"own state")]
    for p in (col, gw1, gw2):
        p.close()


def test_embedded_broker_enforces_the_generated_users_and_acl(tmp_path):
    port = free_port()
    out, pw = _config(tmp_path, port)
    assert set(pw) == {"gw-T001", "gw-T002", "collector-1", "collector-2"}
    with EmbeddedBroker(port, passwd=out / "passwd", acl=out / "acl"):
        def stranger_refused():
            assert Peer(port).state == "refused"                         # anonymous
            assert Peer(port, "gw-T001", pw["gw-T002"]).state == "refused"   # another's password
            assert Peer(port, "gw-T009", "x").state == "refused"           # unknown user
        _check(port, lambda u: Peer(port, u, pw[u]), stranger_refused)


def test_acl_rules_match_topics_and_cover_subscriptions():
    acl = brokerauth.Acl.parse(brokerauth.Plan.build(SHOES, ["c1"]).acl().text())
    assert acl.allows("gw-T001", "write", "floor/shoe/T001/events")
    assert not acl.allows("gw-T001", "write", "floor/shoe/T001/events/x")
    assert not acl.allows("gw-T001", "write", "floor/shoe/T002/events")
    assert not acl.allows("gw-T001", "read", "floor/shoe/T001/events")
    assert acl.allows("gw-T001", "subscribe", "floor/shoe/T001/replay")
    assert not acl.allows("gw-T001", "subscribe", "floor/shoe/+/replay")
    assert acl.allows("c1", "subscribe", "floor/shoe/+/events")
    assert acl.allows("c1", "subscribe", "floor/shoe/T002/events")
    assert not acl.allows("c1", "subscribe", "floor/shoe/#")
    assert not acl.allows("c1", "subscribe", "floor/+/+/events")
    assert acl.allows("c1", "read", "floor/shoe/T009/state")
    assert not acl.allows("c1", "write", "floor/shoe/T001/events")
    assert not acl.allows("nobody", "read", "floor/shoe/T001/events")
    assert not acl.allows("c1", "read", "$SYS/broker/uptime")
    with pytest.raises(Exception):
        brokerauth.Acl.parse("user gw\ntopic all floor/#\n")
    with pytest.raises(Exception):
        brokerauth.Plan.build(SHOES, ["c1"], {"gw-x": ["T009"]})     # a shoe with no key


def test_the_password_comes_from_the_credentials_directory_not_the_url(tmp_path):
    out, pw = _config(tmp_path, 1883)
    url = BrokerURL.parse("mqtt://gw-T001@broker.floor:1883")
    assert url.password({"SHOE_MQTT_CREDENTIALS": str(out / "credentials")}) == pw["gw-T001"]
    f = out / "credentials" / "gw-T002.password"
    assert url.password({"SHOE_MQTT_PASSWORD_FILE": str(f)}) == pw["gw-T002"]
    assert brokerauth.verify_password(pw["gw-T001"], brokerauth.read_passwd(
        out / "passwd")["gw-T001"])
    assert not brokerauth.verify_password(pw["gw-T002"], brokerauth.read_passwd(
        out / "passwd")["gw-T001"])
    # a re-run keeps every password; --rotate changes them
    assert _config(tmp_path, 1883)[1] == pw


def _need_mosquitto():
    if mosquitto.find() is None:
        pytest.skip("no mosquitto installed (apt-get install mosquitto): not tested against it")


def test_mosquitto_enforces_the_generated_users_and_acl(tmp_path):
    _need_mosquitto()
    port = free_port()
    out, pw = _config(tmp_path, port)
    with mosquitto.Mosquitto(tmp_path / "data", port=port, config=out / "mosquitto.conf"):
        def stranger_refused():
            assert Peer(port).state == "refused"
            assert Peer(port, "gw-T001", pw["gw-T002"]).state == "refused"
        _check(port, lambda u: Peer(port, u, pw[u]), stranger_refused, suback_refuses=False)


def _ca(tmp_path, name):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    pem = tmp_path / (name + ".pem")
    pem.write_bytes(ca.public_bytes(serialization.Encoding.PEM))

    def issue(cn, server=False):
        key = ec.generate_private_key(ec.SECP256R1())
        b = (x509.CertificateBuilder()
             .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
             .issuer_name(ca_name).public_key(key.public_key())
             .serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
        if server:
            b = b.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        cert = b.sign(ca_key, hashes.SHA256())
        c, k = tmp_path / ("%s-%s.pem" % (name, cn)), tmp_path / ("%s-%s.key" % (name, cn))
        c.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        k.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()))
        return str(c), str(k)
    return str(pem), issue


def test_mosquitto_client_certificates_name_the_user_the_acl_applies_to(tmp_path):
    _need_mosquitto()
    ca, issue = _ca(tmp_path, "floor-ca")
    rogue_ca, rogue_issue = _ca(tmp_path, "rogue-ca")
    cert, key = issue("broker", server=True)
    port = free_port()
    out, _ = _config(tmp_path, port, tls={"ca": ca, "cert": cert, "key": key})
    assert "require_certificate true" in (out / "mosquitto.conf").read_text()
    with mosquitto.Mosquitto(tmp_path / "data", port=port, config=out / "mosquitto.conf"):
        def login(user):
            c, k = issue(user)
            return Peer(port, tls={"ca": ca, "cert": c, "key": k})

        def stranger_refused():
            assert Peer(port, tls={"ca": ca}).state == "refused"           # no certificate
            c, k = rogue_issue("gw-T001")                                   # another CA's
            assert Peer(port, tls={"ca": ca, "cert": c, "key": k}).state == "refused"
            assert Peer(port, "gw-T001", "x").state == "refused"            # plain, no TLS
        _check(port, login, stranger_refused, suback_refuses=False)


def test_a_whole_floor_runs_through_the_embedded_broker_with_its_acl(tmp_path, db_url):
    """The real gateway and collector under their own users (the demo's set-up): every event
    stored, no alert; strangers and wrong passwords are not let in."""
    from host_tools.floor import pg
    from host_tools.floor.harness import Floor
    from tests.host_tools.floor.conftest import wait_all_stored
    with Floor(tmp_path, tables=3, rate=20, db_url=db_url, view=False, broker_acl=True) as f:
        assert "gw-floor@" in f.gateway.broker_url
        conn = pg.connect(db_url)
        f.driver.start()
        wait_for(lambda: sum(f.emitted().values()) > 60, what="events")
        pw = (tmp_path / "broker" / "credentials" / "gw-floor.password").read_text().strip()
        assert Peer(f.broker.port).state == "refused"
        assert Peer(f.broker.port, "gw-floor", pw + "x").state == "refused"
        f.driver.stop()
        wait_all_stored(f, conn)
        assert conn.execute("SELECT count(*) FROM alerts").fetchone()[0] == 0
    assert "SHOE_MQTT_CREDENTIALS" not in __import__("os").environ
