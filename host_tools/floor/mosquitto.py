"""Run an installed Mosquitto (the production broker) for tests and the bench.

    with Mosquitto(workdir) as m: m.url; m.restart()
Persistence is on (as in production): queued QoS 1 messages of persistent sessions survive a
restart. None of this is needed in production, where Mosquitto runs as a service.
"""
import shutil
import socket
import subprocess
import time
from pathlib import Path

from host_tools.floor.mqtt import LocalBroker


def find():
    for p in ("mosquitto", "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if shutil.which(p):
            return shutil.which(p)
    return None


class Mosquitto(LocalBroker):
    def __init__(self, workdir, port=0):
        super().__init__(port)
        self.dir = Path(workdir)
        self.proc = None

    def start(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / "mosquitto.conf"
        conf.write_text("listener %d 127.0.0.1\nallow_anonymous true\npersistence true\n"
                        "persistence_location %s/\nmax_queued_messages 0\n"
                        "max_inflight_messages 200\n" % (self.port, self.dir))
        self.proc = subprocess.Popen([find(), "-c", str(conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self.url
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("mosquitto did not start")

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None
