"""A whole floor in one process: N simulated shoes, their gateways, collectors, the view.

Used by `shoectl floor --demo N`, tests/floor and bench/bench_floor.py. Real engines: the
embedded MQTT broker (aedes by default, a Node process; broker_engine="amqtt" for the Python one)
and PostgreSQL 16 (pgserver) unless URLs of running ones are given; real
ShoeLinks with real audit stores (SQLite, one per table as at a real table) in `workdir`.

    with Floor(workdir, tables=20) as f:   # f.view.url, f.shoes, f.collectors, f.gateway
        f.driver.start()                   # every shoe emits `rate` events/s
        f.login                            # ("admin", password): the view's generated demo user

With broker_acl=True the embedded broker admits only the floor's own users with the ACL that
`shoectl floor-broker-config` writes (brokerauth.py): the gateway as gw-floor (all the demo's
shoes), each collector under its name; their passwords come from SHOE_MQTT_CREDENTIALS, which the
floor sets while it runs (the demo's own process).

Without `users` (host_tools/floor/auth.Users) the view gets a users file in `workdir` with one
admin whose password is generated for this run (f.login): the demo's one-time credentials.
"""

import threading
from pathlib import Path

from host_tools.audit import AuditStore
from host_tools.floor import keyring, pg
from host_tools.floor.collector import Collector
from host_tools.floor.gateway import Gateway
from host_tools.floor.view import FloorView
from host_tools.link import ShoeLink
from host_tools.sim.floor import brokers, embedded_pg
from host_tools.sim.floor.simshoe import FloorDriver, SimShoe, make_keys


