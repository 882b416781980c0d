"""What the floor's users and ACL cost each embedded broker: messages/s from one publisher
(gw-T001, QoS 1, 200 in flight, 300-byte payloads) to one subscriber (collector-1, QoS 1),
open and then with brokerauth's passwd and acl files.

    .venv/bin/python bench/bench_broker_acl.py [--engines aedes,amqtt] [--messages 20000]
amqtt runs in this process (beside the paho clients), aedes in its own Node process.
"""

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import host_tools  # noqa: E402,F401
from host_tools.floor import brokerauth  # noqa: E402
from host_tools.floor.mqtt import topic  # noqa: E402
from host_tools.sim.floor import brokers  # noqa: E402


def _client(user, password):
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    c = paho.Client(
        CallbackAPIVersion.VERSION2, client_id=user, clean_session=True, protocol=paho.MQTTv311
    )
    c.max_inflight_messages_set(200)
    c.max_queued_messages_set(0)
    if password:
        c.username_pw_set(user, password)
    return c


def run(engine, n, files=None, pw=None):
    b = brokers.embedded(engine, passwd=files and files["passwd"], acl=files and files["acl"])
    b.start()
    got, done, ready = [0], threading.Event(), threading.Event()
    try:
        sub = _client("collector-1", pw and pw["collector-1"])

        def on_message(c, u, m):
            got[0] += 1
            if got[0] >= n:
                done.set()

        sub.on_message = on_message
        sub.on_subscribe = lambda *a: ready.set()
        sub.connect("127.0.0.1", b.port)
        sub.loop_start()
        sub.subscribe(topic("+", "events"), 1)
        if not ready.wait(30):
            raise SystemExit("no SUBACK from %s" % engine)
        pub = _client("gw-T001", pw and pw["gw-T001"])
        pub.connect("127.0.0.1", b.port)
        pub.loop_start()
        t = time.monotonic()
        for _ in range(n):
            pub.publish(topic("T001", "events"), b"x" * 300, qos=1)
        done.wait(300)
        dt = time.monotonic() - t
        for c in (pub, sub):
            c.loop_stop()
            c.disconnect()
    finally:
        b.stop()
    print(
        "%-6s %-10s %6d/%d delivered in %5.1f s: %6.0f msg/s"
        % (engine, "users+ACL" if files else "open", got[0], n, dt, got[0] / dt),
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="aedes,amqtt")
    ap.add_argument("--messages", type=int, default=20000)
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="bench-acl-"))
    plan = brokerauth.Plan.build(["T001"], ["collector-1"])
    files = brokerauth.write(d, plan, port=0, bind="127.0.0.1", data=d)
    pw = {u: (files["credentials"] / (u + ".password")).read_text().strip() for u in plan.users()}
    for engine in a.engines.split(","):
        run(engine, a.messages)
        run(engine, a.messages, files, pw)


if __name__ == "__main__":
    main()
