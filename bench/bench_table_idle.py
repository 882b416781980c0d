"""What one table costs the host per second, idle and per event (not a test, docs/floor.md).

N simulated shoes (host_tools/sim/floor/simshoe.py, in memory), each with its ShoeLink (a reader
thread, its SQLite audit store and counter floor file in --dir) and one Gateway per
--per-gateway tables (its cursor file in --dir), in this one process, as a table-group process of
bench/bench_floor_procs.py. The gateway publishes to a stand-in MQTT client that acknowledges
every publish at once (no broker: what is measured is the table's side only). After a warm-up
the tables run for --seconds idle (no event: heartbeats, polling, the gateway's loop), then for
--seconds with each shoe sealing --rate events/s (FloorDriver). CPU time per thread
(pthread_getcpuclockid) is added up by part:

    shoe      the simulated shoe: its driver thread (sealing) and, inside the link's reader
              thread, the shoe's end of the in-memory port (its Endpoint's transmit/receive);
              a stand-in, not product
    link      the ShoeLink reader threads minus the shoe's share (host_tools/link/)
    gateway   the Gateway threads (host_tools/floor/gateway.py: its loop, cursor file, states)
    other     the rest of the process (the bench's own main thread sleeps)

Reported: ms of CPU per table-second when idle and at --rate, and ms per event (the CPU at
--rate minus the idle CPU, over the events stored: noisy with few events; a loop that idles
cheaply but wakes per event moves cost from idle to per event, so compare the figures at
--rate too), the median over --reps repetitions; the
implementations take turns rep by rep (a shared machine's load falls on each), with the ratio to
the first. Implementations:

    head        the working tree's host_tools/floor/gateway.py and host_tools/link/shoelink.py
    git:REF     both files as they are at git REF (e.g. git:HEAD~3), loaded beside them

    .venv/bin/python bench/bench_table_idle.py [--tables 50] [--per-gateway 25] [--seconds 10]
        [--rate 0.5] [--reps 3] [--impl git:HEAD,head] [--dir /dev/shm] [--read-timeout 0.2]
"""

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gitref import module_at  # noqa: E402

import host_tools  # noqa: E402,F401  (the CPython stand-in for `micropython`, before shoe)
from host_tools.audit import AuditStore  # noqa: E402
from host_tools.floor import gateway as _gateway  # noqa: E402
from host_tools.link import shoelink as _shoelink  # noqa: E402
from host_tools.sim.floor import simshoe  # noqa: E402


def implementation(spec):
    """spec -> (Gateway class, ShoeLink class)."""
    if spec == "head":
        return _gateway.Gateway, _shoelink.ShoeLink
    if spec.startswith("git:"):
        ref = spec[4:]
        gw = module_at(ref, "host_tools/floor/gateway.py", "gateway_at_" + ref)
        sl = module_at(ref, "host_tools/link/shoelink.py", "shoelink_at_" + ref)
        return gw.Gateway, sl.ShoeLink
    raise SystemExit("unknown implementation %r" % spec)


# ---- a stand-in MQTT client: every publish acknowledged at once --------------------------------
class _Info:
    def is_published(self):
        return True


class FakeClient:
    _info = _Info()

    def __init__(self):
        self.published = 0

    def publish(self, topic, payload, qos=0, retain=False):
        self.published += 1
        return self._info

    def is_connected(self):
        return True

    def subscribe(self, *a, **k):
        return None

    def disconnect(self):
        pass

    def loop_stop(self):
        pass


# ---- the shoe's share of the link's reader thread ---------------------------------------------
_shoe_cpu = {}  # thread ident -> CPU seconds spent in the shoe's end of the port


def _timed(fn):
    def wrapper(*a, **k):
        t0 = time.thread_time()
        try:
            return fn(*a, **k)
        finally:
            ident = threading.get_ident()
            _shoe_cpu[ident] = _shoe_cpu.get(ident, 0.0) + time.thread_time() - t0

    return wrapper