class Floor:
    def __init__(
        self,
        workdir,
        tables=10,
        collectors=1,
        rate=1.0,
        broker_url=None,
        db_url=None,
        view=True,
        seed=0,
        gap_timeout=30.0,
        on_commit=None,
        http_host="127.0.0.1",
        http_port=0,
        processes=False,
        users=None,
        view_options=None,
        broker_acl=False,
        broker_engine=None,
    ):
        # processes: the broker and every collector run in processes of their own (`shoectl
        # collector`), as on a real floor; killing a collector is then a real SIGKILL
        self.processes = processes
        self.dir = Path(workdir)
        self.n = tables
        self.n_collectors = collectors
        self.rate = rate
        self.broker_url = broker_url
        self.db_url = db_url
        self.want_view = view
        self.seed = seed
        self.gap_timeout = gap_timeout
        self.on_commit = on_commit
        self.http = (http_host, http_port)
        self.users = users
        self.view_options = dict(view_options or {})
        self.login = None
        self.broker_acl = broker_acl
        self.broker_engine = broker_engine  # brokers.embedded(): None = aedes (or amqtt)
        self._env = None
        self.broker = None
        self.pg = None
        self.shoes = []
        self.links = []
        self.stores = []
        self.gateway = None
        self.collectors = []
        self.view = None
        self.driver = None
        self.ring = None
        self.keys = {}
        self._lock = threading.Lock()

    def start(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        keydir = self.dir / "keys"
        for i in range(self.n):
            sid = "T%03d" % (i + 1)
            k = make_keys()
            self.keys[sid] = k
            keyring.write(keydir, sid, k)
        self.ring = keyring.load(keydir)
        if not self.broker_url:
            files = self._broker_files() if self.broker_acl else {}
            self.broker = brokers.embedded(
                self.broker_engine,
                passwd=files.get("passwd"),
                acl=files.get("acl"),
                process=self.processes,
            )
            self.broker_url = self.broker.start()
        if not self.db_url:
            self.pg = embedded_pg.EmbeddedPostgres()
            self.db_url = self.pg.start()
        pg.migrate(self.db_url)
        self.gateway = Gateway(
            self.url_for("gw-floor"), "gw-floor", cursor_path=self.dir / "gw.json"
        )
        for i, sid in enumerate(sorted(self.keys)):
            self.add_table(sid, seed=self.seed * 100003 + i)
        self.gateway.start()
        for i in range(self.n_collectors):
            self.start_collector("collector-%d" % (i + 1))
        if self.want_view:
            if self.users is None and not self.view_options.get("trust_header"):
                from host_tools.floor.auth import run_admin

                self.users, self.login = run_admin(self.dir / "floor-users.json")
            self.view = FloorView(
                self.db_url,
                host=self.http[0],
                port=self.http[1],
                users=self.users,
                **self.view_options,
            ).start()
        self.driver = FloorDriver(self.shoes, rate=self.rate, seed=self.seed)
        return self

    @property
    def broker_name(self):
        """Which broker carries this floor: aedes, amqtt, or the one at broker_url."""
        from host_tools.sim.floor.aedes import AedesBroker

        if self.broker is None:
            return "external"
        return "aedes" if isinstance(self.broker, AedesBroker) else "amqtt"

    def add_table(self, sid, seed=0):
        shoe = SimShoe(sid, self.keys[sid], seed=seed)
        store = AuditStore(self.dir / "tables" / ("%s.sqlite" % sid))
        link = ShoeLink(
            "sim://" + sid,
            self.keys[sid]["shoe"],
            audit=store,
            open_port=lambda u, s=shoe: s.open_port(u, 0.2),
            read_timeout=0.2,
        )
        link.start()
        self.shoes.append(shoe)
        self.links.append(link)
        self.stores.append(store)
        self.gateway.add(sid, link, store)
        return shoe

    def _broker_files(self):
        import os

        from host_tools.floor import brokerauth

        plan = brokerauth.Plan.build(
            self.keys,
            ["collector-%d" % (i + 1) for i in range(self.n_collectors + 4)],
            {"gw-floor": list(self.keys)},
        )
        files = brokerauth.write(
            self.dir / "broker", plan, port=0, bind="127.0.0.1", data=self.dir / "broker"
        )
        self._env = (os.environ.get("SHOE_MQTT_CREDENTIALS"),)
        os.environ["SHOE_MQTT_CREDENTIALS"] = str(files["credentials"])
        return files

    def url_for(self, user):
        """The broker URL as `user` (with broker_acl; else the URL as given)."""
        if not self.broker_acl:
            return self.broker_url
        return self.broker_url.replace("://", "://%s@" % user, 1)

    def start_collector(self, name):
        if self.processes:
            c = CollectorProcess(self, name)
            self.collectors.append(c)
            return c
        c = Collector(
            self.url_for(name),
            self.db_url,
            self.ring,
            name,
            gap_timeout=self.gap_timeout,
            on_commit=self.on_commit,
        ).start()
        self.collectors.append(c)
        return c

    def stop(self):
        if self.driver:
            self.driver.stop()
        if self.view:
            self.view.stop()
        for c in self.collectors:
            c.stop()
        if self.gateway:
            self.gateway.stop()
        for link in self.links:
            link.close()
        for s in self.stores:
            s.close()
        if self.broker:
            self.broker.stop()
        if self.pg:
            self.pg.stop()
        if self._env is not None:  # what SHOE_MQTT_CREDENTIALS was before start()
            import os

            os.environ.pop("SHOE_MQTT_CREDENTIALS", None)
            if self._env[0] is not None:
                os.environ["SHOE_MQTT_CREDENTIALS"] = self._env[0]
            self._env = None

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()

    # ---- checks (tests, bench) ------------------------------------------------------------------
    def emitted(self):
        """{shoe: highest eseq the simulated shoe has sealed}"""
        return {s.shoe_id: s.store.eseq for s in self.shoes}

    def stored(self, conn):
        """{shoe: (rows, distinct eseqs, max eseq)} in PostgreSQL."""
        rows = conn.execute(
            "SELECT shoe, count(*), count(DISTINCT eseq), max(eseq) FROM events GROUP BY shoe"
        ).fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}


class CollectorProcess:
    """`shoectl collector` as a process of its own (Floor(processes=True))."""

    def __init__(self, floor, name):
        import subprocess
        import sys

        self.name = name
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "host_tools",
                "collector",
                "--broker",
                floor.url_for(name),
                "--db",
                floor.db_url,
                "--keys",
                str(floor.dir / "keys"),
                "--name",
                name,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.counts = {}

    def kill(self):
        self.proc.kill()  # SIGKILL: no goodbye, its connections just drop
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except Exception:
                self.proc.kill()
                self.proc.wait()
