"""MQTT for the floor: broker URLs, paho clients, and the embedded amqtt broker (the fallback and
`--broker-engine amqtt`; aedes.py is the default, both through brokers.embedded()).

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
    EmbeddedBroker(port=0, passwd=None, acl=None).start() -> "mqtt://127.0.0.1:PORT"; .stop();
        .restart() (same port). With passwd and acl (brokerauth.py's files, the same Mosquitto
        uses) it admits only those users and enforces the ACL; without, it is open (tests).

Production points the same commands at Mosquitto or EMQX: nothing here is specific to amqtt.
"""
import asyncio
import os
import socket
import threading
import time
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
            raise ShoeError("broker URL must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT]: %s"
                            % url)
        if u.password:
            raise ShoeError("put no password in the broker URL: set SHOE_MQTT_PASSWORD")
        if not u.hostname:
            raise ShoeError("broker URL has no host: %s" % url)
        tls = u.scheme == "mqtts"
        return cls(u.hostname, u.port or (8883 if tls else 1883), tls,
                   unquote(u.username) if u.username else None)

    def __str__(self):
        return "%s://%s%s:%d" % ("mqtts" if self.tls else "mqtt",
                                 self.user + "@" if self.user else "", self.host, self.port)

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
        raise ShoeError("cannot read the MQTT password file %s: %s" % (path, e.strerror))


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

    c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean,
                    protocol=paho.MQTTv311)
    if b.user:
        c.username_pw_set(b.user, os.environ.get("SHOE_MQTT_PASSWORD"))
    if b.tls:
        c.tls_set(ca_certs=os.environ.get("SHOE_MQTT_CA") or None)
    c.on_connect = on_connect
    try:
        c.connect(b.host, b.port, keepalive=10)
    except OSError as e:
        raise ShoeError("cannot reach the broker %s: %s" % (b, e))
    c.loop_start()
    try:
        if not done.wait(timeout):
            raise ShoeError("the broker did not answer for %s" % client_id)
    finally:
        c.disconnect()
        c.loop_stop()
    return present[0]


def client(url, client_id, clean=False, on_connect=None, on_message=None, manual_ack=False):
    """A started paho client; it keeps reconnecting on its own (1..5 s back-off)."""
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    b = BrokerURL.parse(url)
    c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean,
                    protocol=paho.MQTTv311, manual_ack=manual_ack)
    c.max_inflight_messages_set(200)
    c.max_queued_messages_set(0)
    c.reconnect_delay_set(0.2, 2)
    if b.user:
        c.username_pw_set(b.user, b.password())
    if b.tls:
        cert, key = os.environ.get("SHOE_MQTT_CERT"), os.environ.get("SHOE_MQTT_KEY")
        if bool(cert) != bool(key):
            raise ShoeError("a client certificate needs both SHOE_MQTT_CERT and SHOE_MQTT_KEY")
        c.tls_set(ca_certs=os.environ.get("SHOE_MQTT_CA") or None, certfile=cert or None,
                  keyfile=key or None)
    if on_connect:
        c.on_connect = on_connect
    if on_message:
        c.on_message = on_message
    c.connect_async(b.host, b.port, keepalive=10)
    c.loop_start()
    return c


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class LocalBroker:
    """What the brokers started here for tests, the bench and the laptop floor share: a port on
    127.0.0.1, its URL, restart, and `with`. Subclasses give start() and stop()."""

    def __init__(self, port=0):
        self.port = port or free_port()

    @property
    def url(self):
        return "mqtt://127.0.0.1:%d" % self.port

    def restart(self):
        self.stop()
        return self.start()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


class EmbeddedBroker(LocalBroker):
    """amqtt (pinned from PyPI) in a thread with its own event loop, on 127.0.0.1."""

    def __init__(self, port=0, passwd=None, acl=None):
        super().__init__(port)
        if (passwd is None) != (acl is None):
            raise ShoeError("the embedded broker takes a password file and an ACL file together")
        self.passwd, self.acl = passwd, acl
        self._loop = None
        self._thread = None
        self._broker = None

    def start(self, timeout=15.0):
        """Start (retrying while the port is still held by a previous run's closing sockets)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._start(timeout)
            except ShoeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _start(self, timeout):
        import logging
        # amqtt logs every dropped client (a restart, a killed collector) with a traceback; what
        # matters is reported by start() and by the gateways' and collectors' counters
        logging.getLogger("amqtt").setLevel(logging.CRITICAL)
        ready = threading.Event()
        err = []

        def main():
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                from amqtt.broker import Broker
                if self.passwd:
                    plugins = {"host_tools.floor.brokerauth.FloorAuth":
                               {"password_file": str(self.passwd)},
                               "host_tools.floor.brokerauth.FloorTopics":
                               {"acl_file": str(self.acl)}}
                else:
                    plugins = {"amqtt.plugins.authentication.AnonymousAuthPlugin":
                               {"allow_anonymous": True}}
                cfg = {"listeners": {"default": {"type": "tcp",
                                                 "bind": "127.0.0.1:%d" % self.port,
                                                 "max_connections": 0}},
                       "plugins": plugins}
                self._broker = Broker(cfg, loop=loop)
                loop.run_until_complete(self._broker.start())
            except Exception as e:  # reported to start()
                err.append(e)
                self._loop = None
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            for task in asyncio.all_tasks(loop):   # a clean stop: nothing left pending
                task.cancel()
            try:
                loop.run_until_complete(asyncio.sleep(0.05))
            except Exception:
                pass
            loop.close()

        self._thread = threading.Thread(target=main, name="amqtt", daemon=True)
        self._thread.start()
        ready.wait(timeout)
        if err:
            raise ShoeError("embedded MQTT broker did not start: %s" % err[0])
        return self.url  # Broker.start() returns once its listener is bound

    def _close_listeners(self):
        # The listening sockets first, at once: a shutdown that stalls (a client that does not go
        # away on a loaded machine) must not keep the port from the next start().
        for server in getattr(self._broker, "_servers", {}).values():
            inst = getattr(server, "instance", None)
            if inst is not None:
                inst.close()

    def stop(self):
        if self._loop is None or self._loop.is_closed():
            self._loop = None
            return
        loop = self._loop
        loop.call_soon_threadsafe(self._close_listeners)
        fut = asyncio.run_coroutine_threadsafe(self._broker.shutdown(), loop)
        try:
            fut.result(10)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        self._loop = None


class BrokerProcess(LocalBroker):
    """The embedded amqtt broker in a process of its own (`python -m host_tools.floor.mqtt
    PORT`), so a bench's broker has its own interpreter; restart() = SIGTERM and start again."""

    def __init__(self, port=0, passwd=None, acl=None):
        super().__init__(port)
        self.passwd, self.acl = passwd, acl
        self.proc = None

    def start(self, timeout=30.0):
        import subprocess
        import sys
        files = [str(self.passwd), str(self.acl)] if self.passwd else []
        self.proc = subprocess.Popen([sys.executable, "-m", "host_tools.floor.mqtt",
                                      str(self.port), *files], stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            raise ShoeError("the broker process did not start")
        return self.url

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except Exception:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def _serve(port, passwd=None, acl=None):
    import signal
    b = EmbeddedBroker(port, passwd, acl)
    b.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    print("ready %s" % b.url, flush=True)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    b.stop()


if __name__ == "__main__":
    import sys
    _serve(int(sys.argv[1]), *sys.argv[2:4])
