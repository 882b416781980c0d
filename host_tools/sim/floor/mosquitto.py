"""Run an installed Mosquitto (the production broker) for tests and the bench.

    with Mosquitto(workdir) as m: m.url; m.restart()
    with Mosquitto(workdir, port=p, config=conf) as m: ...  # a mosquitto.conf as written by
                                    # `shoectl floor-broker-config --port p` (users, ACL, TLS)
Persistence is on (as in production): queued QoS 1 messages of persistent sessions survive a
restart. None of this is needed in production, where Mosquitto runs as a service.
"""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from host_tools.sim.floor.localbroker import LocalBroker


def find():
    for p in ("mosquitto", "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if shutil.which(p):
            return shutil.which(p)
    return None


class Mosquitto(LocalBroker):
    def __init__(self, workdir, port=0, config=None):
        super().__init__(port)
        self.dir = Path(workdir)
        self.config = config
        self.proc = None

    def start(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        conf = self.dir / "mosquitto.conf"
        if self.config:
            text = Path(self.config).read_text()
            if os.geteuid() == 0:
                # a test run as root: stay root to read the 0600 files the test wrote (as a
                # service, Mosquitto drops to its own user, who owns them: docs/floor.md)
                text += "user root\n"
            conf.write_text(text)
        else:
            conf.write_text(
                "listener %d 127.0.0.1\nallow_anonymous true\npersistence true\n"
                "persistence_location %s/\nmax_queued_messages 0\n"
                "max_inflight_messages 200\n" % (self.port, self.dir)
            )
        self.log = open(self.dir / "mosquitto.log", "ab")
        self.proc = subprocess.Popen(
            [find(), "-c", str(conf)], stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self.url
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("mosquitto did not start (%s)" % (self.dir / "mosquitto.log"))

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:  # a loaded machine: it was slow to say goodbye
                self.proc.kill()
                self.proc.wait(30)
            self.proc = None
            self.log.close()
