"""/healthz and Prometheus /metrics for the floor's processes (collector, gateway, view).

    srv = serve("127.0.0.1:9101", samples, health)   # a daemon thread; srv.url; srv.stop()
        samples() -> [(name, type, help, [(labels dict, value), ...]), ...]  (a histogram's
                     samples are (suffix, labels, value): "_bucket", "_sum", "_count")
        health()  -> (ok, {details})      GET /healthz: 200 or 503 with the details as JSON
    collector_samples(c), collector_health(c), gateway_samples(gw), gateway_health(gw),
    view_samples(v), view_health(v)

The text exposition format 0.0.4 is written by hand (no dependency). Nothing secret is exposed:
counters, cursors, shoe ids and link state only.
"""

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from host_tools.errors import ShoeError


def _esc(v):
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render(families):
    out = []
    for name, kind, help_, samples in families:
        out.append("# HELP %s %s" % (name, help_))
        out.append("# TYPE %s %s" % (name, kind))
        for sample in samples:
            suffix, labels, value = sample if len(sample) == 3 else ("",) + tuple(sample)
            lab = ",".join('%s="%s"' % (k, _esc(v)) for k, v in sorted(labels.items()))
            v = float(value)
            text = "NaN" if math.isnan(v) else repr(v) if not v.is_integer() else "%d" % v
            out.append("%s%s%s %s" % (name, suffix, "{%s}" % lab if lab else "", text))
    return "\n".join(out) + "\n"


def address(text):
    host, _, port = (text or "").rpartition(":")
    if not host or not port.isdigit():
        raise ShoeError("--metrics must be HOST:PORT, e.g. 127.0.0.1:9101")
    return host, int(port)


class _MetricsServer:
    def __init__(self, httpd):
        self.httpd = httpd
        self.thread = threading.Thread(target=httpd.serve_forever, name="metrics", daemon=True)
        self.thread.start()

    @property
    def url(self):
        h, p = self.httpd.server_address[:2]
        return "http://%s:%d" % (h, p)

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def serve(where, samples, health):
    host, port = address(where) if isinstance(where, str) else where

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            try:
                if self.path == "/metrics":
                    body, code = render(samples()).encode(), 200
                    ctype = "text/plain; version=0.0.4; charset=utf-8"
                elif self.path == "/healthz":
                    ok, details = health()
                    body, code = (
                        json.dumps(dict(details, ok=ok), sort_keys=True, default=str).encode(),
                        200 if ok else 503,
                    )
                    ctype = "application/json"
                else:
                    body, code, ctype = b"not found\n", 404, "text/plain"
            except Exception as e:  # a figure that fails to read: say so, stay up (the
                #                          server's top: whatever a daemon's figure raises)
                body, code, ctype = ("error: %s\n" % type(e).__name__).encode(), 500, "text/plain"
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    try:
        httpd = ThreadingHTTPServer((host, port), Handler)
    except OSError as e:
        raise ShoeError("cannot serve metrics on %s:%d: %s" % (host, port, e.strerror)) from None
    httpd.daemon_threads = True
    return _MetricsServer(httpd)


