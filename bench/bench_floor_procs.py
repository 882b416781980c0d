"""Floor figures over processes (not a test): tables in groups of N per process, as on a floor.

    .venv/bin/python bench/bench_floor_procs.py [--tables 400] [--per-process 50] [--rate 5]
        [--seconds 30] [--broker amqtt,aedes,mosquitto,bridge:2] [--collectors 2] [--faults]
        [--drain 20] [--paced 30] [--per-lease] [--quick]

host_tools/sim/floor/procfloor.py: each table group is a process of its own (simulated shoes ->
ShoeLink -> per-table SQLite audit store -> one Gateway); the broker, every collector (`shoectl
collector`), the view (`shoectl floor`) and PostgreSQL 16 (pgserver) are separate processes.
Per broker, from one run each:
  live:   the shoes emit `rate` events/s each for `seconds`: committed events/s, lost and stored
          twice (checked against what every shoe sealed), commit latency (sealed at the shoe ->
          the row's received_at) and page latency (-> the floor view's SSE stream showed it)
          p50/p99, CPU seconds per role (where the limit is) and the machine's idle share;
  faults: (--faults) the same with collector-1 SIGKILLed at 1/3 and the broker restarted at 1/2
          (catch-up: until every event sealed before the fault is stored);
  drain:  (--drain S) the back office's ceiling: the broker is down while the shoes emit for S
          seconds (the gateways' stores fill, as in an outage), then it starts and the backlog
          flows through broker and collectors into PostgreSQL with no shoe sealing meanwhile:
          committed events/s and the CPU per role.
  paced:  (--paced S) the back office at a steady rate: the gateways are held while the shoes
          emit for S seconds (the stores fill), then they start, each publishing at most
          --publish-rate (default `rate`) events/s per table (Gateway publish_rate, `shoectl
          gateway --publish-rate`), so the broker, collectors, PostgreSQL and the view take
          tables x that events/s until the backlog is stored, with no shoe sealing meanwhile
          (on a floor the shoes' and links' CPU is on the tables' own hosts): committed
          events/s, lost and stored twice, latency from the gateway's (first) publish -> the
          row's received_at and -> the page, CPU per role; with --faults also the paced run
          with collector-1 SIGKILLed at 1/3 of the publishing and the broker restarted at 1/2
          (catch-up: until every event the gateways had handed to MQTT before the fault is
          stored).
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_floor import PageWatcher, pct, wait  # noqa: E402

import host_tools  # noqa: E402,F401
from host_tools.floor import pg  # noqa: E402
from host_tools.sim.floor import embedded_pg  # noqa: E402
from host_tools.sim.floor.procfloor import ProcFloor, cpu_seconds  # noqa: E402


def pg_pids(directory):
    """The postmaster of `directory` and its children (backends, WAL writer, ...)."""
    try:
        master = int((Path(directory) / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    out = [master]
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    out.append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    return out


def machine_idle():
    f = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    v = [int(x) for x in f]
    return v[3] + v[4], sum(v)  # idle + iowait, total (all CPUs)


class CPU:
    """CPU seconds per role between mark() and done()."""

    def __init__(self, floor, pgdir):
        self.floor, self.pgdir = floor, pgdir

    def _sample(self):
        roles = self.floor.processes()
        roles["postgresql"] = pg_pids(self.pgdir)
        return {r: {p: cpu_seconds(p) for p in pids} for r, pids in roles.items()}

    def mark(self):
        self.t0, self.s0, self.m0 = time.time(), self._sample(), machine_idle()

    def done(self):
        t, s, m = time.time(), self._sample(), machine_idle()
        out = {}
        for role, pids in s.items():
            used = 0.0
            for p, c in pids.items():
                if c is not None:
                    used += c - (self.s0.get(role, {}).get(p) or 0.0)
            out[role] = round(used / (t - self.t0), 2)  # cores used on average
        idle = (m[0] - self.m0[0]) / max(1, m[1] - self.m0[1])
        return {
            "cores_used": out,
            "machine_idle_share": round(idle, 2),
            "load_avg_1m": os.getloadavg()[0],
        }


def covers(conn, target):
    h = dict(conn.execute("SELECT shoe, max(eseq) FROM events GROUP BY shoe").fetchall())
    return all(h.get(s, 0) >= e for s, e in target.items())


def last_commit(conn):
    """When the last event was committed (epoch seconds)."""
    return float(
        conn.execute("SELECT extract(epoch FROM max(received_at)) FROM events").fetchone()[0]
    )


def commit_times(conn):
    """{(shoe, eseq): when it was committed (epoch seconds)}."""
    return {
        (r[0], r[1]): r[2].timestamp()
        for r in conn.execute("SELECT shoe, eseq, received_at FROM events")
    }


def emit_for(f, seconds, settle=2.0):
    """The shoes emit for `seconds` (after `settle` s: leases taken, states seen); -> what each
    sealed (emitted()), 1 s after they stopped."""
    time.sleep(settle)
    f.go()
    time.sleep(seconds)
    f.stop_driving()
    final = f.emitted()
    time.sleep(1.0)
    return final


def account(conn, f, final):
    """Every sealed event of every shoe, where it is at the end: committed in PostgreSQL, held
    in its gateway's audit store (not yet in PostgreSQL: a backlog), still in the shoe's outbox
    (not yet acknowledged: a backlog), or nowhere (lost). Stored twice: rows of one
    (shoe, eseq)."""
    total, distinct = conn.execute(
        "SELECT count(*), count(DISTINCT (shoe, eseq)) FROM events"
    ).fetchone()
    have = {}
    for s, e in conn.execute("SELECT shoe, eseq FROM events"):
        have.setdefault(s, set()).add(e)
    missing = {
        s: [e for e in range(1, n + 1) if e not in have.get(s, ())] for s, n in final.items()
    }
    missing = {s: m for s, m in missing.items() if m}
    held = f.held(missing) if missing else {}
    in_store = sum(len(h["in_store"]) for h in held.values())
    in_outbox = sum(len(h["in_outbox"]) for h in held.values())
    not_in_pg = sum(len(m) for m in missing.values())
    extra = sum(len([e for e in have.get(s, ()) if e < 1 or e > n]) for s, n in final.items())
    return {
        "sealed": sum(final.values()),
        "committed": sum(final.values()) - not_in_pg,
        "not_in_postgresql": not_in_pg,
        "held_in_gateway_stores": in_store,
        "held_in_shoe_outboxes": in_outbox,
        "lost": not_in_pg - in_store - in_outbox,
        "stored_twice": total - distinct,
        "stored_not_sealed": extra,
    }


def stores_dir(args):
    if not args.stores_on_tmpfs:
        return None
    d = tempfile.mkdtemp(prefix="bench-procs-stores-", dir="/dev/shm")
    _tmp.append(d)
    return d


_tmp = []


def floor(args, prefix, broker, db, **kw):
    """The ProcFloor of a run: --tables, --per-process, --collectors, --rate, --per-lease and
    --stores-on-tmpfs from `args`, the rest as given."""
    return ProcFloor(
        tempfile.mkdtemp(prefix=prefix),
        tables=args.tables,
        per_process=args.per_process,
        collectors=args.collectors,
        rate=args.rate,
        broker=broker,
        db_url=db,
        collector_args=["--per-lease"] if args.per_lease else [],
        stores_dir=stores_dir(args),
        **kw,
    )


def new_db(server, name):
    c = pg.connect(server)
    c.execute("DROP DATABASE IF EXISTS %s" % name)
    c.execute("CREATE DATABASE %s" % name)
    c.close()
    base, _, q = server.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + ("?" + q if q else "")


def run(label, args, broker, server, pgdir, faults=False):
    out = {
        "run": label,
        "broker": broker,
        "tables": args.tables,
        "per_process": args.per_process,
        "rate": args.rate,
        "collectors": args.collectors,
    }
    db = new_db(server, "procs_%s" % label.replace("/", "_").replace(":", "_"))
    t_setup = time.monotonic()
    with floor(
        args,
        "bench-procs-",
        broker,
        db,
        sample=True,
        table_system=table_system(args),
        cprofile=args.cprofile,
    ) as f:
        out["processes"] = {r: len(p) for r, p in f.processes().items()}
        out["setup_s"] = round(time.monotonic() - t_setup, 1)
        conn = pg.connect(f.db_url)
        page = PageWatcher(f.view_url, f.login)
        cpu = CPU(f, pgdir)
        time.sleep(2.0)  # leases taken, states seen
        cpu.mark()
        t0 = time.time()
        f.go()
        if faults:  # catch-up: what was sealed before the kill, and until 1 s after the restart
            inject_faults(f, conn, out, t0, args.seconds, f.emitted, after_restart_s=1.0)
            time.sleep(max(0, t0 + args.seconds - time.time()))
        else:
            time.sleep(args.seconds)
        ts = f.stop_driving()
        t1 = time.time()
        out["profile"] = cpu.done()
        if f.table_system:
            out["table_system"] = dict(
                ts, rounds_per_table_hour=round(ts["rounds"] / args.tables / (t1 - t0) * 3600, 1)
            )
        final = f.emitted()
        done = wait(lambda: covers(conn, final) or f.exits(), args.wait)
        out["table_groups_died"] = f.exits()
        out["drain_after_stop_s"] = done and round(done, 2)
        out.update(account(conn, f, final))
        out["events_per_s_sealed"] = round(out["sealed"] / (t1 - t0), 1)
        out["events_per_s_committed"] = round(out["sealed"] / (last_commit(conn) - t0), 1)
        in_window = conn.execute(
            "SELECT count(*) FROM events WHERE received_at <= to_timestamp(%s)", (t1,)
        ).fetchone()[0]
        out["events_per_s_committed_in_window"] = round(in_window / (t1 - t0), 1)
        commits = commit_times(conn)
        page._stop = True
        conn.close()
        sample = f.dir / "sample.json"
        if sample.exists():
            out["table_group_profile"] = json.loads(sample.read_text())
    latencies(out, [(s, e, t) for s, e, t in f.sent() if t < t1 - 1], commits, page)
    print(json.dumps(out), flush=True)
    return out


def inject_faults(f, conn, out, t0, span, heads, after_restart_s):
    """collector-1 SIGKILLed at span/3 after t0 and the broker restarted at span/2. Catch-up:
    until every event `heads()` ({shoe: eseq}) gave at the kill is stored, and at the restart
    (or `after_restart_s` after it: None, just before it)."""
    time.sleep(max(0, t0 + span / 3 - time.time()))
    before = heads()
    f.kill_collector(0)
    t_k = time.monotonic()
    done = wait(lambda: covers(conn, before), 120)
    out["collector_killed_catch_up_s"] = done and round(time.monotonic() - t_k, 2)
    time.sleep(max(0, t0 + span / 2 - time.time()))
    before = heads() if after_restart_s is None else None
    t_r = time.monotonic()
    f.restart_broker()
    if before is None:
        time.sleep(after_restart_s)
        before = heads()
    done = wait(lambda: covers(conn, before), 120)
    out["broker_restart_catch_up_s"] = done and round(time.monotonic() - t_r, 2)


def latencies(out, events, commits, page):
    """p50/p99 from each (shoe, eseq, t) of `events` to its commit (the row's received_at) and
    to the page's SSE stream showing it."""
    c_lat = [commits[(s, e)] - t for s, e, t in events if (s, e) in commits]
    p_lat = [x - t for s, e, t in events for x in [page.shown_at(s, e)] if x is not None]
    out["commit_latency_s_p50_p99"] = [round(pct(c_lat, 50), 3), round(pct(c_lat, 99), 3)]
    out["page_latency_s_p50_p99"] = [round(pct(p_lat, 50), 3), round(pct(p_lat, 99), 3)]
    out["latency_samples"] = [len(c_lat), len(p_lat)]


def table_system(args):
    return {"decide_s": args.decide, "gap_s": args.gap} if args.table_system else None


def drain(args, broker, server, pgdir):
    """The broker away while the shoes emit; then the backlog alone through the back office."""
    out = {
        "run": "drain/" + broker,
        "tables": args.tables,
        "per_process": args.per_process,
        "rate": args.rate,
        "collectors": args.collectors,
        "emit_s": args.drain,
    }
    db = new_db(server, "procs_drain_%s" % broker.replace(":", "_"))
    with floor(args, "bench-drain-", broker, db, view=False) as f:
        conn = pg.connect(f.db_url)
        time.sleep(2.0)  # leases taken, states seen
        f.broker.stop()  # the outage: the gateways keep storing
        final = emit_for(f, args.drain, settle=0)
        cpu = CPU(f, pgdir)
        t0 = time.time()
        f.restart_broker()
        cpu.mark()
        stored0 = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        done = wait(lambda: covers(conn, final), 300)
        out["profile"] = cpu.done()
        out["drain_s"] = done and round(done, 2)
        out.update(account(conn, f, final))
        out["backlog"] = out["sealed"] - stored0
        out["events_per_s_committed"] = round(out["backlog"] / (last_commit(conn) - t0), 1)
        conn.close()
    print(json.dumps(out), flush=True)
    return out


def paced(args, broker, server, pgdir, faults=False):
    """The stores filled with the gateways held; then published at --publish-rate per table;
    with faults, collector-1 SIGKILLed at 1/3 of the publishing and the broker restarted at 1/2
    (catch-up: until every event handed to MQTT before the fault is stored)."""
    rate = args.publish_rate or args.rate
    out = {
        "run": ("paced+faults/" if faults else "paced/") + broker,
        "tables": args.tables,
        "per_process": args.per_process,
        "rate": args.rate,
        "collectors": args.collectors,
        "emit_s": args.paced,
        "publish_rate": rate,
    }
    db = new_db(
        server, "procs_paced%s_%s" % ("_faults" if faults else "", broker.replace(":", "_"))
    )
    with floor(
        args,
        "bench-paced-",
        broker,
        db,
        publish_rate=rate,
        hold=True,
    ) as f:
        conn = pg.connect(f.db_url)
        page = PageWatcher(f.view_url, f.login)
        final = emit_for(f, args.paced)
        cpu = CPU(f, pgdir)
        cpu.mark()
        t0 = time.time()
        f.publish()
        if faults:  # catch-up: what the gateways had handed to MQTT before each fault
            span = args.paced * args.rate / rate  # how long the publishing takes
            inject_faults(f, conn, out, t0, span, f.handed, after_restart_s=None)
        done = wait(lambda: covers(conn, final), max(300, 4 * args.paced))
        out["profile"] = cpu.done()
        out["publish_s"] = done and round(done, 2)
        out.update(account(conn, f, final))
        out["events_per_s_committed"] = round(out["committed"] / (last_commit(conn) - t0), 1)
        commits = commit_times(conn)
        time.sleep(1.0)  # the page's last updates
        page._stop = True
        conn.close()
    latencies(out, f.published(), commits, page)
    print(json.dumps(out), flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=400)
    ap.add_argument(
        "--per-process", type=int, default=50, help="tables per process (1 on a real floor)"
    )
    ap.add_argument("--rate", type=float, default=5.0, help="events/s per table")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--collectors", type=int, default=2)
    ap.add_argument(
        "--broker",
        default="aedes",
        help="comma-separated: aedes, amqtt, "
        "mosquitto, bridge:K (K edge Mosquittos bridged to a core)",
    )
    ap.add_argument("--faults", action="store_true", help="also the run with faults")
    ap.add_argument("--clean-only", action="store_true", help="skip the live run without faults")
    ap.add_argument(
        "--drain",
        type=float,
        default=0,
        metavar="S",
        help="also the backlog run: the shoes emit S seconds while the broker is down",
    )
    ap.add_argument(
        "--paced",
        type=float,
        default=0,
        metavar="S",
        help="also the paced run: the shoes emit S seconds with the gateways held, then the "
        "gateways publish it at --publish-rate per table",
    )
    ap.add_argument(
        "--paced-only", action="store_true", help="only the paced runs (no live, no drain)"
    )
    ap.add_argument(
        "--publish-rate",
        type=float,
        metavar="R",
        help="--paced: each gateway's cap, events/s per table (default: --rate)",
    )
    ap.add_argument("--per-lease", action="store_true", help="collectors --per-lease")
    ap.add_argument(
        "--stores-on-tmpfs",
        action="store_true",
        help="the tables' SQLite audit "
        "stores in /dev/shm: on a floor each table's store is on its own host's disk, "
        "here N tables' fsyncs would share one",
    )
    ap.add_argument(
        "--table-system",
        action="store_true",
        help="the rounds opened and decided "
        "by a table-system process per group through each table's gateway API "
        "(open_round, decisions, as `shoectl table`); --rate is then the dealer's "
        "pace (cards/s)",
    )
    ap.add_argument(
        "--decide",
        type=float,
        default=5.0,
        help="--table-system: seconds from the deal's end to the decisions",
    )
    ap.add_argument(
        "--gap",
        type=float,
        default=15.0,
        help="--table-system: seconds from a result to the next round",
    )
    ap.add_argument(
        "--wait",
        type=float,
        default=180,
        help="seconds to wait after the shoes "
        "stop for every sealed event to reach PostgreSQL, then account for the rest",
    )
    ap.add_argument(
        "--cprofile",
        action="store_true",
        help="profile the first table group "
        "with cProfile in every thread (own time per function) instead of sampling",
    )
    ap.add_argument("--quick", action="store_true", help="20 tables in 4 processes for 5 s")
    if argv is None:  # `make bench` (bench/run.py imports this): the quick run
        argv = sys.argv[1:] if __name__ == "__main__" else ["--quick"]
    args = ap.parse_args(argv)
    if args.quick:
        args.tables, args.per_process, args.seconds, args.rate = 20, 5, 5, 2
    print(
        "bench_floor_procs: %d tables in processes of %d x %.1f events/s for %.0f s, "
        "%d collectors, %d CPUs"
        % (
            args.tables,
            args.per_process,
            args.rate,
            args.seconds,
            args.collectors,
            os.cpu_count(),
        ),
        flush=True,
    )
    pgs = embedded_pg.EmbeddedPostgres()
    server = pgs.start()
    results = []
    try:
        for broker in args.broker.split(","):
            if args.paced_only:
                results.append(paced(args, broker, server, pgs.directory))
                if args.faults:
                    results.append(paced(args, broker, server, pgs.directory, faults=True))
                continue
            if not args.clean_only:
                results.append(run("live/" + broker, args, broker, server, pgs.directory))
            if args.faults:
                results.append(
                    run("faults/" + broker, args, broker, server, pgs.directory, faults=True)
                )
            if args.drain:
                results.append(drain(args, broker, server, pgs.directory))
            if args.paced:
                results.append(paced(args, broker, server, pgs.directory))
                if args.faults:
                    results.append(paced(args, broker, server, pgs.directory, faults=True))
    finally:
        pgs.stop()
        import shutil

        for d in _tmp:
            shutil.rmtree(d, ignore_errors=True)
    return results


if __name__ == "__main__":
    main()
