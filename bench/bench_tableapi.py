"""A command's round trip on a virtual board, direct and through `shoectl gateway`'s API: `status`
(sealed by the gateway with the table key) and an unchanged `configure` (the supervisor's,
sealed by the client for the counter the gateway offers). Run: .venv/bin/python
bench/bench_tableapi.py [N]"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

CFG = {"game": "four-card-frenzy", "procedure": "manual-shoe", "paytable": "fcf-public-1"}


def timed(link, n, kind, body):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        link.command(kind, body, timeout=10)
        ts.append((time.perf_counter() - t) * 1000)
    ts.sort()
    return "p50 %.1f ms  p99 %.1f ms" % (ts[n // 2], ts[min(n - 1, int(n * 0.99))])


def main(n=200):
    from host_tools.link import ShoeLink
    from host_tools.link.viagateway import GatewayLink
    from host_tools.sim.provision_sim import DEMO_KEYS, ensure_demo_keys
    from host_tools.sim.simboard import SimBoard

    d = tempfile.mkdtemp(prefix="bench-tableapi-")
    ensure_demo_keys(d + "/flash")
    board = SimBoard(d + "/flash", power_returns=False)
    board.start()
    port = "socket://127.0.0.1:%d" % board.host_port
    gw = None
    try:
        with ShoeLink(port, DEMO_KEYS["shoe"], supervisor_key=DEMO_KEYS["supervisor"]) as link:
            link.open(10)
            link.command("configure", CFG)
            print("direct   status                    %s" % timed(link, n, "status", {}))
            print("direct   configure (supervisor)    %s" % timed(link, n, "configure", CFG))
        gw = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "host_tools",
                "gateway",
                "--port",
                port,
                "--demo-keys",
                "--db",
                d + "/gw.sqlite",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        gw.stdout.readline()
        with GatewayLink(
            "gateway+unix://%s/gw.api.sock" % d, supervisor_key=DEMO_KEYS["supervisor"]
        ) as link:
            link.open(10)
            print("gateway  status                    %s" % timed(link, n, "status", {}))
            print("gateway  configure (supervisor)    %s" % timed(link, n, "configure", CFG))
    finally:
        if gw is not None:
            gw.terminate()
            gw.wait(30)
        board.stop()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
