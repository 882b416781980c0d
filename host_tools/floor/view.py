"""The floor view: every table live in the browser, from PostgreSQL, as the reader role.

    view = FloorView(db_url, host="127.0.0.1", port=0).start()   # view.url
    GET /               the floor: one tile per table (phase, round, last result, open
                        irregularities and alerts, link health, age of the last event)
    GET /table/<shoe>   drill-down: the table's recent rounds (with the engine's verdict), alerts
    GET /alerts         every open alert (and the latest closed ones)
    GET /events         server-sent events: "floor" messages with the changed tables
    GET /api/floor | /api/table/<shoe> | /api/alerts     the same as JSON (/api/alerts also
                        lists the quarantined shoe ids: messages for shoes with no key, no tile)

A listener connection LISTENs on `floor` (the collector NOTIFYs in its write transaction), reads
the tables changed since the last look and pushes them to every open page; a one-second tick
re-sends link health. The view connects with SET ROLE floor_reader (SELECT only). No key, MAC or
payload column is ever selected: nothing secret can reach a page.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

from host_tools.floor import pg

STATIC = Path(__file__).with_name("static")
_TABLE_COLS = ("shoe, head_eseq, phase, round, last_kind, last_event_at, last_result, gateway, "
               "gateway_at, owner, updated_at, replays, state_refused, (SELECT count(*) FROM "
               "alerts a WHERE a.shoe = s.shoe AND a.closed_at IS NULL) AS open_alerts, (SELECT "
               "count(*) FROM alerts a WHERE a.shoe = s.shoe AND a.closed_at IS NULL AND a.kind = "
               "'irregularity') AS irregularities")


def _row(cur, r):
    out = {}
    for d, v in zip(cur.description, r):
        if hasattr(v, "timestamp"):
            v = v.timestamp()
        out[d.name] = v
    return out


class FloorView:
    def __init__(self, db_url, host="127.0.0.1", port=0, role="floor_reader", tick=1.0):
        self.db_url = db_url
        self.role = role
        self.tick = tick
        self.host = host
        self.port = port
        self.tables = {}
        self.version = 0
        self._cond = threading.Condition()
        self._since = 0.0
        self._stop = threading.Event()
        self._local = threading.local()
        self.server = None
        self._pending = []

    # ---- database -----------------------------------------------------------------------------
    def _conn(self):
        c = getattr(self._local, "conn", None)
        if c is None or c.closed:
            c = pg.connect(self.db_url)
            if self.role:
                c.execute("SET ROLE %s" % self.role)
            self._local.conn = c
        return c

    def query(self, sql, args=()):
        for attempt in (0, 1):
            try:
                cur = self._conn().execute(sql, args)
                return [_row(cur, r) for r in cur.fetchall()]
            except Exception:
                self._local.conn = None
                if attempt:
                    raise

    def floor(self, since=None):
        q = "SELECT %s FROM shoes s" % _TABLE_COLS
        if since is not None:
            return self.query(q + " WHERE updated_at > to_timestamp(%s) ORDER BY shoe", (since,))
        return self.query(q + " ORDER BY shoe")

    def table(self, shoe):
        t = self.query("SELECT %s FROM shoes s WHERE shoe = %%s" % _TABLE_COLS, (shoe,))
        if not t:
            return None
        rounds = self.query("SELECT eseq, round, outcome, summary, reeval, settled_at FROM rounds"
                            " WHERE shoe = %s ORDER BY eseq DESC LIMIT 20", (shoe,))
        alerts = self.query("SELECT id, eseq, kind, detail, raised_at, closed_at FROM alerts "
                            "WHERE shoe = %s ORDER BY id DESC LIMIT 50", (shoe,))
        return {"table": t[0], "rounds": rounds, "alerts": alerts}

    def alerts(self):
        return self.query("(SELECT id, shoe, eseq, kind, detail, collector, raised_at, closed_at"
                          " FROM alerts WHERE closed_at IS NULL ORDER BY id DESC LIMIT 500) UNION"
                          " ALL (SELECT id, shoe, eseq, kind, detail, collector, raised_at, "
                          "closed_at FROM alerts WHERE closed_at IS NOT NULL ORDER BY id DESC "
                          "LIMIT 50) ORDER BY id DESC")

    def quarantine(self):
        """Shoe ids seen on the broker that the floor has no key for (never tables)."""
        return self.query("SELECT shoe, sum(messages) AS messages, min(first_seen) AS first_seen,"
                          " max(last_seen) AS last_seen FROM quarantine GROUP BY shoe ORDER BY "
                          "max(last_seen) DESC LIMIT 200")

    # ---- change feed ----------------------------------------------------------------------------
    def _publish(self, rows):
        if not rows:
            return
        with self._cond:
            for r in rows:
                self.tables[r["shoe"]] = r
                self._since = max(self._since, r["updated_at"])
            self.version += 1
            self._pending = rows
            self._cond.notify_all()

    def _listen(self):
        while not self._stop.is_set():
            try:
                conn = pg.connect(self.db_url)
                if self.role:
                    conn.execute("SET ROLE %s" % self.role)
                conn.execute("LISTEN floor")
                self._publish(self.floor())
                last_tick = time.monotonic()
                while not self._stop.is_set():
                    for _ in conn.notifies(timeout=0.2, stop_after=1):
                        pass
                    # catch every change committed since the last look (notify or not)
                    rows = self._changed(conn)
                    if time.monotonic() - last_tick >= self.tick:
                        last_tick = time.monotonic()
                        with self._cond:
                            self.version += 1
                            self._cond.notify_all()   # pages re-draw ages and link health
                    self._publish(rows)
                conn.close()
            except Exception:
                self._stop.wait(1.0)

    def _changed(self, conn):
        # look 2 s back: a transaction that took its timestamp before the last look may commit
        # after it; rows already shown unchanged are not sent again
        cur = conn.execute("SELECT %s FROM shoes s WHERE updated_at > to_timestamp(%%s) "
                           "ORDER BY shoe" % _TABLE_COLS, (self._since - 2.0,))
        rows = [_row(cur, r) for r in cur.fetchall()]
        with self._cond:
            return [r for r in rows if self.tables.get(r["shoe"]) != r]

    def stream(self, wfile):
        """Server-sent events for one page until it goes away."""
        with self._cond:
            snap = list(self.tables.values())
            seen = self.version
        self._send(wfile, "floor", {"tables": snap, "full": True, "now": time.time()})
        while not self._stop.is_set():
            with self._cond:
                self._cond.wait_for(lambda: self.version != seen or self._stop.is_set(), 15)
                changed = [] if self.version == seen else getattr(self, "_pending", [])
                if self.version - seen > 1:   # missed some: send everything
                    changed = list(self.tables.values())
                seen = self.version
            self._send(wfile, "floor", {"tables": changed, "now": time.time()})

    @staticmethod
    def _send(wfile, event, data):
        wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data, default=str)))
                    .encode())
        wfile.flush()

    # ---- HTTP -----------------------------------------------------------------------------------
    def start(self):
        view = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _reply(self, code, body, ctype):
                data = body if isinstance(body, bytes) else body.encode()
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def _json(self, obj):
                self._reply(200 if obj is not None else 404, json.dumps(obj, default=str),
                            "application/json")

            def do_GET(self):
                path = unquote(self.path.split("?", 1)[0])
                try:
                    if path in ("/", "/alerts") or path.startswith("/table/"):
                        self._reply(200, (STATIC / "floor.html").read_bytes(),
                                    "text/html; charset=utf-8")
                    elif path == "/api/floor":
                        self._json({"tables": view.floor(), "now": time.time()})
                    elif path.startswith("/api/table/"):
                        self._json(view.table(path[len("/api/table/"):]))
                    elif path == "/api/alerts":
                        self._json({"alerts": view.alerts(), "quarantine": view.quarantine(),
                                    "now": time.time()})
                    elif path == "/events":
                        self.send_response(200)
                        self.send_header("Content-Type", "text/event-stream")
                        self.send_header("Cache-Control", "no-store")
                        self.end_headers()
                        view.stream(self.wfile)
                    else:
                        self._reply(404, "not found\n", "text/plain")
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer((self.host, self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self._listen, name="floor-listen", daemon=True).start()
        threading.Thread(target=self.server.serve_forever, name="floor-http", daemon=True).start()
        return self

    @property
    def url(self):
        return "http://%s:%d/" % (self.host, self.port)

    def stop(self):
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self.server:
            self.server.shutdown()
            self.server.server_close()