class _ShoeEp:
    """The shoe's Endpoint with its transmit/receive timed (they run in the link's thread)."""

    def __init__(self, ep):
        self._ep = ep
        self.transmit = _timed(ep.transmit)
        self.receive = _timed(ep.receive)

    def __getattr__(self, name):
        return getattr(self._ep, name)


def thread_cpu(t):
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(t.ident))
    except (OSError, TypeError, ProcessLookupError):
        return None


class Tables:
    """N tables of one implementation: shoes, links, stores, gateways."""

    def __init__(self, impl, d, n, per_gateway, tag, read_timeout=0.2):
        gw_cls, link_cls = impl
        keys = simshoe.make_keys(seed=1)
        self.shoes, self.links, self.stores, self.gws = [], [], [], []
        before = set(threading.enumerate())
        for i in range(n):
            if i % per_gateway == 0:
                gw = gw_cls(
                    "mqtt://unused:1",
                    "gw-%s-%d" % (tag, i),
                    cursor_path=d / ("%s-%d.json" % (tag, i)),
                )
                gw.client = FakeClient()
                self.gws.append(gw)
            sid = "%s%03d" % (tag, i)
            shoe = simshoe.SimShoe(sid, keys, seed=i)
            shoe.ep = _ShoeEp(shoe.ep)
            store = AuditStore(d / ("%s.sqlite" % sid))
            link = link_cls(
                "sim://" + sid,
                keys["shoe"],
                audit=store,
                open_port=lambda u, s=shoe: s.open_port(u, read_timeout),
                read_timeout=read_timeout,
            )
            link.start()
            gw.add(sid, link, store)
            self.shoes.append(shoe)
            self.links.append(link)
            self.stores.append(store)
        for gw in self.gws:
            gw._thread = threading.Thread(target=gw._run, name="gateway", daemon=True)
            gw._thread.start()
        deadline = time.monotonic() + 30
        while not all(lk.up() for lk in self.links):
            if time.monotonic() > deadline:
                raise SystemExit("the links did not come up within 30 s")
            time.sleep(0.05)
        self.threads = [t for t in threading.enumerate() if t not in before]

    def sample(self):
        """CPU seconds so far by part."""
        link = gw = 0.0
        for t in self.threads:
            c = thread_cpu(t)
            if c is None:
                continue
            if t.name == "gateway":
                gw += c
            else:
                link += c
        shoe = sum(_shoe_cpu.get(t.ident, 0.0) for t in self.threads if t.name != "gateway")
        return {
            "shoe": shoe,
            "link": link - shoe,
            "gateway": gw,
            "process": time.process_time(),
        }

    def stored(self):
        return sum(s.last_eseq(sh.shoe_id) for s, sh in zip(self.stores, self.shoes))

    def close(self):
        for gw in self.gws:
            gw.stop()
        for lk in self.links:
            lk.close()
        for s in self.stores:
            s.close()


def _delta(a, b):
    out = {k: b[k] - a[k] for k in ("shoe", "link", "gateway")}
    out["other"] = (b["process"] - a["process"]) - sum(out.values())
    return out


def one(impl, base, n, per_gateway, seconds, rate, warm, tag, read_timeout=0.2):
    """-> ({part: ms per table-second idle}, {part: ms per event at `rate`}, {part: ms per
    table-second at `rate`}, events, published)."""
    with tempfile.TemporaryDirectory(dir=base) as d:
        tables = Tables(impl, Path(d), n, per_gateway, tag, read_timeout)
        try:
            time.sleep(warm)
            a = tables.sample()
            w0 = time.monotonic()
            time.sleep(seconds)
            b = tables.sample()
            idle_s = time.monotonic() - w0
            idle = _delta(a, b)
            idle_ms = {k: v * 1e3 / (n * idle_s) for k, v in idle.items()}
            ev_ms, at_ms, events = {}, {}, 0
            if rate > 0:
                driver = Driver(tables.shoes, rate=rate, seed=1)
                s0 = tables.stored()
                a = tables.sample()
                w0 = time.monotonic()
                driver.start()
                time.sleep(seconds)
                driver.stop()
                time.sleep(0.5)  # the last events stored and published
                b = tables.sample()
                busy_s = time.monotonic() - w0
                busy = _delta(a, b)
                busy["shoe"] += driver.thread_cpu  # sealing: the shoe's, not the process's rest
                busy["other"] -= driver.thread_cpu
                events = tables.stored() - s0
                at_ms = {k: v * 1e3 / (n * busy_s) for k, v in busy.items()}
                ev_ms = {
                    k: (busy[k] - idle_ms[k] / 1e3 * n * busy_s) * 1e3 / max(1, events)
                    for k in busy
                }
            published = sum(gw.client.published for gw in tables.gws)
        finally:
            tables.close()
    return idle_ms, ev_ms, at_ms, events, published