# ---- the collector ------------------------------------------------------------------------------
def collector_samples(c):
    now = time.time()
    o = c.ops
    fams = [
        (
            "shoe_collector_events_stored_total",
            "counter",
            "events committed to PostgreSQL",
            [({}, c.counts["stored"])],
        ),
        (
            "shoe_collector_events_per_second",
            "gauge",
            "events committed per second (last 10 s)",
            [({}, o.rate())],
        ),
        (
            "shoe_collector_messages_total",
            "counter",
            "messages by what became of them",
            [({"outcome": k}, v) for k, v in sorted(c.counts.items()) if k != "stored"],
        ),
        (
            "shoe_collector_queue_depth",
            "gauge",
            "MQTT messages received, not yet processed",
            [({}, c.q.qsize())],
        ),
        (
            "shoe_collector_lag_seconds",
            "gauge",
            "receive to commit of the last batch's oldest message",
            [({}, o.lag)],
        ),
        (
            "shoe_collector_behind_events",
            "gauge",
            "events the gateways published that this collector's leased shoes do not hold yet",
            [({}, sum(max(0, h.published - h.eseq) for h in list(c.owned.values())))],
        ),
        ("shoe_collector_alerts_total", "counter", "alerts raised", [({}, c.counts["alerts"])]),
        (
            "shoe_collector_open_alerts",
            "gauge",
            "open alerts on the floor (all collectors)",
            [({}, o.open_alerts)],
        ),
        (
            "shoe_collector_leases",
            "gauge",
            "shoes this collector holds the lease of",
            [({}, len(c.owned))],
        ),
        (
            "shoe_collector_last_commit_timestamp_seconds",
            "gauge",
            "time of the last commit (Unix)",
            [({}, o.last_commit or 0)],
        ),
        (
            "shoe_collector_gateway_clock_skew_seconds",
            "gauge",
            "collector clock minus the gateway's (from its signed live state messages)",
            [({"shoe": s}, v) for s, v in sorted(o.skew.items())],
        ),
        (
            "shoe_collector_partitions_ahead",
            "gauge",
            "days of event partitions created ahead",
            [({}, o.ahead_ok)],
        ),
        (
            "shoe_collector_up",
            "gauge",
            "1 while the loop runs",
            [({}, 1 if now - o.loop_at < 5 else 0)],
        ),
    ]
    fams.append(error_family("collector", c.errors))
    fw = c.forward
    if fw is not None:
        fams.append(
            (
                "shoe_collector_alerts_forwarded_total",
                "counter",
                "alerts forwarded outside the page, by result",
                [({"result": k}, v) for k, v in sorted(fw.counts.items())],
            )
        )
        fams.append(
            (
                "shoe_collector_alert_queue_depth",
                "gauge",
                "alerts waiting for the webhook",
                [({}, fw.queued())],
            )
        )
    return fams


def collector_health(c):
    o = c.ops
    problems = []
    if time.time() - o.loop_at > 5:
        problems.append("the collector loop has not run for %.0f s" % (time.time() - o.loop_at))
    if c.client is None or not c.client.is_connected():
        problems.append("not connected to the broker")
    if c.conn is None or c.conn.closed:
        problems.append("no PostgreSQL connection")
    if c.last_error and o.last_commit and o.error_at > o.last_commit:
        problems.append("last error: %s" % str(c.last_error)[:200])
    return not problems, {
        "name": c.name,
        "leases": len(c.owned),
        "queue": c.q.qsize(),
        "last_commit": o.last_commit,
        "problems": problems,
        "errors": error_summary(c.errors),
    }


# ---- errors (floor/errlog.py), the same for every daemon ---------------------------------------
def error_family(daemon, errors):
    return (
        "shoe_%s_errors_total" % daemon,
        "counter",
        "errors met (each logged), by what failed",
        [({"where": k}, n) for k, n in sorted(dict(errors.counts).items())],
    )


def error_summary(errors, n=10):
    """For /healthz: how many errors, and the last n (time, what failed, the error)."""
    return {"total": errors.total, "recent": errors.recent(n)}


# ---- the gateway --------------------------------------------------------------------------------
def _link_up(t):
    try:
        return bool(t.link.up())
    except (ShoeError, OSError, AttributeError):  # a link closed or gone
        return False


def gateway_samples(gw):
    tables = sorted(list(gw.tables.items()))
    connected = gw.client is not None and gw.client.is_connected()
    return [
        (
            "shoe_gateway_broker_connected",
            "gauge",
            "1 while connected to the broker",
            [({}, 1 if connected else 0)],
        ),
        (
            "shoe_gateway_link_up",
            "gauge",
            "1 while the shoe's link is up",
            [({"shoe": s}, 1 if _link_up(t) else 0) for s, t in tables],
        ),
        (
            "shoe_gateway_store_head",
            "gauge",
            "highest event held in the local store",
            [({"shoe": s}, t.live.head or 0) for s, t in tables],
        ),
        (
            "shoe_gateway_published_cursor",
            "gauge",
            "every event up to this one acknowledged by the broker",
            [({"shoe": s}, t.cursor) for s, t in tables],
        ),
        (
            "shoe_gateway_inflight",
            "gauge",
            "events published, not yet acknowledged",
            [({"shoe": s}, len(t.inflight)) for s, t in tables],
        ),
        (
            "shoe_gateway_published_total",
            "counter",
            "events acknowledged by the broker",
            [({}, gw.published)],
        ),
        (
            "shoe_gateway_republished_total",
            "counter",
            "events published again on a replay request",
            [({}, gw.republished)],
        ),
        (
            "shoe_gateway_pruned_total",
            "counter",
            "events pruned from the local store",
            [({}, getattr(getattr(gw, "pruner", None), "pruned", 0))],
        ),
        (
            "shoe_gateway_link_failed",
            "gauge",
            "1 once the shoe's link stopped for good (its audit store failed)",
            [({"shoe": s}, 1 if t.failed else 0) for s, t in tables],
        ),
        error_family("gateway", gw.errors),
    ]


