"""Floor figures (not a test): a whole casino floor through MQTT into PostgreSQL on this machine.

    .venv/bin/python bench/bench_floor.py [--tables 500] [--rate 1.0] [--seconds 30]
                                          [--mosquitto] [--quick]

Simulated shoes (real signed, chained streams from the firmware's link code) -> ShoeLink ->
per-table SQLite audit store -> gateway (all tables in this process) -> broker (embedded aedes, or
amqtt with --broker-engine amqtt, in its own process; --mosquitto adds the same clean run through
an installed Mosquitto) -> 2
`shoectl collector` processes -> PostgreSQL 16 (pgserver) -> floor view (server-sent events, read
by an HTTP client here). "Committed" is the row's received_at (clock_timestamp() in the
collector's write transaction). Two runs:
  clean:   events/s committed, latency p50/p99 of shoe event -> row committed -> page updated,
           lost (sealed but not stored) and stored twice (rows - distinct (shoe, eseq));
  faults:  the same, with one collector killed at 1/3 of the run and the broker restarted at
           1/2 (time until every event sealed before each fault is stored), and 300 forged,
           altered and replayed events injected at the broker (rejected, alerted, never stored).
"""

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "firmware"))

import host_tools  # noqa: E402,F401  (the CPython stand-in for `micropython`, before shoe)
from host_tools.floor import mqtt, pg  # noqa: E402
from host_tools.sim.floor import (
    embedded_pg,  # noqa: E402
    mosquitto,  # noqa: E402
)
from host_tools.sim.floor.harness import Floor  # noqa: E402


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


class PageWatcher:
    """Reads the floor's server-sent events as a page does; notes when each eseq shows."""

    def __init__(self, url, login):
        import http.cookiejar
        from urllib.parse import urlencode

        self.url = url + "events"
        self.seen = {}  # shoe -> [(head_eseq, time)]
        self._stop = False
        # logged in as the page would be (the demo admin); the session cookie in a jar
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        self.opener.open(
            url + "login",
            urlencode({"username": login[0], "password": login[1]}).encode(),
            timeout=30,
        )
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self._stop:
            try:
                with self.opener.open(self.url, timeout=30) as r:
                    for line in r:
                        if self._stop:
                            return
                        if line.startswith(b"data: "):
                            t = time.time()
                            for row in json.loads(line[6:])["tables"]:
                                self.seen.setdefault(row["shoe"], []).append((row["head_eseq"], t))
            except Exception:
                time.sleep(0.2)

    def shown_at(self, shoe, eseq):
        for e, t in self.seen.get(shoe, ()):
            if e >= eseq:
                return t
        return None


