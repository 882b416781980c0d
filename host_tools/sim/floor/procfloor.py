"""A floor spread over processes as on a real one: tables in groups of N per process.

    with ProcFloor(workdir, tables=400, per_process=50, broker="aedes", collectors=2) as f:
        f.go(); ...; f.stop_driving(); f.emitted(); f.sent(); f.kill_collector(0)
    ProcFloor(..., publish_rate=R): each gateway publishes at most R events/s per table.
    f.pids: every process it started (all exited after stop()).

Each table group is `python -m host_tools.sim.floor.procfloor group ...`: N simulated shoes
(simshoe.SimShoe), their ShoeLinks and SQLite audit stores and one Gateway (one MQTT connection)
for the N tables; production runs one per table (N = 1). The broker (aedes, the default; amqtt,
Mosquitto, or edge Mosquittos bridged to a core: brokers.py), every collector (`shoectl
collector`), the view (`shoectl floor`) and PostgreSQL (pgserver, unless db_url is given) are
processes of their own.
A group takes commands on stdin, one per line, and answers on stdout: `go` (start emitting),
`publish` (with --hold: start the gateway, which until then has published nothing), `handed`
({shoe: highest eseq its gateway has handed to MQTT}),
`heads` ({shoe: highest eseq sealed}), `stop` (stop emitting), `held {shoe: [eseq]}` (which of
those its gateway's audit store and the shoe's outbox still hold: the bench tells a backlog from
a loss), `quit` (write the sent times to sent-<name>.json and when the gateway first published each
event to published-<name>.json, close, exit). End of input is `quit`:
a group never outlives its parent's pipe.
With table_system= the shoes are driven (SimShoe(driven=True): a round is opened and decided by
commands) and each table's gateway serves its API (tableapi.TableAPI on DIR/api/<shoe>.sock);
one more process per group (`procfloor tablesys`) is the table system: per table a TableClient
on a GatewayLink (role table) opens rounds, waits for the deal, decides, waits for the result,
as `shoectl table` does; the shoes' `rate` is then the dealer's pace (cards/s).
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from host_tools import events as E
from host_tools.floor import keyring, pg
from host_tools.sim.floor import embedded_pg, localbroker
from host_tools.sim.floor.brokers import broker_for

PY = sys.executable


class _Group:
    """The parent's handle on one table-group process."""

    def __init__(self, f, name, shoes, broker_url=None, seed=0, sample=None, argv=None):
        self.name = name
        self.shoes = shoes
        argv = argv or (
            [
                "group",
                "--dir",
                str(f.dir),
                "--name",
                name,
                "--broker",
                broker_url,
                "--rate",
                str(f.rate),
                "--seed",
                str(seed),
                "--shoes",
                ",".join(shoes),
                "--stores",
                str(f.stores_dir),
            ]
            + ((["--cprofile"] if f.cprofile else ["--sample"]) + [str(sample)] if sample else [])
            + (["--api"] if f.table_system else [])
            + (["--publish-rate", str(f.publish_rate)] if f.publish_rate else [])
            + (["--hold"] if f.hold else [])
        )
        self.proc = subprocess.Popen(
            [PY, "-m", "host_tools.sim.floor.procfloor"] + argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            stderr=open(f.dir / ("%s.err" % name), "w"),
        )
        self._lock = threading.Lock()

    def ask(self, cmd):
        """One command, its one-line JSON answer (a group that died: RuntimeError)."""
        with self._lock:
            self.proc.stdin.write(cmd + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("table group %s died (exit %s)" % (self.name, self.proc.poll()))
        return json.loads(line)


class ProcFloor:
    def __init__(
        self,
        workdir,
        tables=100,
        per_process=50,
        collectors=2,
        rate=1.0,
        broker=None,
        db_url=None,
        view=True,
        seed=0,
        collector_args=(),
        stores_dir=None,
        sample=False,
        table_system=None,
        cprofile=False,
        publish_rate=None,
        hold=False,
    ):
        # stores_dir: where the tables' SQLite audit stores go (default workdir/tables); the
        # bench can put them on tmpfs: on a floor each table's store is on its own host's disk
        self.dir = Path(workdir)
        self.n = tables
        self.per_process = max(1, per_process)
        self.n_collectors = collectors
        self.rate = rate
        self.broker_name = broker
        self.db_url = db_url
        self.want_view = view
        self.seed = seed
        self.collector_args = list(collector_args)
        self.stores_dir = Path(stores_dir) if stores_dir else self.dir / "tables"
        self.sample = sample  # a sampling profile of the first table group (sample.json)
        # table_system {"decide_s": S, "gap_s": S}: the rounds are opened and decided by a
        # table-system process per group through each table's gateway API (GatewayLink); the
        # shoes' own pace (`rate`) is then only the dealer's (one card per step)
        self.table_system = table_system
        self.cprofile = cprofile  # sample.json from cProfile in every thread (not sampling)
        self.publish_rate = publish_rate  # each gateway's cap, events/s per table (Gateway)
        self.hold = hold  # the gateways start only at publish(): the stores fill meanwhile
        self.tablesys = []
        self.broker = None
        self.broker_url = None
        self.pg = None
        self.groups = []
        self.collectors = []
        self.view = None
        self.view_url = None
        self.login = None  # (user, password) of the view's admin, made per run
        self.pids = []
        self.shoe_ids = ["T%04d" % (i + 1) for i in range(tables)]

    # ---- life cycle -------------------------------------------------------------------------
    def start(self):
        from host_tools.sim.floor.simshoe import make_keys

        self.dir.mkdir(parents=True, exist_ok=True)
        if self.broker_name and self.broker_name.startswith("mqtt://"):
            self.broker_url = self.broker_name
        else:
            self.broker = broker_for(self.broker_name, self.dir / "broker")
            self.broker_url = self.broker.start()
            self._note_broker()
        if not self.db_url:
            self.pg = embedded_pg.EmbeddedPostgres()
            self.db_url = self.pg.start()
        pg.migrate(self.db_url)
        for i, sid in enumerate(self.shoe_ids):
            keyring.write(self.dir / "keys", sid, make_keys(seed=self.seed * 100003 + i))
        for i in range(self.n_collectors):
            self.start_collector(i)
        edges = getattr(self.broker, "edge_urls", None) or [self.broker_url]
        for g, lo in enumerate(range(0, self.n, self.per_process)):
            grp = _Group(
                self,
                "gw-p%03d" % g,
                self.shoe_ids[lo : lo + self.per_process],
                edges[g % len(edges)],
                self.seed * 7919 + g,
                sample=self.dir / "sample.json" if self.sample and g == 0 else None,
            )
            self.groups.append(grp)
            self.pids.append(grp.proc.pid)
        for grp in self.groups:  # each answers once its links and gateway are up
            r = grp.ask("ready")
            assert r == "ready", r
        if self.table_system:
            ts = self.table_system
            for g, grp in enumerate(self.groups):
                t = _Group(
                    self,
                    "ts-p%03d" % g,
                    grp.shoes,
                    argv=[
                        "tablesys",
                        "--dir",
                        str(self.dir),
                        "--shoes",
                        ",".join(grp.shoes),
                        "--decide",
                        str(ts.get("decide_s", 5.0)),
                        "--gap",
                        str(ts.get("gap_s", 10.0)),
                        "--seed",
                        str(self.seed * 7919 + g),
                    ],
                )
                self.tablesys.append(t)
                self.pids.append(t.proc.pid)
            for t in self.tablesys:  # each answers once its API clients are logged in
                r = t.ask("ready")
                assert r == "ready", r
        if self.want_view:
            from host_tools.floor.auth import run_admin

            # the view requires a login: one admin with a password made for this run (f.login)
            self.login = run_admin(self.dir / "floor-users.json")[1]
            port = localbroker.free_port()
            self.view = subprocess.Popen(
                [
                    PY,
                    "-m",
                    "host_tools",
                    "floor",
                    "--db",
                    self.db_url,
                    "--users",
                    str(self.dir / "floor-users.json"),
                    "--http",
                    "127.0.0.1:%d" % port,
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            self.pids.append(self.view.pid)
            line = self.view.stdout.readline()
            self.view_url = line.split()[-1] if "floor view" in line else None
            if not self.view_url:
                raise RuntimeError("the floor view did not start: %r" % line)
        return self

    def _note_broker(self):
        procs = getattr(self.broker, "procs", None) or [getattr(self.broker, "proc", None)]
        self.pids += [p.pid for p in procs if p is not None and p.pid not in self.pids]

    def start_collector(self, i):
        p = subprocess.Popen(
            [
                PY,
                "-m",
                "host_tools",
                "collector",
                "--broker",
                self.broker_url,
                "--db",
                self.db_url,
                "--keys",
                str(self.dir / "keys"),
                "--name",
                "collector-%d" % (i + 1),
                "--no-migrate",
            ]
            + self.collector_args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.pids.append(p.pid)
        if i < len(self.collectors):
            self.collectors[i] = p
        else:
            self.collectors.append(p)
        return p

    def restart_broker(self):
        self.broker.restart()
        self._note_broker()

    def kill_collector(self, i):
        self.collectors[i].send_signal(signal.SIGKILL)
        self.collectors[i].wait()

    def go(self):
        for g in self.groups + self.tablesys:
            g.ask("go")

    def publish(self):
        """hold=True: start every group's gateway (publishing what its stores hold)."""
        for g in self.groups:
            g.ask("publish")

    def handed(self):
        """{shoe: highest eseq its gateway has handed to MQTT so far}."""
        out = {}
        for g in self.groups:
            out.update(g.ask("handed"))
        return out

    def stop_driving(self):
        """Stop opening rounds (the table systems) and dealing (the shoes). -> the table
        systems' figures {"rounds", "commands", "errors"} summed."""
        out = {"rounds": 0, "commands": 0, "errors": {}}
        for t in self.tablesys:
            r = t.ask("stop")
            out["rounds"] += r.get("rounds", 0)
            out["commands"] += r.get("commands", 0)
            for k, v in r.get("errors", {}).items():
                out["errors"][k] = out["errors"].get(k, 0) + v
        for g in self.groups:
            g.ask("stop")
        return out

    def held(self, missing):
        """Where events that are not in PostgreSQL are: `missing` {shoe: [eseq]} -> {shoe:
        {"in_store": [eseq held in the gateway's audit store], "in_outbox": [eseq the shoe
        still holds unacknowledged], "sealed", "published"}} from every table group."""
        out = {}
        for g in self.groups:
            mine = {s: missing.get(s, []) for s in g.shoes}
            out.update(g.ask("held " + json.dumps(mine)))
        return out

    def emitted(self):
        out = {}
        for g in self.groups:
            out.update(g.ask("heads"))
        return out

    def exits(self):
        """{group name: exit code} of table groups that are no longer running (None: running)."""
        return {g.name: g.proc.poll() for g in self.groups if g.proc.poll() is not None}

    def processes(self):
        """{role: [pid]} of what is running (for the CPU figures)."""
        out = {
            "tables+gateways": [g.proc.pid for g in self.groups if g.proc.poll() is None],
            "table systems": [t.proc.pid for t in self.tablesys if t.proc.poll() is None],
            "collectors": [c.pid for c in self.collectors if c.poll() is None],
        }
        procs = getattr(self.broker, "procs", None) or [getattr(self.broker, "proc", None)]
        out["broker"] = [p.pid for p in procs if p is not None and p.poll() is None]
        if self.view is not None:
            out["view"] = [self.view.pid]
        return out

    def sent(self):
        """[(shoe, eseq, sealed at)] of every group (after stop(): the groups write them)."""
        return self._written("sent")

    def published(self):
        """[(shoe, eseq, first handed to MQTT at)] of every group (after stop())."""
        return self._written("published")

    def _written(self, what):
        out = []
        for g in self.groups:
            f = self.dir / ("%s-%s.json" % (what, g.name))
            if f.exists():
                out += [tuple(x) for x in json.loads(f.read_text())]
        return out

    def stop(self):
        for g in self.tablesys + self.groups:  # all at once: each closes its links in parallel
            if g.proc.poll() is None:
                try:
                    g.proc.stdin.write("quit\n")
                    g.proc.stdin.close()
                except OSError:
                    pass
        deadline = time.monotonic() + 30
        for g in self.tablesys + self.groups:
            try:
                g.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for p in (
            [g.proc for g in self.tablesys + self.groups]
            + self.collectors
            + ([self.view] if self.view else [])
        ):
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            for s in (p.stdout, p.stdin):
                if s:
                    s.close()
        if self.broker:
            self.broker.stop()
        if self.pg:
            self.pg.stop()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()


class Sampler:
    """A sampling profiler for one table group (the bench's `--sample`): every `every` s, each
    thread's innermost frame (file:function) is counted, busy frames only (a thread waiting in a
    lock, a select or a sleep is not using the CPU). -> {frame: share of busy samples}."""

    IDLE = {
        "wait",
        "_wait_for_tstate_lock",
        "select",
        "poll",
        "sleep",
        "get",
        "readline",
        "acquire",
        "read",
        "_read_ready",
        "recv",
        "loop_forever",
        "_loop",
        "accept",
        "_exactly",
        "_group",
        "_tablesys",
    }

    def __init__(self, every=0.005):
        self.every = every
        self.counts = {}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._t.start()
        return self

    def _run(self):
        me = threading.get_ident()
        while not self._stop.wait(self.every):
            for tid, fr in sys._current_frames().items():
                if tid == me or fr.f_code.co_name in self.IDLE:
                    continue
                where = []
                f = fr
                while f is not None and len(where) < 3:
                    where.append("%s:%s" % (Path(f.f_code.co_filename).name, f.f_code.co_name))
                    f = f.f_back
                k = " < ".join(where)
                self.counts[k] = self.counts.get(k, 0) + 1

    def stop(self):
        self._stop.set()
        total = sum(self.counts.values()) or 1
        top = sorted(self.counts.items(), key=lambda kv: -kv[1])[:15]
        return {"samples": total, "top": [(k, round(v / total, 3)) for k, v in top]}


class ThreadProfiles:
    """cProfile in every thread started after start() (and this one), timed by each thread's
    CPU time (a thread waiting on a lock, a socket or the GIL counts nothing): -> the functions
    with the most own CPU time (tottime), as shares of all of it, from reset() to stop()."""

    def __init__(self):
        self.profiles = []

    def start(self):
        import cProfile

        def first(*_):
            sys.setprofile(None)
            p = cProfile.Profile(time.thread_time)  # CPU time: a wait counts nothing
            self.profiles.append(p)
            p.enable()

        threading.setprofile(first)
        first()
        return self

    def reset(self):
        for p in list(self.profiles):
            p.clear()

    def stop(self):
        import pstats

        stats = None
        for p in list(self.profiles):
            p.create_stats()
            if p.stats:
                stats = pstats.Stats(p) if stats is None else (stats.add(p) or stats)
        if stats is None:
            return {"top": []}
        rows = [
            (("%s:%d:%s" % (Path(f).name, ln, fn)), tt, nc)
            for (f, ln, fn), (cc, nc, tt, ct, callers) in stats.stats.items()
        ]
        total = sum(r[1] for r in rows) or 1.0
        rows.sort(key=lambda r: -r[1])
        return {
            "profiler": "cProfile",
            "own_seconds": round(total, 2),
            "top": [(k, round(tt / total, 3), nc) for k, tt, nc in rows[:25]],
        }


def cpu_seconds(pid):
    """utime + stime of a process and its waited-for children, in seconds (Linux /proc)."""
    try:
        f = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return sum(int(x) for x in f[11:15]) / tick


# ---- the table-group process --------------------------------------------------------------------
def _group(argv):
    import argparse

    ap = argparse.ArgumentParser(prog="procfloor group")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--broker", required=True)
    ap.add_argument("--shoes", required=True)
    ap.add_argument("--rate", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stores", required=True)
    ap.add_argument("--sample", help="write a sampling profile of this process here at quit")
    ap.add_argument("--cprofile", help="as --sample, with cProfile in every thread (slower)")
    ap.add_argument(
        "--api",
        action="store_true",
        help="driven shoes, each table's gateway API "
        "on DIR/api/<shoe>.sock (its key beside it): a table system opens the rounds",
    )
    ap.add_argument("--publish-rate", type=float, help="the gateway's cap (events/s per table)")
    ap.add_argument("--hold", action="store_true", help="start the gateway at `publish` only")
    a = ap.parse_args(argv)
    profiles = ThreadProfiles().start() if a.cprofile else None
    import host_tools  # noqa: F401  (the CPython stand-in for `micropython`, before shoe)
    from host_tools import keys as keyfile
    from host_tools.audit import AuditStore
    from host_tools.floor.gateway import Gateway
    from host_tools.link import ShoeLink
    from host_tools.sim.floor.simshoe import FloorDriver, SimShoe

    d = Path(a.dir)
    shoes, links, stores, apis = [], [], [], []
    gw = Gateway(
        a.broker, a.name, cursor_path=d / ("%s.json" % a.name), publish_rate=a.publish_rate
    )
    first_published = {}  # (shoe, eseq) -> when the gateway first handed it to MQTT
    gw.trace = lambda shoe, eseq: first_published.setdefault((shoe, eseq), time.time())
    for i, sid in enumerate(a.shoes.split(",")):
        _, k = keyfile.from_file(d / "keys" / ("%s.json" % sid))
        k = {n: bytes.fromhex(v) for n, v in k.items()}
        shoe = SimShoe(sid, k, seed=a.seed * 1009 + i, driven=a.api)
        store = AuditStore(Path(a.stores) / ("%s.sqlite" % sid))
        link = ShoeLink(
            "sim://" + sid,
            k["shoe"],
            audit=store,
            open_port=lambda u, s=shoe: s.open_port(u, 0.2),
            read_timeout=0.2,
        )
        link.start()
        gw.add(sid, link, store)
        if a.api:
            from host_tools.floor.tableapi import TableAPI
            from host_tools.link import apiwire

            (d / "api").mkdir(exist_ok=True)
            sock = d / "api" / ("%s.sock" % sid)
            secret = apiwire.new_secret_file(str(sock)[:-5] + ".key")
            apis.append(TableAPI(link, secret, unix_path=sock).start())
        shoes.append(shoe)
        links.append(link)
        stores.append(store)
    if not a.hold:
        gw.start()
    driver = FloorDriver(shoes, rate=a.rate, seed=a.seed)
    sampler = None
    say = lambda x: (sys.stdout.write(json.dumps(x) + "\n"), sys.stdout.flush())  # noqa: E731
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "ready":
            say("ready")
        elif cmd == "go":
            sampler = Sampler().start() if a.sample else None
            if profiles:
                profiles.reset()
            driver.start()
            say("going")
        elif cmd == "publish":
            if gw.client is None:
                gw.start()
            say("publishing")
        elif cmd == "handed":
            handed = {}
            for sid, e in list(first_published):
                handed[sid] = max(handed.get(sid, 0), e)
            say(handed)
        elif cmd == "heads":
            say({s.shoe_id: s.store.eseq for s in shoes})
        elif cmd == "stop":
            driver.stop()
            if sampler:
                Path(a.sample).write_text(json.dumps(sampler.stop()))
            if profiles:
                Path(a.cprofile).write_text(json.dumps(profiles.stop()))
            say("stopped")
        elif cmd.startswith("held "):
            say(_held(shoes, gw, json.loads(cmd[5:])))
        elif cmd == "quit":
            break
        else:
            say({"error": "unknown command %r" % cmd[:40]})
    driver.stop()
    for api in apis:
        api.stop()
    sent = [(s.shoe_id, e, t) for s in shoes for e, _, t in s.sent]
    (d / ("sent-%s.json" % a.name)).write_text(json.dumps(sent))
    gw.stop()
    published = [(s, e, t) for (s, e), t in first_published.items()]
    (d / ("published-%s.json" % a.name)).write_text(json.dumps(published))
    closing = [threading.Thread(target=link.close) for link in links]
    for t in closing:
        t.start()
    for t in closing:
        t.join()
    for s in stores:
        s.close()
    say("bye")


def _held(shoes, gw, missing):
    """For each shoe, which of the `missing` eseqs its gateway's audit store holds and which
    its own outbox still holds unacknowledged (the rest are nowhere: lost)."""
    out = {}
    for s in shoes:
        want = sorted(int(e) for e in missing.get(s.shoe_id, []))
        t = gw.tables.get(s.shoe_id)
        have = t.store.stored_of(s.shoe_id, want)
        outbox, sealed = s.unacknowledged()
        out[s.shoe_id] = {
            "in_store": sorted(have),
            "in_outbox": sorted(e for e in want if e in outbox and e not in have),
            "sealed": sealed,
            "published": t.cursor,
        }
    return out


# ---- the table system of one group: rounds through each table's gateway API ------------------
class TableClient:
    """One table's table system: opens a round (random seats and wagers), waits until it is
    dealt, sends the decisions (raise 1x ante or fold) `decide_s` later, waits for the result,
    and opens the next `gap_s` after it. Through GatewayLink (role table), as `shoectl table`."""

    def __init__(self, url, seed, decide_s, gap_s, stop):
        import random

        self.url = url
        self.rng = random.Random(seed)
        self.decide_s, self.gap_s = decide_s, gap_s
        self.stop = stop
        self.rounds = 0
        self.commands = 0
        self.errors = {}
        self.link = None

    def open(self, deadline):
        """Log in (again until `deadline`: a loaded machine can miss the API's login time)."""
        from host_tools.errors import ShoeError
        from host_tools.link.viagateway import GatewayLink

        while True:
            try:
                self.link = GatewayLink(self.url, role="table").open(
                    timeout=max(1.0, deadline - time.monotonic())
                )
                return self
            except ShoeError as e:
                if time.monotonic() >= deadline:
                    sys.stderr.write("%s: %s\n" % (self.url, e))
                    return self
                self._error(e)

    def _error(self, e):
        k = getattr(e, "reason", None) or type(e).__name__
        self.errors[k] = self.errors.get(k, 0) + 1

    def _command(self, kind, body):
        from host_tools.errors import ShoeError

        while not self.stop.is_set():
            self.commands += 1
            try:
                return self.link.command(kind, body, timeout=15.0)
            except ShoeError as e:
                self._error(e)
                if e.reason in ("round_open", "not_dealt"):
                    return e.reason  # an earlier try of this command did it
                if self.link.fatal:
                    return None
                self.stop.wait(0.5)
        return None

    def _until(self, kind, rnd):
        while not self.stop.is_set():
            ev = self.link.next_event(0.2)
            if ev and ev[0] == kind and isinstance(ev[1], dict) and ev[1].get("round") == rnd:
                return True
        return False

    def run(self):
        while not self.stop.is_set() and not self.link.fatal:
            seats = sorted(self.rng.sample(range(1, 7), self.rng.randint(1, 6)))
            wagers = {}
            for s in seats:
                a = self.rng.choice((5, 10, 25))
                wagers[str(s)] = {"wagers": {"ante": a, "odds": a}}
            rep = self._command("open_round", {"seats": wagers})
            if rep == "round_open":
                rep = self._command("status", {})
            if not isinstance(rep, dict):
                continue
            rnd = rep.get("round")
            if not self._until(E.DEAL_COMPLETE, rnd) or self.stop.wait(self.decide_s):
                break
            raises = {
                s: (w["wagers"]["ante"] if self.rng.random() < 0.7 else 0)
                for s, w in wagers.items()
            }
            if self._command("decisions", raises) is None or not self._until(E.ROUND_RESULT, rnd):
                continue
            self.rounds += 1
            self.stop.wait(self.gap_s)


def _tablesys(argv):
    import argparse

    ap = argparse.ArgumentParser(prog="procfloor tablesys")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--shoes", required=True)
    ap.add_argument("--decide", type=float, default=5.0)
    ap.add_argument("--gap", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    import host_tools  # noqa: F401

    d = Path(a.dir)
    stop = threading.Event()
    clients = [
        TableClient(
            "gateway+unix://%s" % (d / "api" / ("%s.sock" % sid)).resolve(),
            a.seed * 1013 + i,
            a.decide,
            a.gap,
            stop,
        )
        for i, sid in enumerate(a.shoes.split(","))
    ]
    deadline = time.monotonic() + 180
    for c in clients:  # one after the other: no login storm on a loaded machine
        c.open(deadline)
    runs = []
    say = lambda x: (sys.stdout.write(json.dumps(x) + "\n"), sys.stdout.flush())  # noqa: E731
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "ready":
            say("ready" if all(c.link for c in clients) else {"error": "not every API is open"})
        elif cmd == "go":
            runs = [threading.Thread(target=c.run, daemon=True) for c in clients]
            for t in runs:
                t.start()
            say("going")
        elif cmd == "stop":
            stop.set()
            for t in runs:
                t.join(20)
            errors = {}
            for c in clients:
                for k, v in c.errors.items():
                    errors[k] = errors.get(k, 0) + v
            say(
                {
                    "rounds": sum(c.rounds for c in clients),
                    "commands": sum(c.commands for c in clients),
                    "errors": errors,
                }
            )
        elif cmd == "quit":
            break
        else:
            say({"error": "unknown command %r" % cmd[:40]})
    stop.set()
    for c in clients:
        if c.link:
            c.link.close()
    say("bye")


if __name__ == "__main__":
    if sys.argv[1:2] == ["group"]:
        _group(sys.argv[2:])
    elif sys.argv[1:2] == ["tablesys"]:
        _tablesys(sys.argv[2:])
    else:
        sys.exit(
            "usage: python -m host_tools.sim.floor.procfloor group --dir D --name N --broker URL "
            "--shoes A,B --rate R --seed S"
        )
