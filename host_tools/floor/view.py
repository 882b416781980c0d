"""The floor view: every table live in the browser, from PostgreSQL, as the reader role.

    view = FloorView(db_url, users=Users.load(path), host="127.0.0.1", port=0,
                     cert=None, key=None).start()          # view.url (https:// with cert/key)
    GET  /login, POST /login    the login form (argon2-hashed users, auth.py); POST /logout
    GET  /               the floor: one tile per table (phase, round, last result, open
                         irregularities and alerts, link health, age of the last event)
    GET  /table/<shoe>   drill-down: the shift's win/loss, hands per hour and hold with small SVG
                         charts, the table's recent rounds (with the engine's verdict), alerts
    GET  /round/<shoe>/<round>   one round: every card in dealing order once the round is
                         revealed (none before, for any role), each wager, the engine's verdict
    GET  /timeline/<shoe>        the table's irregularities and alerts in time order
    GET  /alerts         every open alert (and the latest closed ones); acknowledgement
    GET  /audit          the view's own access log (logins, failures, acknowledgements, refusals)
    GET  /events         server-sent events: "floor" messages with the changed tables
    GET  /api/me | /api/floor | /api/table/<shoe> | /api/alerts | /api/audit
         /api/round/<shoe>/<round> | /api/timeline/<shoe>                    JSON (/api/alerts
                         also lists the quarantined shoe ids: messages for shoes with no key)
    POST /api/alerts/<id>/ack                                                    (CSRF token)

Every route is in ROUTES with the roles that may use it; anything else is refused (deny by
default). Without a session a page redirects to /login and the API and stream answer 401; a role
not listed gets 403. Sessions are a random id in an HttpOnly, SameSite=Strict cookie (Secure under
TLS) that expires after an idle time and an absolute time; every POST carries the session's CSRF
token. Failed logins are throttled per user name and per client address. With trust_header the
user comes from an upstream identity provider's header instead (only when configured).

A listener connection LISTENs on `floor` (the collector NOTIFYs in its write transaction), reads
the tables changed since the last look and pushes them to every open page; a one-second tick
re-sends link health. The view connects with SET ROLE floor_reader (SELECT only). No key, MAC or
payload column is ever selected: nothing secret can reach a page, whatever the role.
"""

import collections
import json
import re
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

import psycopg

from host_tools import events as E
from host_tools.errors import ShoeError
from host_tools.floor import pg
from host_tools.floor.auth import ROLES, PgSessions, Throttle
from host_tools.floor.errlog import ErrorLog

STATIC = Path(__file__).with_name("static")
_TABLE_COLS = (
    "shoe, head_eseq, phase, round, last_kind, last_event_at, last_result, gateway, "
    "gateway_at, owner, updated_at, replays, state_refused, (SELECT count(*) FROM "
    "alerts a WHERE a.shoe = s.shoe AND a.closed_at IS NULL) AS open_alerts, (SELECT "
    "count(*) FROM alerts a WHERE a.shoe = s.shoe AND a.closed_at IS NULL AND a.kind = "
    "'irregularity') AS irregularities"
)


# Per settled round of one table since a time: the house's win (minus the seats' nets, from the
# round's summary) and the amount wagered (every wager's amount in the result event, raises
# included). Malformed values count as nothing rather than fail the page.
_SHIFT_SQL = """
SELECT r.eseq, r.round, r.outcome, r.settled_at,
  coalesce((SELECT -sum((n.value #>> '{}')::numeric) FROM jsonb_each(CASE WHEN
            jsonb_typeof(r.summary->'seats') = 'object' THEN r.summary->'seats' ELSE '{}' END) n
            WHERE jsonb_typeof(n.value) = 'number'), 0)::float8 AS house,
  coalesce((SELECT sum((w.value->'amount' #>> '{}')::numeric) FROM events e,
            jsonb_each(CASE WHEN jsonb_typeof(e.body->'seats') = 'object' THEN e.body->'seats'
                       ELSE '{}' END) s,
            jsonb_each(CASE WHEN jsonb_typeof(s.value->'wagers') = 'object' THEN s.value->'wagers'
                       ELSE '{}' END) w
            WHERE e.shoe = r.shoe AND e.eseq = r.eseq AND e.kind = 'round_result'
              AND e.received_at BETWEEN r.settled_at - interval '1 day'
                                    AND r.settled_at + interval '1 day'   -- prunes partitions
              AND jsonb_typeof(w.value->'amount') = 'number'), 0)::float8 AS wagered
FROM rounds r WHERE r.shoe = %s AND r.settled_at >= to_timestamp(%s) ORDER BY r.eseq
LIMIT 5000"""