def wait(cond, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if cond():
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def stored_heads(conn):
    return dict(conn.execute("SELECT shoe, max(eseq) FROM events GROUP BY shoe").fetchall())


def covers(conn, target):
    h = stored_heads(conn)
    return all(h.get(s, 0) >= e for s, e in target.items())


def inject(broker_url, floor, conn, n=100):
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    port = int(broker_url.rsplit(":", 1)[1])
    rows = conn.execute(
        "SELECT shoe, payload FROM events ORDER BY random() LIMIT %s", (n,)
    ).fetchall()
    shoes = sorted(floor.keys)
    msgs = []
    for i, (shoe, payload) in enumerate(rows):
        alt = bytearray(payload)
        alt[8 + i % 20] ^= 0x40
        other = shoes[(shoes.index(shoe) + 1) % len(shoes)]
        msgs += [
            (mqtt.topic(shoe, "events"), os.urandom(len(payload))),  # forged
            (mqtt.topic(shoe, "events"), bytes(alt)),  # altered
            (mqtt.topic(other, "events"), bytes(payload)),
        ]  # replayed elsewhere
    c = paho.Client(CallbackAPIVersion.VERSION2, client_id="intruder")
    c.connect("127.0.0.1", port)
    c.loop_start()
    for i in [c.publish(t, p, qos=1) for t, p in msgs]:
        i.wait_for_publish(30)
    c.loop_stop()
    c.disconnect()
    return [bytes(p) for _, p in msgs]


def run(label, args, broker_url=None, db_url=None, faults=False, restart=None):
    work = tempfile.mkdtemp(prefix="bench-floor-")
    out = {"run": label}
    t_setup = time.monotonic()
    with Floor(
        work,
        tables=args.tables,
        collectors=2,
        rate=args.rate,
        broker_url=broker_url,
        db_url=db_url,
        gap_timeout=60,
        processes=True,
        broker_engine=args.broker_engine,
    ) as f:
        out["setup_s"] = round(time.monotonic() - t_setup, 1)
        conn = pg.connect(f.db_url)
        page = PageWatcher(f.view.url, f.login)
        time.sleep(1.0)
        t0 = time.time()
        f.driver.start()
        injected = []
        if faults:
            time.sleep(args.seconds / 3)
            before = f.emitted()
            f.collectors[0].kill()
            done = wait(lambda: covers(conn, before), 120)
            out["collector_killed_catch_up_s"] = done and round(done, 2)
            time.sleep(max(0, t0 + args.seconds / 2 - time.time()))
            t_r = time.monotonic()
            (restart or f.broker.restart)()
            time.sleep(1.0)  # events sealed while the broker was away and coming back
            before = f.emitted()
            done = wait(lambda: covers(conn, before), 120)
            out["broker_restart_catch_up_s"] = done and round(time.monotonic() - t_r, 2)
            injected = inject(f.broker_url, f, conn)
            time.sleep(max(0, t0 + args.seconds - time.time()))
        else:
            time.sleep(args.seconds)
        f.driver.stop()
        t1 = time.time()
        final = f.emitted()
        done = wait(lambda: covers(conn, final), 120)
        out["drain_s"] = done and round(done, 2)
        total, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT (shoe, eseq)) FROM events"
        ).fetchone()
        sealed = sum(final.values())
        out["events"] = sealed
        out["events_per_s_sealed"] = round(sealed / (t1 - t0), 1)
        last = conn.execute("SELECT extract(epoch FROM max(received_at)) FROM events").fetchone()[
            0
        ]
        out["events_per_s_committed"] = round(sealed / (float(last) - t0), 1)
        out["lost"] = sealed - distinct
        out["stored_twice"] = total - distinct
        out["gateway_republished_on_request"] = f.gateway.republished
        if faults:
            out["injected"] = len(injected)
            out["alerts"] = conn.execute(
                "SELECT count(*) FROM alerts WHERE kind IN ('bad_mac','malformed')"
            ).fetchone()[0]
            stored = {bytes(r[0]) for r in conn.execute("SELECT payload FROM events")}
            bad = injected[0::3] + injected[1::3]  # forged and altered (never genuine)
            out["injected_stored"] = sum(1 for p in bad if p in stored)
            # replayed under another shoe's topic: its MAC fails with that shoe's key
            out["chain_not_ok_rows"] = conn.execute(
                "SELECT count(*) FROM events WHERE chain <> 'ok'"
            ).fetchone()[0]
        sent = [(s.shoe_id, e, t) for s in f.shoes for e, k, t in s.sent if t < t1 - 1]
        commits = {
            (r[0], r[1]): r[2].timestamp()
            for r in conn.execute("SELECT shoe, eseq, received_at FROM events")
        }
        c_lat = [commits[(s, e)] - t for s, e, t in sent if (s, e) in commits]
        p_lat = []
        for s, e, t in sent:
            shown = page.shown_at(s, e)
            if shown is not None:
                p_lat.append(shown - t)
        held = {}
        for sh, st in zip(f.shoes, f.stores):
            for e in st.events(sh.shoe_id):
                held[(sh.shoe_id, e["eseq"])] = e["received"]
        g_lat = [held[(s, e)] - t for s, e, t in sent if (s, e) in held]
        out["latency_gateway_store_ms_p50_p99"] = [
            round(pct(g_lat, 50) * 1000, 1),
            round(pct(g_lat, 99) * 1000, 1),
        ]
        out["latency_commit_ms_p50_p99"] = [
            round(pct(c_lat, 50) * 1000, 1),
            round(pct(c_lat, 99) * 1000, 1),
        ]
        out["latency_page_ms_p50_p99"] = [
            round(pct(p_lat, 50) * 1000, 1),
            round(pct(p_lat, 99) * 1000, 1),
        ]
        out["latency_samples"] = [len(c_lat), len(p_lat)]
        page._stop = True
    print(json.dumps(out), flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=500)
    ap.add_argument("--rate", type=float, default=1.0, help="events/s per table")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--mosquitto", action="store_true", help="also the clean run via Mosquitto")
    ap.add_argument(
        "--broker-engine",
        choices=("aedes", "amqtt"),
        default="aedes",
        help="the embedded broker of the main runs (aedes)",
    )
    ap.add_argument("--quick", action="store_true", help="50 tables for 10 s (make bench)")
    ap.add_argument("--clean-only", action="store_true", help="skip the run with faults")
    ap.add_argument(
        "--faults-mosquitto",
        action="store_true",
        help="also the run with faults through Mosquitto (restarted: persistence on)",
    )
    args = ap.parse_args(
        argv if argv is not None else sys.argv[1:] if __name__ == "__main__" else []
    )
    if args.quick or __name__ != "__main__":
        args.tables, args.seconds = 50, 10
    print(
        "bench_floor: %d tables x %.1f events/s for %.0f s, 2 collectors, %d CPUs"
        % (args.tables, args.rate, args.seconds, os.cpu_count())
    )
    pgs = embedded_pg.EmbeddedPostgres()
    db = pgs.start()
    try:
        e = args.broker_engine
        runs = (("clean/" + e, False),) + (() if args.clean_only else (("faults/" + e, True),))
        runs = () if args.faults_mosquitto else runs
        for i, (label, faults) in enumerate(runs):
            name = "bench_%d" % i
            c = pg.connect(db)
            c.execute("CREATE DATABASE %s" % name)
            c.close()
            base, _, q = db.partition("?")
            run(label, args, db_url=base.rsplit("/", 1)[0] + "/" + name + "?" + q, faults=faults)
        if args.mosquitto and mosquitto.find():
            with mosquitto.Mosquitto(tempfile.mkdtemp(prefix="bench-mq-")) as m:
                c = pg.connect(db)
                c.execute("CREATE DATABASE bench_mq")
                c.close()
                base, _, q = db.partition("?")
                run(
                    "clean/mosquitto",
                    args,
                    broker_url=m.url,
                    db_url=base.rsplit("/", 1)[0] + "/bench_mq?" + q,
                )
        if args.faults_mosquitto and mosquitto.find():
            with mosquitto.Mosquitto(tempfile.mkdtemp(prefix="bench-mq-")) as m:
                c = pg.connect(db)
                c.execute("CREATE DATABASE bench_mqf")
                c.close()
                base, _, q = db.partition("?")
                run(
                    "faults/mosquitto",
                    args,
                    broker_url=m.url,
                    faults=True,
                    restart=m.restart,
                    db_url=base.rsplit("/", 1)[0] + "/bench_mqf?" + q,
                )
    finally:
        pgs.stop()


if __name__ == "__main__":
    main()