def gateway_health(gw):
    connected = gw.client is not None and gw.client.is_connected()
    links = {s: _link_up(t) for s, t in list(gw.tables.items())}
    problems = ([] if connected else ["not connected to the broker"]) + [
        "link to %s is down" % s for s, up in sorted(links.items()) if not up
    ]
    if gw.fatal:
        problems.insert(0, gw.fatal)
    return not problems, {
        "name": gw.name,
        "links": links,
        "problems": problems,
        "errors": error_summary(gw.errors),
    }


# ---- the view -----------------------------------------------------------------------------------
def view_samples(v):
    """The view's figures; the alert and session counts are read from PostgreSQL."""
    from host_tools.floor.view import BUCKETS

    o = v.ops
    with o.lock:
        requests = sorted(o.requests.items())
        logins = sorted(o.logins.items())
        hist = {k: list(h) for k, h in sorted(o.hist.items())}
        streams = o.streams
    counts = v.query(
        "SELECT (SELECT count(*) FROM alerts WHERE closed_at IS NULL) AS open, "
        "(SELECT count(*) FROM alerts a WHERE closed_at IS NULL AND NOT EXISTS ("
        "SELECT 1 FROM alert_acks k WHERE k.alert = a.id)) AS unacked"
    )[0]
    lat = []
    for kind, h in hist.items():
        for le, n in zip(BUCKETS, h):
            lat.append(("_bucket", {"kind": kind, "le": repr(le)}, n))
        lat.append(("_bucket", {"kind": kind, "le": "+Inf"}, h[-1]))
        lat.append(("_sum", {"kind": kind}, h[-2]))
        lat.append(("_count", {"kind": kind}, h[-1]))
    return [
        (
            "shoe_view_requests_total",
            "counter",
            "HTTP requests by route kind (page, api, stream, login, other) and status",
            [({"kind": k, "code": c}, n) for (k, c), n in requests],
        ),
        (
            "shoe_view_request_seconds",
            "histogram",
            "time to answer a request (pages, API, logins; the event stream is not timed)",
            lat,
        ),
        (
            "shoe_view_logins_total",
            "counter",
            "login attempts by outcome (ok, failed, throttled)",
            [({"outcome": k}, n) for k, n in logins],
        ),
        (
            "shoe_view_logins_failed_total",
            "counter",
            "failed logins (wrong user or password)",
            [({}, o.logins["failed"])],
        ),
        ("shoe_view_open_alerts", "gauge", "open alerts on the floor", [({}, counts["open"])]),
        (
            "shoe_view_unacknowledged_alerts",
            "gauge",
            "open alerts nobody acknowledged",
            [({}, counts["unacked"])],
        ),
        (
            "shoe_view_sessions",
            "gauge",
            "live login sessions (every view process)",
            [({}, len(v.sessions))],
        ),
        (
            "shoe_view_streams",
            "gauge",
            "open event streams (pages) on this process",
            [({}, streams)],
        ),
        (
            "shoe_view_database_errors_total",
            "counter",
            "requests answered 503: PostgreSQL unavailable",
            [({}, v.db_errors)],
        ),
        (
            "shoe_view_last_listen_timestamp_seconds",
            "gauge",
            "last turn of the change listener (Unix)",
            [({}, o.listen_at)],
        ),
        error_family("view", v.errors),
    ]


def view_health(v):
    import psycopg

    problems = []
    try:
        v.query("SELECT 1")
    except (ShoeError, psycopg.Error) as e:  # cannot connect / the query failed
        problems.append("PostgreSQL: %s" % str(e).strip().splitlines()[0][:200])
    if time.time() - v.ops.listen_at > 5:
        problems.append(
            "the change listener has not run for %.0f s" % (time.time() - v.ops.listen_at)
        )
    return not problems, {"url": v.url, "problems": problems, "errors": error_summary(v.errors)}