def _row(cur, r):
    out = {}
    for d, v in zip(cur.description, r):
        if hasattr(v, "timestamp"):
            v = v.timestamp()
        out[d.name] = v
    return out


# the first acknowledgement of an alert (alert_acks, insert-only)
_ACK_COLS = (
    "(SELECT k.user_name FROM alert_acks k WHERE k.alert = alerts.id ORDER BY k.id "
    "LIMIT 1) AS ack_by, (SELECT k.at FROM alert_acks k WHERE k.alert = alerts.id ORDER"
    " BY k.id LIMIT 1) AS ack_at, (SELECT k.role FROM alert_acks k WHERE k.alert = "
    "alerts.id ORDER BY k.id LIMIT 1) AS ack_role"
)
_ALL = frozenset(ROLES)
_WATCH = frozenset(("surveillance", "auditor", "admin"))
_AUDIT = frozenset(("auditor", "admin"))
_ACK = frozenset(("surveillance", "admin"))
# The allowlist: (method, path pattern, roles, kind). kind: page (redirect to /login without a
# session), api and stream (401). What is not here is 404 for everyone.
ROUTES = (
    ("GET", r"/", _ALL, "page"),
    ("GET", r"/table/[^/]+", _ALL, "page"),
    ("GET", r"/round/[^/]+/[0-9]{1,9}", _WATCH, "page"),
    ("GET", r"/timeline/[^/]+", _WATCH, "page"),
    ("GET", r"/alerts", _WATCH, "page"),
    ("GET", r"/audit", _AUDIT, "page"),
    ("GET", r"/events", _ALL, "stream"),
    ("GET", r"/api/me", _ALL, "api"),
    ("GET", r"/api/floor", _ALL, "api"),
    ("GET", r"/api/table/[^/]+", _ALL, "api"),
    ("GET", r"/api/round/[^/]+/[0-9]{1,9}", _WATCH, "api"),
    ("GET", r"/api/timeline/[^/]+", _WATCH, "api"),
    ("GET", r"/api/alerts", _WATCH, "api"),
    ("GET", r"/api/audit", _AUDIT, "api"),
    ("POST", r"/api/alerts/[0-9]{1,18}/ack", _ACK, "api"),
    ("POST", r"/logout", _ALL, "api"),
)
_ROUTES = [(m, re.compile(p + r"\Z"), roles, kind) for m, p, roles, kind in ROUTES]
COOKIE = "floor_session"
_MAX_BODY = 16384


