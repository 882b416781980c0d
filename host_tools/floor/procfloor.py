"""A floor spread over processes as on a real one: tables in groups of N per process.

    with ProcFloor(workdir, tables=400, per_process=50, broker="aedes", collectors=2) as f:
        f.go(); ...; f.stop_driving(); f.emitted(); f.sent(); f.kill_collector(0)
    f.pids: every process it started (all exited after stop()).

Each table group is `python -m host_tools.floor.procfloor group ...`: N simulated shoes
(simshoe.SimShoe), their ShoeLinks and SQLite audit stores and one Gateway (one MQTT connection)
for the N tables; production runs one per table (N = 1). The broker (aedes, the default; amqtt,
Mosquitto, or edge Mosquittos bridged to a core: brokers.py), every collector (`shoectl
collector`), the view (`shoectl floor`) and PostgreSQL (pgserver, unless db_url is given) are
processes of their own.
A group takes commands on stdin, one per line, and answers on stdout: `go` (start emitting),
`heads` ({shoe: highest eseq sealed}), `stop` (stop emitting), `quit` (write the sent times to
sent-<name>.json, close, exit). End of input is `quit`: a group never outlives its parent's pipe.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from host_tools.floor import keyring, mqtt, pg
from host_tools.floor.brokers import broker_for

PY = sys.executable


class _Group:
    """The parent's handle on one table-group process."""

    def __init__(self, f, name, shoes, broker_url, seed, sample=None):
        self.name = name
        self.shoes = shoes
        self.proc = subprocess.Popen(
            [PY, "-m", "host_tools.floor.procfloor", "group", "--dir", str(f.dir), "--name", name,
             "--broker", broker_url, "--rate", str(f.rate), "--seed", str(seed),
             "--shoes", ",".join(shoes), "--stores", str(f.stores_dir)]
            + (["--sample", str(sample)] if sample else []),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            stderr=open(f.dir / ("%s.err" % name), "w"))
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
    def __init__(self, workdir, tables=100, per_process=50, collectors=2, rate=1.0,
                 broker=None, db_url=None, view=True, seed=0, collector_args=(),
                 stores_dir=None, sample=False):
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
        self.sample = sample        # a sampling profile of the first table group (sample.json)
        self.broker = None
        self.broker_url = None
        self.pg = None
        self.groups = []
        self.collectors = []
        self.view = None
        self.view_url = None
        self.login = None            # (user, password) of the view's admin, made per run
        self.pids = []
        self.shoe_ids = ["T%04d" % (i + 1) for i in range(tables)]

    # ---- life cycle -------------------------------------------------------------------------
    def start(self):
        from host_tools.floor.simshoe import make_keys
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.broker_name and self.broker_name.startswith("mqtt://"):
            self.broker_url = self.broker_name
        else:
            self.broker = broker_for(self.broker_name, self.dir / "broker")
            self.broker_url = self.broker.start()
            self._note_broker()
        if not self.db_url:
            self.pg = pg.EmbeddedPostgres()
            self.db_url = self.pg.start()
        pg.migrate(self.db_url)
        for i, sid in enumerate(self.shoe_ids):
            keyring.write(self.dir / "keys", sid, make_keys(seed=self.seed * 100003 + i))
        for i in range(self.n_collectors):
            self.start_collector(i)
        edges = getattr(self.broker, "edge_urls", None) or [self.broker_url]
        for g, lo in enumerate(range(0, self.n, self.per_process)):
            grp = _Group(self, "gw-p%03d" % g, self.shoe_ids[lo:lo + self.per_process],
                         edges[g % len(edges)], self.seed * 7919 + g,
                         sample=self.dir / "sample.json" if self.sample and g == 0 else None)
            self.groups.append(grp)
            self.pids.append(grp.proc.pid)
        for grp in self.groups:     # each answers once its links and gateway are up
            r = grp.ask("ready")
            assert r == "ready", r
        if self.want_view:
            from host_tools.floor.auth import run_admin

            # the view requires a login: one admin with a password made for this run (f.login)
            self.login = run_admin(self.dir / "floor-users.json")[1]
            port = mqtt.free_port()
            self.view = subprocess.Popen(
                [PY, "-m", "host_tools", "floor", "--db", self.db_url, "--users",
                 str(self.dir / "floor-users.json"), "--http", "127.0.0.1:%d" % port],
                stdout=subprocess.PIPE, text=True)
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
            [PY, "-m", "host_tools", "collector", "--broker", self.broker_url, "--db",
             self.db_url, "--keys", str(self.dir / "keys"), "--name", "collector-%d" % (i + 1),
             "--no-migrate"] + self.collector_args,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
        for g in self.groups:
            g.ask("go")

    def stop_driving(self):
        for g in self.groups:
            g.ask("stop")

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
        out = {"tables+gateways": [g.proc.pid for g in self.groups if g.proc.poll() is None],
               "collectors": [c.pid for c in self.collectors if c.poll() is None]}
        procs = getattr(self.broker, "procs", None) or [getattr(self.broker, "proc", None)]
        out["broker"] = [p.pid for p in procs if p is not None and p.poll() is None]
        if self.view is not None:
            out["view"] = [self.view.pid]
        return out

    def sent(self):
        """[(shoe, eseq, sealed at)] of every group (after stop(): the groups write them)."""
        out = []
        for g in self.groups:
            f = self.dir / ("sent-%s.json" % g.name)
            if f.exists():
                out += [tuple(x) for x in json.loads(f.read_text())]
        return out

    def stop(self):
        for g in self.groups:           # all at once: each closes its 1..N links in parallel
            if g.proc.poll() is None:
                try:
                    g.proc.stdin.write("quit\n")
                    g.proc.stdin.close()
                except OSError:
                    pass
        deadline = time.monotonic() + 30
        for g in self.groups:
            try:
                g.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for p in [g.proc for g in self.groups] + self.collectors + (
                [self.view] if self.view else []):
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

    IDLE = {"wait", "_wait_for_tstate_lock", "select", "poll", "sleep", "get", "readline",
            "acquire", "read", "_read_ready", "recv", "loop_forever", "_loop"}

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
    a = ap.parse_args(argv)
    import host_tools  # noqa: F401  (the CPython stand-in for `micropython`, before shoe)
    from host_tools import keys as keyfile
    from host_tools.audit import AuditStore
    from host_tools.floor.gateway import Gateway
    from host_tools.floor.simshoe import FloorDriver, SimShoe
    from host_tools.link import ShoeLink

    d = Path(a.dir)
    shoes, links, stores = [], [], []
    gw = Gateway(a.broker, a.name, cursor_path=d / ("%s.json" % a.name))
    for i, sid in enumerate(a.shoes.split(",")):
        _, k = keyfile.from_file(d / "keys" / ("%s.json" % sid))
        k = {n: bytes.fromhex(v) for n, v in k.items()}
        shoe = SimShoe(sid, k, seed=a.seed * 1009 + i)
        store = AuditStore(Path(a.stores) / ("%s.sqlite" % sid))
        link = ShoeLink("sim://" + sid, k["shoe"], audit=store,
                        open_port=lambda u, s=shoe: s.open_port(u, 0.2), read_timeout=0.2)
        link.start()
        gw.add(sid, link, store)
        shoes.append(shoe)
        links.append(link)
        stores.append(store)
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
            driver.start()
            say("going")
        elif cmd == "heads":
            say({s.shoe_id: s.store.eseq for s in shoes})
        elif cmd == "stop":
            driver.stop()
            if sampler:
                Path(a.sample).write_text(json.dumps(sampler.stop()))
            say("stopped")
        elif cmd == "quit":
            break
        else:
            say({"error": "unknown command %r" % cmd[:40]})
    driver.stop()
    sent = [(s.shoe_id, e, t) for s in shoes for e, _, t in s.sent]
    (d / ("sent-%s.json" % a.name)).write_text(json.dumps(sent))
    gw.stop()
    closing = [threading.Thread(target=link.close) for link in links]
    for t in closing:
        t.start()
    for t in closing:
        t.join()
    for s in stores:
        s.close()
    say("bye")


if __name__ == "__main__":
    if sys.argv[1:2] == ["group"]:
        _group(sys.argv[2:])
    else:
        sys.exit("usage: python -m host_tools.floor.procfloor group --dir D --name N --broker URL "
                 "--shoes A,B --rate R --seed S")