class Driver(simshoe.FloorDriver):
    """FloorDriver that keeps its thread's CPU time when it ends."""

    thread_cpu = 0.0

    def _run(self):
        try:
            super()._run()
        finally:
            self.thread_cpu = time.thread_time()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--per-gateway", type=int, default=25)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warm", type=float, default=2.0)
    ap.add_argument("--rate", type=float, default=0.5, help="events/s per table (0: idle only)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--read-timeout",
        type=float,
        default=0.2,
        help="the links' read timeout: how often an idle link looks at its port (s; "
        "bench_floor_procs.py's tables: 0.2, ShoeLink's default: 0.02)",
    )
    ap.add_argument("--impl", default="git:HEAD,head")
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    a = ap.parse_args(sys.argv[1:] if argv is None else argv)
    specs = a.impl.split(",")
    impls = {s: implementation(s) for s in specs}
    got = {s: {"idle": [], "event": [], "rate": []} for s in specs}
    for rep in range(a.reps):
        for i, s in enumerate(specs):
            idle, ev, at, events, published = one(
                impls[s],
                a.dir,
                a.tables,
                a.per_gateway,
                a.seconds,
                a.rate,
                a.warm,
                "i%d" % i,
                a.read_timeout,
            )
            got[s]["idle"].append(idle)
            got[s]["event"].append(ev)
            got[s]["rate"].append(at)
            print(
                "  rep %d %-14s idle %.3f ms/table-s%s"
                % (
                    rep,
                    s,
                    sum(idle.values()),
                    ", %.3f ms/event (%d events, %d published)"
                    % (sum(ev.values()), events, published)
                    if ev
                    else "",
                ),
                flush=True,
            )
    print(
        "%d tables, %d per gateway, read timeout %.2f s, %.0f s idle%s, %d reps (%s, load %.1f): "
        "median ms of CPU"
        % (
            a.tables,
            a.per_gateway,
            a.read_timeout,
            a.seconds,
            " + %.0f s at %.2f events/s per table" % (a.seconds, a.rate) if a.rate else "",
            a.reps,
            a.dir,
            os.getloadavg()[0],
        )
    )
    parts = ("shoe", "link", "gateway", "other")
    first = None
    for s in specs:
        for what, unit in (
            ("idle", "per table-second"),
            ("rate", "per table-second at --rate"),
            ("event", "per event (at --rate, minus idle)"),
        ):
            rows = [r for r in got[s][what] if r]
            if not rows:
                continue
            med = {p: statistics.median(r[p] for r in rows) for p in parts}
            prod = statistics.median(r["link"] + r["gateway"] for r in rows)
            total = statistics.median(sum(r.values()) for r in rows)
            if first is None:
                first = {}
            key = what
            ratio = ""
            if key in first:
                ratio = " (link+gateway x%.2f)" % (prod / first[key] if first[key] else 0)
            else:
                first[key] = prod
            print(
                "  %-14s %-5s %s: %s; link+gateway %.3f, all %.3f%s"
                % (
                    s,
                    what,
                    unit,
                    ", ".join("%s %.3f" % (p, med[p]) for p in parts),
                    prod,
                    total,
                    ratio,
                )
            )


if __name__ == "__main__":
    main()
