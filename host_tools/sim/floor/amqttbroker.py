"""The embedded amqtt broker (pinned from PyPI): the floor's fallback and `--broker-engine amqtt`.

    EmbeddedBroker(port=0, passwd=None, acl=None).start() -> "mqtt://127.0.0.1:PORT"; .stop();
        .restart() (same port). With passwd and acl (brokerauth.py's files, the same Mosquitto
        uses) it admits only those users and enforces the ACL; without, it is open (tests).
    BrokerProcess(...)  the same in a process of its own
        (`python -m host_tools.sim.floor.amqttbroker PORT [passwd acl]`).

A stand-in for tests and laptops: production points the same commands at Mosquitto or EMQX.
"""

import asyncio
import threading
import time

from host_tools.errors import ShoeError
from host_tools.sim.floor.localbroker import LocalBroker


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
                    plugins = {
                        "host_tools.floor.brokerauth.FloorAuth": {
                            "password_file": str(self.passwd)
                        },
                        "host_tools.floor.brokerauth.FloorTopics": {"acl_file": str(self.acl)},
                    }
                else:
                    plugins = {
                        "amqtt.plugins.authentication.AnonymousAuthPlugin": {
                            "allow_anonymous": True
                        }
                    }
                cfg = {
                    "listeners": {
                        "default": {
                            "type": "tcp",
                            "bind": "127.0.0.1:%d" % self.port,
                            "max_connections": 0,
                        }
                    },
                    "plugins": plugins,
                }
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
            for task in asyncio.all_tasks(loop):  # a clean stop: nothing left pending
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
    """The embedded amqtt broker in a process of its own
    (`python -m host_tools.sim.floor.amqttbroker PORT`), so a bench's broker has its own
    interpreter; restart() = SIGTERM and start again."""

    def __init__(self, port=0, passwd=None, acl=None):
        super().__init__(port)
        self.passwd, self.acl = passwd, acl
        self.proc = None

    def start(self, timeout=30.0):
        import subprocess
        import sys

        files = [str(self.passwd), str(self.acl)] if self.passwd else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "host_tools.sim.floor.amqttbroker", str(self.port), *files],
            stdout=subprocess.PIPE,
            text=True,
        )
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