class FloorView:
    def __init__(
        self,
        db_url,
        host="127.0.0.1",
        port=0,
        role="floor_reader",
        tick=1.0,
        users=None,
        trust_header=None,
        trust_groups_header="X-Remote-Groups",
        role_map=None,
        cert=None,
        key=None,
        idle=1800.0,
        absolute=12 * 3600.0,
        login_limit=5,
        login_window=300.0,
        access_log=None,
        shift_hours=8,
        shift_origin=6,
    ):
        if (users is None) == (not trust_header):
            raise ShoeError(
                "the floor view needs users (shoectl floor-user add ... --users FILE)"
                " or an identity provider header (--trust-header), one of the two"
            )
        if (cert is None) != (key is None):
            raise ShoeError("TLS needs both --cert and --key")
        self.users = users
        self.trust_header = trust_header
        self.trust_groups_header = trust_groups_header
        self.role_map = dict(role_map or {})
        for r in self.role_map.values():
            if r not in ROLES:
                raise ShoeError("role map: no role %r (roles: %s)" % (r, ", ".join(ROLES)))
        self.cert, self.key = cert, key
        self.tls = cert is not None
        # sessions and acknowledgements in PostgreSQL (view_sessions, alert_acks) as the
        # floor_view role: shared by every view process, kept across restarts
        self.view_role = "floor_view" if role else None
        self.sessions = PgSessions(db_url, idle=idle, absolute=absolute, role=self.view_role)
        self.throttle = Throttle(limit=login_limit, window=login_window)
        self.access = collections.deque(maxlen=2000)
        self.access_log = Path(access_log) if access_log else None
        self._alock = threading.Lock()
        if not (0 < shift_hours <= 24 and 0 <= shift_origin < 24):
            raise ShoeError("a shift is 1..24 hours, starting at 0..23 h UTC")
        self.shift_hours, self.shift_origin = shift_hours, shift_origin
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
        self._conns = []  # every request thread's connection (stop() closes them)
        self._conns_lock = threading.Lock()
        self._listener = None
        self.server = None
        self._pending = []
        self.db_errors = 0
        self.errors = ErrorLog("view")  # every error, logged; the latest for /healthz
        self.ops = ViewOps()  # what /metrics shows (metrics.view_samples)

    # ---- database -----------------------------------------------------------------------------
    def _conn(self):
        c = getattr(self._local, "conn", None)
        if c is None or c.closed:
            if self._stop.is_set():  # a request still running at stop(): no new session
                raise ShoeError("the floor view is stopping")
            c = pg.connect(self.db_url)
            if self.role:
                pg.set_role(c, self.role)
            self._local.conn = c
            with self._conns_lock:
                self._conns = [x for x in self._conns if not x.closed] + [c]
        return c

    def query(self, sql, args=()):
        for attempt in (0, 1):
            try:
                cur = self._conn().execute(sql, args)
                return [_row(cur, r) for r in cur.fetchall()]
            except (ShoeError, psycopg.Error):  # cannot connect, or the connection broke:
                self._local.conn = None  # once more on a new one
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
        rounds = self.query(
            "SELECT eseq, round, outcome, summary, reeval, settled_at FROM rounds"
            " WHERE shoe = %s ORDER BY eseq DESC LIMIT 20",
            (shoe,),
        )
        alerts = self.query(
            "SELECT id, eseq, kind, detail, raised_at, closed_at FROM alerts "
            "WHERE shoe = %s ORDER BY id DESC LIMIT 50",
            (shoe,),
        )
        return {"table": t[0], "rounds": rounds, "alerts": alerts, "shift": self.shift(shoe)}

    def shift_start(self, now=None):
        """The current shift's start (UTC): shifts of shift_hours from shift_origin h UTC."""
        now = time.time() if now is None else now
        length = self.shift_hours * 3600.0
        origin = self.shift_origin * 3600.0
        return now - ((now - origin) % length)

    def shift(self, shoe, now=None):
        """The shift's figures for one table, computed by PostgreSQL from `rounds` (and each
        result's wagers from its event): per settled round the house's win (minus the seats'
        nets) and the amount wagered; win/loss, hands, hands per hour while dealing, hold."""
        now = time.time() if now is None else now
        start = self.shift_start(now)
        rows = self.query(_SHIFT_SQL, (shoe, start))
        won = sum(r["house"] for r in rows if r["outcome"] == "result")
        wagered = sum(r["wagered"] for r in rows if r["outcome"] == "result")
        hands = sum(1 for r in rows if r["outcome"] == "result")
        span = rows[-1]["settled_at"] - rows[0]["settled_at"] if len(rows) > 1 else 0
        return {
            "start": start,
            "hours": self.shift_hours,
            "now": now,
            "hands": hands,
            "voids": len(rows) - hands,
            "win": won,
            "wagered": wagered,
            "hold": (won / wagered) if wagered else None,
            "per_hour": (len(rows) - 1) * 3600.0 / span if span > 0 else None,
            "series": [
                {
                    "eseq": r["eseq"],
                    "round": r["round"],
                    "at": r["settled_at"],
                    "outcome": r["outcome"],
                    "house": r["house"],
                    "wagered": r["wagered"],
                }
                for r in rows
            ],
        }

    def round_view(self, shoe, rnd):
        """One round of one table (its latest round of that number). Its cards, in dealing
        order, only once the round is revealed (a `reveal` event) or over (a result or a void
        from firmware that dealt cards in clear): before that the page gets each dealt
        position's target and no card, whatever the role; the cards are not even selected."""
        if not self.query("SELECT 1 FROM shoes WHERE shoe = %s", (shoe,)):
            return None
        r = self.query(
            "SELECT eseq, round, outcome, summary, reeval, settled_at FROM rounds "
            "WHERE shoe = %s AND round = %s ORDER BY eseq DESC LIMIT 1",
            (shoe, rnd),
        )
        r = r[0] if r else None
        lo = self.query(
            "SELECT coalesce(max(eseq), 0) AS lo FROM rounds WHERE shoe = %s"
            + (" AND eseq < %s" if r else ""),
            (shoe, r["eseq"]) if r else (shoe,),
        )[0]["lo"]
        hi = r["eseq"] if r else None
        bound = (
            "shoe = %s AND eseq > %s"
            + (" AND eseq <= %s" if r else "")
            + " AND body->>'round' = %s"
        )
        args = (shoe, lo) + ((hi,) if r else ()) + (str(rnd),)
        # no card field in this one: what was dealt to whom, what was wagered
        evs = self.query(
            "SELECT eseq, kind, received_at, body->'position' AS position, "
            "body->>'target' AS target, CASE WHEN kind = 'round_open' THEN "
            "body->'seats' END AS wagers, CASE WHEN kind = 'round_void' THEN "
            "body->>'reason' END AS reason FROM events WHERE "
            + bound
            + " AND kind IN ('round_open', 'card', 'deal_complete', 'reveal', "
            "'round_result', 'round_void') ORDER BY eseq",
            args,
        )
        if not evs and r is None:
            return None
        kinds = {e["kind"] for e in evs}
        revealed = E.REVEAL in kinds or E.ROUND_RESULT in kinds or E.ROUND_VOID in kinds
        opened = next((e for e in evs if e["kind"] == E.ROUND_OPEN), None)
        dealt = [
            {"position": e["position"], "target": e["target"], "card": None}
            for e in evs
            if e["kind"] == E.CARD
        ]
        out = {
            "shoe": shoe,
            "round": rnd,
            "revealed": revealed,
            "settled": r,
            "opened_at": opened["received_at"] if opened else None,
            "wagers": (opened or {}).get("wagers") or {},
            "dealt": dealt,
            "seats": None,
            "dealer": None,
            "void": next((e["reason"] for e in evs if e["kind"] == E.ROUND_VOID), None),
            "alerts": self.query(
                "SELECT id, eseq, kind, detail, raised_at, closed_at FROM "
                "alerts WHERE shoe = %s AND eseq > %s"
                + (" AND eseq <= %s" if r else "")
                + " ORDER BY id",
                (shoe, lo) + ((hi,) if r else ()),
            ),
        }
        if not revealed:
            return out
        # revealed: the cards, from the reveal (dealing order) or, from firmware that dealt
        # them in clear, from each card event; the result's hands, wagers and nets
        cards = self.query(
            "SELECT kind, body->'position' AS position, body->>'card' AS card, "
            "CASE WHEN kind = 'reveal' THEN body->'cards' END AS cards, CASE WHEN "
            "kind = 'round_result' THEN jsonb_build_object('seats', body->'seats',"
            " 'dealer', body->'dealer', 'all_six_card', body->'all_six_card') END "
            "AS result FROM events WHERE " + bound + " AND kind IN ('card', "
            "'reveal', 'round_result') ORDER BY eseq",
            args,
        )
        shown = next((c["cards"] for c in cards if c["kind"] == E.REVEAL), None)
        clear = {c["position"]: c["card"] for c in cards if c["kind"] == E.CARD}
        for d in dealt:
            p = d["position"]
            if isinstance(shown, list) and isinstance(p, int) and 0 <= p < len(shown):
                d["card"] = shown[p]
            else:
                d["card"] = clear.get(p)
        res = next((c["result"] for c in cards if c["kind"] == E.ROUND_RESULT), None)
        if res:
            out["seats"], out["dealer"] = res.get("seats"), res.get("dealer")
            out["all_six_card"] = res.get("all_six_card")
        return out

    def timeline(self, shoe, hours=24.0):
        """The table's irregularities (raised and cleared, from its events) and every alert
        raised, acknowledged (on this view) or closed, in time order, over the last `hours`."""
        if not self.query("SELECT 1 FROM shoes WHERE shoe = %s", (shoe,)):
            return None
        since = time.time() - hours * 3600.0
        evs = self.query(
            "SELECT eseq, kind, received_at AS at, body->>'id' AS ref, "
            "body->>'reason' AS reason, body->>'detail' AS detail, body->>'round' "
            "AS round FROM events WHERE shoe = %s AND received_at >= to_timestamp("
            "%s) AND kind IN ('irregularity', 'irregularity_cleared', 'round_void')"
            " ORDER BY eseq DESC LIMIT 500",
            (shoe, since),
        )
        als = self.query(
            "SELECT id, eseq, kind, detail, raised_at, closed_at, "
            + _ACK_COLS
            + " FROM alerts WHERE shoe = %s AND (raised_at >= to_timestamp(%s) OR "
            "closed_at >= to_timestamp(%s)) ORDER BY id DESC LIMIT 500",
            (shoe, since, since),
        )
        items = [
            {
                "at": e["at"],
                "what": e["kind"],
                "eseq": e["eseq"],
                "round": e["round"],
                "detail": ("%s%s" % (e["reason"] or "", ": " + e["detail"] if e["detail"] else ""))
                or None,
                "ref": e["ref"],
            }
            for e in evs
        ]
        for a in als:
            items.append(
                {
                    "at": a["raised_at"],
                    "what": "alert",
                    "kind": a["kind"],
                    "alert": a["id"],
                    "eseq": a["eseq"],
                    "detail": a["detail"],
                }
            )
            if a["closed_at"] is not None:
                items.append(
                    {
                        "at": a["closed_at"],
                        "what": "alert_closed",
                        "kind": a["kind"],
                        "alert": a["id"],
                        "eseq": a["eseq"],
                        "detail": a["detail"],
                    }
                )
            ack = a.get("ack_by")
            if ack:  # the first acknowledgement (alert_acks)
                items.append(
                    {
                        "at": a["ack_at"],
                        "what": "alert_acknowledged",
                        "kind": a["kind"],
                        "alert": a["id"],
                        "eseq": a["eseq"],
                        "detail": "by %s (%s)" % (ack, a["ack_role"]),
                    }
                )
        items.sort(key=lambda i: (i["at"], i.get("eseq") or 0))
        return {"shoe": shoe, "since": since, "items": items}

    def alerts(self):
        cols = "id, shoe, eseq, kind, detail, collector, raised_at, closed_at, " + _ACK_COLS
        rows = self.query(
            "(SELECT %s FROM alerts WHERE closed_at IS NULL ORDER BY id DESC LIMIT "
            "500) UNION ALL (SELECT %s FROM alerts WHERE closed_at IS NOT NULL "
            "ORDER BY id DESC LIMIT 50) ORDER BY id DESC" % (cols, cols)
        )
        for r in rows:
            r.pop("ack_role", None)
        return rows

    # ---- the view's own record: logins, failures, acknowledgements, refusals --------------------
    def note(self, what, user=None, role=None, addr=None, detail=None):
        if what in ("login", "login_failed", "login_throttled"):
            self.ops.login({"login": "ok", "login_failed": "failed"}.get(what, "throttled"))
        rec = {
            "at": time.time(),
            "what": what,
            "user": user,
            "role": role,
            "addr": addr,
            "detail": detail,
        }
        with self._alock:
            self.access.append(rec)
            if self.access_log:
                with open(self.access_log, "a") as f:
                    f.write(json.dumps(rec) + "\n")
        return rec

    def recent_access(self):
        """The view's own record (note()), newest first."""
        with self._alock:
            return list(self.access)[::-1]

    def acknowledge(self, alert_id, session, addr):
        """Record an acknowledgement (insert-only, alert_acks, as floor_view); the answer is the
        alert's first one (an alert acknowledged already stays acknowledged by its first)."""
        if not self.query("SELECT id FROM alerts WHERE id = %s", (alert_id,)):
            return None
        self.sessions.acknowledge(alert_id, session.user, session.role, str(addr))
        self.note("ack", session.user, session.role, addr, "alert %d" % alert_id)
        first = self.query(
            "SELECT user_name, role, at FROM alert_acks WHERE alert = %s ORDER BY id LIMIT 1",
            (alert_id,),
        )[0]
        return {"by": first["user_name"], "role": first["role"], "at": first["at"]}

    def quarantine(self):
        """Shoe ids seen on the broker that the floor has no key for (never tables). Every
        collector subscribes to every shoe's state (and, without per-lease subscriptions, to its
        events), so each counts each message of an unknown id in its own row: the messages seen
        are the greatest count, not the sum (N collectors would show N times as many)."""
        return self.query(
            "SELECT shoe, max(messages) AS messages, min(first_seen) AS first_seen,"
            " max(last_seen) AS last_seen FROM quarantine GROUP BY shoe ORDER BY "
            "max(last_seen) DESC LIMIT 200"
        )

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
                    pg.set_role(conn, self.role)
                conn.execute("LISTEN floor")
                self._publish(self.floor())
                last_tick = time.monotonic()
                while not self._stop.is_set():
                    self.ops.listen_at = time.time()
                    for _ in conn.notifies(timeout=0.2, stop_after=1):
                        pass
                    # catch every change committed since the last look (notify or not)
                    rows = self._changed(conn)
                    if time.monotonic() - last_tick >= self.tick:
                        last_tick = time.monotonic()
                        with self._cond:
                            self.version += 1
                            self._cond.notify_all()  # pages re-draw ages and link health
                    self._publish(rows)
                conn.close()
            except Exception as e:
                # the listener thread's top loop: PostgreSQL away (or anything else) is said and
                # tried again in a second; a dead listener would freeze every page
                self.errors.note("listen", e)
                self._stop.wait(1.0)

    def _changed(self, conn):
        # look 2 s back: a transaction that took its timestamp before the last look may commit
        # after it; rows already shown unchanged are not sent again
        cur = conn.execute(
            "SELECT %s FROM shoes s WHERE updated_at > to_timestamp(%%s) "
            "ORDER BY shoe" % _TABLE_COLS,
            (self._since - 2.0,),
        )
        rows = [_row(cur, r) for r in cur.fetchall()]
        with self._cond:
            return [r for r in rows if self.tables.get(r["shoe"]) != r]

    def stream(self, wfile, alive=lambda: True):
        """Server-sent events for one page until it goes away or its session ends."""
        with self._cond:
            snap = list(self.tables.values())
            seen = self.version
        self._send(wfile, "floor", {"tables": snap, "full": True, "now": time.time()})
        while not self._stop.is_set():
            if not alive():
                self._send(wfile, "logout", {})
                return
            with self._cond:
                self._cond.wait_for(
                    lambda seen=seen: self.version != seen or self._stop.is_set(), 15
                )
                changed = [] if self.version == seen else getattr(self, "_pending", [])
                if self.version - seen > 1:  # missed some: send everything
                    changed = list(self.tables.values())
                seen = self.version
            self._send(wfile, "floor", {"tables": changed, "now": time.time()})

    @staticmethod
    def _send(wfile, event, data):
        wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data, default=str))).encode())
        wfile.flush()

    # ---- who is asking --------------------------------------------------------------------------
    def refresh_users(self):
        """Re-read the users file when `shoectl floor-user` changed it (at most once a second);
        sessions of users removed or given another role end."""
        u = self.users
        now = time.monotonic()
        if u is None or u.path is None or now - getattr(self, "_users_at", 0) < 1.0:
            return
        self._users_at = now
        try:
            mtime = u.path.stat().st_mtime_ns
        except OSError:
            return
        if getattr(self, "_users_mtime", None) in (None, mtime):
            self._users_mtime = mtime
            return
        from host_tools.floor.auth import Users

        try:
            fresh = Users.load(u.path)
        except ShoeError as e:
            self.note("users_file_refused", detail=str(e))
            return
        self._users_mtime = mtime
        u.users = fresh.users
        self.sessions.retain(
            lambda s: s.via != "password" or u.users.get(s.user, {}).get("role") == s.role
        )
        self.note("users_reloaded", detail="%d users" % len(u.users))

    def login(self, name, password, addr):
        """(session, None) or (None, (status, reason)): throttled, then argon2-verified."""
        keys = ("user:" + str(name)[:64], "addr:" + str(addr))
        wait = self.throttle.wait(keys)
        if wait > 0:
            self.note("login_throttled", name, None, addr)
            return None, (
                429,
                "too many failed logins: try again in %d s" % (wait + 1),
                int(wait + 1),
            )
        role = self.users.verify(name, password) if self.users else None
        if role is None:
            self.throttle.fail(keys)
            self.note("login_failed", name, None, addr)
            return None, (401, "wrong user name or password", None)
        s = self.sessions.create(name, role)
        self.note("login", name, role, addr)
        return s, None

    def from_header(self, headers, sid):
        """The upstream identity provider's user (trust_header): a session bound to it."""
        user = (headers.get(self.trust_header) or "").strip()
        if not user:
            return None, None
        groups = [g.strip() for g in (headers.get(self.trust_groups_header) or "").split(",")]
        roles = {self.role_map[g] for g in groups if g in self.role_map}
        if len(roles) != 1:
            return None, "groups %r map to %s" % (groups, sorted(roles) or "no role")
        role = roles.pop()
        s = self.sessions.get(sid)
        if s is None or s.user != user or s.role != role:
            s = self.sessions.create(user, role, via="header")
        return s, None

    # ---- HTTP -----------------------------------------------------------------------------------
    def start(self):
        view = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "floor"
            sys_version = ""
            timeout = 60  # a client that connects and says nothing is let go

            def log_message(self, *a):
                pass

            @property
            def addr(self):
                return self.client_address[0]

            def _reply(self, code, body, ctype, headers=()):
                data = body if isinstance(body, bytes) else body.encode()
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self._common(headers)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _common(self, headers=()):
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("X-Frame-Options", "DENY")
                self.send_header("Referrer-Policy", "same-origin")
                if view.tls:
                    self.send_header("Strict-Transport-Security", "max-age=31536000")
                for k, v in headers:
                    self.send_header(k, v)

            def _json(self, obj, code=200, headers=()):
                self._reply(
                    code if obj is not None else 404,
                    json.dumps(obj, default=str),
                    "application/json",
                    headers,
                )

            def _error(self, code, reason, kind):
                if kind == "page":
                    self._reply(
                        code,
                        '<!doctype html><p>%d: %s. <a href="/">floor</a></p>\n' % (code, reason),
                        "text/html; charset=utf-8",
                    )
                else:
                    self._json({"error": reason}, code)

            def _cookie(self, value, clear=False):
                c = "%s=%s; Path=/; HttpOnly; SameSite=Strict" % (COOKIE, value)
                if view.tls:
                    c += "; Secure"
                if clear:
                    c += "; Max-Age=0"
                return ("Set-Cookie", c)

            def _sid(self):
                for part in (self.headers.get("Cookie") or "").split(";"):
                    k, _, v = part.strip().partition("=")
                    if k == COOKIE:
                        return v
                return None

            def _body(self):
                try:
                    n = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    n = -1
                if n < 0 or n > _MAX_BODY:
                    return None
                return self.rfile.read(n).decode("utf-8", "replace") if n else ""

            def _same_origin(self):
                # a browser always sends Origin on a POST: another site's form is refused here
                # as well as by the CSRF token and the SameSite cookie
                origin = self.headers.get("Origin")
                if origin is None:  # not a browser: the CSRF token still decides
                    return True
                host = self.headers.get("Host") or ""
                return origin == "%s://%s" % ("https" if view.tls else "http", host)

            def _login_page(self, code=200, message="", headers=()):
                page = (STATIC / "login.html").read_text()
                if view.trust_header:
                    message = "Log in through your identity provider."
                page = page.replace("<!--MESSAGE-->", _html(message))
                self._reply(code, page, "text/html; charset=utf-8", headers)

            def _route(self, method, path):
                for m, rx, roles, kind in _ROUTES:
                    if m == method and rx.match(path):
                        return roles, kind
                return None, None

            def _who(self):
                sid = self._sid()
                if view.trust_header:
                    s, why = view.from_header(self.headers, sid)
                    return s, why
                return view.sessions.get(sid), None

            def do_GET(self):
                self._timed("GET")

            def do_POST(self):
                self._timed("POST")

            def send_response(self, code, message=None):
                self._code = code
                super().send_response(code, message)

            def _timed(self, method):
                t0 = time.monotonic()
                self._code = None
                path = urlsplit(self.path).path
                kind = (
                    "login"
                    if path == "/login"
                    else (
                        self._route("GET" if method == "HEAD" else method, unquote(path))[1]
                        or "other"
                    )
                )
                try:
                    self._handle(method)
                finally:
                    view.ops.request(kind, self._code, time.monotonic() - t0)

            def _handle(self, method):
                url = urlsplit(self.path)
                path = unquote(url.path)
                try:
                    if path == "/login" and method == "GET":
                        return self._login_page()
                    view.refresh_users()
                    if path == "/login" and method == "POST":
                        return self._do_login()
                    roles, kind = self._route("GET" if method == "HEAD" else method, path)
                    if roles is None:
                        return self._error(404, "not found", "api")
                    s, why = self._who()
                    if s is None:
                        if why:
                            view.note("refused", None, None, self.addr, why)
                        if kind == "page":
                            self.send_response(303)
                            self.send_header("Location", "/login?next=" + quote(path))
                            self.send_header("Content-Length", "0")
                            self._common()
                            return self.end_headers()
                        return self._error(401, "log in first", kind)
                    extra = []
                    if view.trust_header and s.id != self._sid():
                        extra.append(self._cookie(s.id))
                    if s.role not in roles:
                        view.note("denied", s.user, s.role, self.addr, "%s %s" % (method, path))
                        return self._error(403, "not for the %s role" % s.role, kind)
                    if method == "POST":
                        body = self._body()
                        if body is None:
                            return self._error(413, "request too large", kind)
                        form = parse_qs(body)
                        token = self.headers.get("X-CSRF-Token") or (form.get("csrf") or [None])[0]
                        if not self._same_origin() or not s.csrf_ok(token):
                            view.note("csrf_refused", s.user, s.role, self.addr, path)
                            return self._error(403, "missing or wrong CSRF token", kind)
                        return self._post(path, s)
                    return self._get(path, s, kind, extra)
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass
                except (psycopg.Error, ShoeError) as e:  # PostgreSQL away: say so, do not
                    view.db_errors += 1  # drop the line
                    view.errors.note("database", e)
                    self._error(503, "the floor's database is unavailable", "api")

            def _do_login(self):
                if view.trust_header:
                    return self._login_page(403)
                body = self._body()
                if body is None:
                    return self._error(413, "request too large", "page")
                if not self._same_origin():
                    return self._login_page(403, "refused: the form came from another site")
                form = parse_qs(body)
                name = (form.get("username") or [""])[0]
                password = (form.get("password") or [""])[0]
                nxt = (form.get("next") or ["/"])[0]
                if not nxt.startswith("/") or nxt.startswith("//") or "\\" in nxt:
                    nxt = "/"
                s, err = view.login(name, password, self.addr)
                if err:
                    code, reason, retry = err
                    hdr = [("Retry-After", str(retry))] if retry else []
                    return self._login_page(code, reason, hdr)
                self.send_response(303)
                self.send_header("Location", nxt)
                self.send_header("Content-Length", "0")
                self._common([self._cookie(s.id)])
                self.end_headers()

            def _post(self, path, s):
                if path == "/logout":
                    view.sessions.drop(s.id)
                    view.note("logout", s.user, s.role, self.addr)
                    return self._json({"ok": True}, headers=[self._cookie("", clear=True)])
                alert = int(path.split("/")[3])
                a = view.acknowledge(alert, s, self.addr)
                return self._json(a)

            def _get(self, path, s, kind, extra):
                if kind == "page":
                    return self._reply(
                        200,
                        (STATIC / "floor.html").read_bytes(),
                        "text/html; charset=utf-8",
                        extra,
                    )
                if path == "/api/me":
                    return self._json(
                        {
                            "user": s.user,
                            "role": s.role,
                            "csrf": s.csrf,
                            "via": s.via,
                            "may": _may(s.role),
                        },
                        headers=extra,
                    )
                if path == "/api/floor":
                    return self._json({"tables": view.floor(), "now": time.time()}, headers=extra)
                if path.startswith("/api/table/"):
                    return self._json(view.table(path[len("/api/table/") :]), headers=extra)
                if path.startswith("/api/round/"):
                    shoe, rnd = path[len("/api/round/") :].split("/")
                    return self._json(view.round_view(shoe, int(rnd)), headers=extra)
                if path.startswith("/api/timeline/"):
                    return self._json(view.timeline(path[len("/api/timeline/") :]), headers=extra)
                if path == "/api/alerts":
                    return self._json(
                        {
                            "alerts": view.alerts(),
                            "quarantine": view.quarantine(),
                            "now": time.time(),
                        },
                        headers=extra,
                    )
                if path == "/api/audit":
                    return self._json(
                        {"access": view.recent_access(), "now": time.time()}, headers=extra
                    )
                if path == "/events":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self._common(extra)
                    self.end_headers()
                    with view.ops.lock:
                        view.ops.streams += 1
                    try:
                        view.stream(self.wfile, alive=lambda: view.sessions.valid(s))
                    finally:
                        with view.ops.lock:
                            view.ops.streams -= 1
                    self.close_connection = True
                    return None
                return self._error(404, "not found", kind)

        self.server = _ViewServer((self.host, self.port), Handler)
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            try:
                ctx.load_cert_chain(self.cert, self.key)
            except (OSError, ssl.SSLError) as e:
                self.server.server_close()
                raise ShoeError("cannot load the TLS certificate/key: %s" % e) from e
            # the handshake happens in the request's thread, not in the accepting one
            self.server.socket = ctx.wrap_socket(
                self.server.socket, server_side=True, do_handshake_on_connect=False
            )
        self.port = self.server.server_address[1]
        self._listener = threading.Thread(target=self._listen, name="floor-listen", daemon=True)
        self._listener.start()
        threading.Thread(
            target=self.server.serve_forever, args=(0.1,), name="floor-http", daemon=True
        ).start()
        return self

    @property
    def url(self):
        return "%s://%s:%d/" % ("https" if self.tls else "http", self.host, self.port)

    def stop(self):
        """Stop serving and leave no database session open: the listener ends (it looks at
        the stop flag every 0.2 s) and every request thread's connection is closed (they used
        to stay open until collected: PostgreSQL refused to drop the database after a stop)."""
        self._stop.set()
        self.sessions.close()
        with self._cond:
            self._cond.notify_all()
        if self.server:
            self.server.shutdown()
            self.server.server_close()
        if self._listener is not None:
            self._listener.join(10)
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.close()
            except psycopg.Error:
                pass


# request durations (s): the histogram's upper bounds (Prometheus `le`)
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class ViewOps:
    """The view's figures for /metrics: requests by kind and status, their durations (the event
    stream's long-lived ones not timed), logins by outcome, open streams."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = collections.Counter()  # (kind, code) -> n
        self.logins = collections.Counter({"ok": 0, "failed": 0, "throttled": 0})
        self.hist = {}  # kind -> [bucket counts..., sum, count]
        self.streams = 0
        self.listen_at = 0.0

    def request(self, kind, code, seconds):
        with self.lock:
            self.requests[(kind, code or 0)] += 1
            if kind == "stream":
                return
            h = self.hist.setdefault(kind, [0] * len(BUCKETS) + [0.0, 0])
            for i, le in enumerate(BUCKETS):
                if seconds <= le:
                    h[i] += 1
            h[-2] += seconds
            h[-1] += 1

    def login(self, outcome):
        with self.lock:
            self.logins[outcome] += 1


class _ViewServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that fails the TLS handshake or goes away is no error of the view's
        import sys

        if isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def _may(role):
    """The routes this role may use (the page draws its links from it)."""
    return sorted({p for m, p, roles, kind in ROUTES if role in roles})


def _html(s):
    return (s or "").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
