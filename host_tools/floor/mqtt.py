"""MQTT for the floor: broker URLs, paho clients, topics (the embedded brokers of the tests and
the laptop floor are stand-ins: host_tools/sim/floor/).

    BrokerURL.parse("mqtt://host:1883")  mqtts://host:8883 for TLS; a user name in the URL
        (mqtt://gw-T007@host), its password never on the command line: from env
        SHOE_MQTT_PASSWORD, or the file SHOE_MQTT_PASSWORD_FILE names, or
        $SHOE_MQTT_CREDENTIALS/<user>.password (the directory shoectl floor-broker-config
        writes). For mqtts: SHOE_MQTT_CA the CA file (default: the system's CAs), and
        SHOE_MQTT_CERT/SHOE_MQTT_KEY a client certificate (Mosquitto can take its CN as the user).
    client(url, client_id, clean=False)  a paho client (MQTT 3.1.1, persistent session unless
        clean), connected asynchronously with automatic reconnection (loop_start).
    default_name("collector") -> "collector-<host>"  a stable identity: the same after a restart,
        so the broker's persistent session is taken up again instead of left behind.
    forget_session(url, client_id)  end a stale persistent session (connect clean, disconnect).

Production points the same commands at Mosquitto or EMQX.
"""

import os
import socket
import threading
from urllib.parse import unquote, urlsplit

from host_tools.errors import ShoeError

PREFIX = "floor"


def topic(shoe, what, prefix=PREFIX):
    return "%s/shoe/%s/%s" % (prefix, shoe, what)


def shoe_of(t, prefix=PREFIX):
    """'floor/shoe/<id>/<what>' -> (id, what) or (None, None)."""
    parts = t.split("/")
    if len(parts) == 4 and parts[0] == prefix and parts[1] == "shoe" and parts[2]:
        return parts[2], parts[3]
    return None, None


class BrokerURL:
    def __init__(self, host, port, tls, user):
        self.host, self.port, self.tls, self.user = host, port, tls, user

    @classmethod
    def parse(cls, url):
        u = urlsplit(url)
        if u.scheme not in ("mqtt", "mqtts"):
            raise ShoeError(
                "broker URL must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT]: %s" % url
            )
        if u.password:
            raise ShoeError("put no password in the broker URL: set SHOE_MQTT_PASSWORD")
        if not u.hostname:
            raise ShoeError("broker URL has no host: %s" % url)
        tls = u.scheme == "mqtts"
        return cls(
            u.hostname,
            u.port or (8883 if tls else 1883),
            tls,
            unquote(u.username) if u.username else None,
        )

    def __str__(self):
        return "%s://%s%s:%d" % (
            "mqtts" if self.tls else "mqtt",
            self.user + "@" if self.user else "",
            self.host,
            self.port,
        )

    def password(self, env=None):
        """The user's password from the environment (see the module's docstring), or None."""
        env = os.environ if env is None else env
        if not self.user:
            return None
        if env.get("SHOE_MQTT_PASSWORD_FILE"):
            return _read_secret(env["SHOE_MQTT_PASSWORD_FILE"])
        if env.get("SHOE_MQTT_CREDENTIALS"):
            f = os.path.join(env["SHOE_MQTT_CREDENTIALS"], self.user + ".password")
            if os.path.exists(f):
                return _read_secret(f)
        return env.get("SHOE_MQTT_PASSWORD")


def _read_secret(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        raise ShoeError("cannot read the MQTT password file %s: %s" % (path, e.strerror)) from e


def default_name(role, host=None):
    """A client id that survives restarts: the role and the host name, never a PID (each restart
    of a PID-named client left a persistent session, and its queue, on the broker)."""
    host = host if host is not None else socket.gethostname()
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in host)[:40] or "host"
    return "%s-%s" % (role, safe)


def forget_session(url, client_id, timeout=10.0):
    """End the persistent session `client_id` left on the broker (a collector renamed or retired):
    connect under that id without a clean session (the broker says whether it holds one), then
    with a clean session, which discards it. -> whether there was one."""
    return [_connect_once(url, client_id, clean, timeout) for clean in (False, True)][0]


def _connect_once(url, client_id, clean, timeout):
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    b = BrokerURL.parse(url)
    present = []
    done = threading.Event()

    def on_connect(c, userdata, flags, reason_code, properties):
        present.append(bool(flags.session_present))
        done.set()

    c = paho.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=clean,
        protocol=paho.MQTTv311,
    )
    if b.user:
        c.username_pw_set(b.user, os.environ.get("SHOE_MQTT_PASSWORD"))
    if b.tls:
        c.tls_set(ca_certs=os.environ.get("SHOE_MQTT_CA") or None)
    c.on_connect = on_connect
    try:
        c.connect(b.host, b.port, keepalive=10)
    except OSError as e:
        raise ShoeError("cannot reach the broker %s: %s" % (b, e)) from e
    c.loop_start()
    try:
        if not done.wait(timeout):
            raise ShoeError("the broker did not answer for %s" % client_id)
    finally:
        c.disconnect()
        c.loop_stop()
    return present[0]


def client(url, client_id, clean=False, on_connect=None, on_message=None, manual_ack=False):
    """A started paho client; it keeps reconnecting on its own (0.2..2 s back-off)."""
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    b = BrokerURL.parse(url)
    c = paho.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=clean,
        protocol=paho.MQTTv311,
        manual_ack=manual_ack,
    )
    c.max_inflight_messages_set(200)
    c.max_queued_messages_set(0)
    c.reconnect_delay_set(0.2, 2)
    if b.user:
        c.username_pw_set(b.user, b.password())
    if b.tls:
        cert, key = os.environ.get("SHOE_MQTT_CERT"), os.environ.get("SHOE_MQTT_KEY")
        if bool(cert) != bool(key):
            raise ShoeError("a client certificate needs both SHOE_MQTT_CERT and SHOE_MQTT_KEY")
        c.tls_set(
            ca_certs=os.environ.get("SHOE_MQTT_CA") or None,
            certfile=cert or None,
            keyfile=key or None,
        )
    if on_connect:
        c.on_connect = on_connect
    if on_message:
        c.on_message = on_message
    c.connect_async(b.host, b.port, keepalive=10)
    c.loop_start()
    return c
