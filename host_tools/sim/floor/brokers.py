"""Local MQTT brokers by name, for the bench, the tests and the scale simulation.

    embedded(engine=None, passwd=None, acl=None, process=False, tls=None) -> the embedded
        broker: aedes (the default, ENGINES[0]; tls as aedes.AedesBroker takes it) or amqtt (in
        this process, or its own with process=True). With
        no engine named and aedes unable to run (no node), amqtt, saying so on stderr.
    broker_for(None | "aedes" | "amqtt" | "mosquitto" | "bridge:K", workdir) -> a
        LocalBroker-shaped object: start() -> URL, stop(), restart(), .url; MosquittoBridge also
        has .edge_urls.
MosquittoBridge(workdir, edges=K): one "core" Mosquitto (collectors connect here) and K "edge"
Mosquittos (the gateways of a pit or a machine connect to theirs), each edge bridged to the core:
events and states out, replay requests in (docs/floor.md, "5,000 tables").
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from host_tools.errors import ShoeError
from host_tools.sim.floor import aedes, amqttbroker, mosquitto

ENGINES = ("aedes", "amqtt")


def embedded(engine=None, passwd=None, acl=None, process=False, port=0, tls=None):
    if engine not in (None,) + ENGINES:
        raise ShoeError("unknown embedded broker %r: %s" % (engine, " or ".join(ENGINES)))
    if engine is None:
        why = aedes.missing()
        engine = "amqtt" if why else "aedes"
        if why:
            print(
                "embedded MQTT broker: amqtt, because aedes cannot run (%s)" % why,
                file=sys.stderr,
                flush=True,
            )
    if engine == "aedes":
        return aedes.AedesBroker(port, passwd=passwd, acl=acl, tls=tls)
    if tls:
        raise ShoeError("the embedded amqtt broker is not set up for TLS here: use aedes")
    return (amqttbroker.BrokerProcess if process else amqttbroker.EmbeddedBroker)(
        port, passwd=passwd, acl=acl
    )


def broker_for(name, workdir=None):
    """name None: the embedded default (aedes, else amqtt), each in a process of its own."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="floor-broker-"))
    if name is None or name in ENGINES:
        return embedded(name, process=True)
    if name in ("mosquitto", "bridge") or name.startswith("bridge:"):
        if not mosquitto.find():
            raise ShoeError("mosquitto is not installed (Debian: apt-get install mosquitto)")
        if name == "mosquitto":
            return mosquitto.Mosquitto(workdir / "mosquitto")
        edges = int(name.partition(":")[2] or 2)
        return MosquittoBridge(workdir, edges)
    raise ShoeError("unknown broker %r: amqtt, aedes, mosquitto or bridge:K" % name)


class _Edge(mosquitto.Mosquitto):
    """A Mosquitto whose configuration bridges floor/shoe/# to the core broker."""

    def __init__(self, workdir, core_port, name):
        super().__init__(workdir)
        self.core_port = core_port
        self.name = name

    def start(self):
        url = super().start()  # writes the plain configuration; add the bridge, reload
        self.stop()
        conf = self.dir / "mosquitto.conf"
        conf.write_text(
            conf.read_text()
            + (
                "connection %s\naddress 127.0.0.1:%d\nclientid %s\ncleansession false\n"
                "restart_timeout 1 5\nbridge_attempt_unsubscribe false\n"
                "topic floor/shoe/+/events out 1\ntopic floor/shoe/+/state out 1\n"
                "topic floor/shoe/+/replay in 1\n"
            )
            % (self.name, self.core_port, self.name)
        )
        self.proc = subprocess.Popen(
            [mosquitto.find(), "-c", str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return self._wait_listening(url)

    def _wait_listening(self, url):
        import socket
        import time

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return url
            except OSError:
                time.sleep(0.02)
        raise ShoeError("bridged mosquitto did not start")


class MosquittoBridge:
    def __init__(self, workdir, edges=2):
        self.dir = Path(workdir)
        self.core = mosquitto.Mosquitto(self.dir / "core")
        self.edges = [
            _Edge(self.dir / ("edge%d" % i), self.core.port, "edge%d" % i) for i in range(edges)
        ]

    @property
    def url(self):
        return self.core.url

    @property
    def edge_urls(self):
        return [e.url for e in self.edges]

    @property
    def procs(self):
        return [b.proc for b in [self.core] + self.edges if b.proc]

    def start(self):
        self.core.start()
        for e in self.edges:
            e.start()
        return self.url

    def restart(self):
        """The core broker restarts (persistence on); the edges' bridges reconnect to it."""
        self.core.restart()
        return self.url

    def stop(self):
        for b in self.edges + [self.core]:
            b.stop()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
