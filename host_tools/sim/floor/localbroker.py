"""What the brokers started for tests, the bench and the laptop floor share (stand-ins, not
product).

free_port() -> a free TCP port on 127.0.0.1
LocalBroker(port=0)   start() -> URL, stop(), restart(), .url, `with`; subclassed by
    amqttbroker.EmbeddedBroker / BrokerProcess, aedes.AedesBroker and mosquitto.Mosquitto.
"""

import socket


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
