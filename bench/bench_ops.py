"""What the floor's operations cost (issue 20, item 5), on the embedded PostgreSQL 16.

    .venv/bin/python bench/bench_ops.py [--rows 100000] [--batch 1000]

1. Inserting events as the collector does (executemany, one transaction per batch of `batch`,
   as floor_collector): the schema before 004 (primary key, ON CONFLICT DO NOTHING) against the
   day partitions with the (shoe, eseq) trigger; then the same rows again (all duplicates).
2. floor-retention on one day partition of `rows` rows: archive (COPY to a file), verify
   (re-read the file, COPY again from the database), detach and drop.
"""

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from host_tools.floor import pg, retention  # noqa: E402
from host_tools.sim.floor import embedded_pg  # noqa: E402


def _rows(n, shoes=500, when=None):
    out = []
    for i in range(n):
        shoe, eseq = "T%03d" % (i % shoes), i // shoes + 1
        r = (
            shoe,
            eseq,
            "card",
            '{"round": 1, "pos": 3}',
            os.urandom(16),
            os.urandom(16),
            os.urandom(16),
            os.urandom(120),
            "ok",
            "c1",
        )
        out.append(r + ((when,) if when else ()))
    return out


def _insert(url, rows, batch, old_schema):
    conn = pg.connect(url)
    conn.execute("SET ROLE floor_collector")
    cols = "shoe, eseq, kind, body, prev, hash, mac, payload, chain, collector"
    sql = "INSERT INTO events (%s) VALUES (%s)%s" % (
        cols,
        ",".join(["%s"] * 10),
        (" ON CONFLICT (shoe, eseq) DO NOTHING" if old_schema else ""),
    )
    t0 = time.perf_counter()
    for i in range(0, len(rows), batch):
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(sql, rows[i : i + batch])
    dt = time.perf_counter() - t0
    conn.close()
    return dt


def _db(server, name, upto):
    c = pg.connect(server)
    c.execute("CREATE DATABASE %s" % name)
    c.close()
    base, _, q = server.partition("?")
    url = base.rsplit("/", 1)[0] + "/" + name + ("?" + q if q else "")
    conn = pg.connect(url)
    conn.execute(
        "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT "
        "NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for v, n, f in pg.migration_files():
        if v <= upto:
            conn.execute(f.read_text())
            conn.execute("INSERT INTO schema_migrations VALUES (%s, %s)", (v, n))
    conn.close()
    return url


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--batch", type=int, default=1000)
    a = ap.parse_args()
    srv = embedded_pg.EmbeddedPostgres()
    server = srv.start()
    try:
        rows = _rows(a.rows)
        for label, upto in (("before 004 (primary key)", 3), ("004 (day partitions, trigger)", 4)):
            url = _db(server, "bench_%d" % upto, upto)
            new = _insert(url, rows, a.batch, upto < 4)
            again = _insert(url, rows, a.batch, upto < 4)
            print(
                "%-32s %d rows: %6.0f rows/s new, %6.0f rows/s all duplicates"
                % (label, a.rows, a.rows / new, a.rows / again)
            )
        # retention of one old day
        url = _db(server, "bench_ret", 4)
        own = pg.connect(url)
        old = datetime.now(timezone.utc) - timedelta(days=10)
        own.execute("SELECT floor_event_partitions(%s, 1)", (old,))
        cols = "shoe, eseq, kind, body, prev, hash, mac, payload, chain, collector, received_at"
        with own.transaction(), own.cursor() as cur:
            cur.executemany(
                "INSERT INTO events (%s) VALUES (%s)" % (cols, ",".join(["%s"] * 11)),
                _rows(a.rows, when=old),
            )
        d = tempfile.mkdtemp(prefix="shoe-retention-")
        t0 = time.perf_counter()
        rep = retention.retire(own, d, days=5, archive_only=True)
        t1 = time.perf_counter()
        rep = retention.retire(own, d, days=5)
        t2 = time.perf_counter()
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(
            "retention of one day of %d rows: archive+verify %.2f s, verify again+detach+drop "
            "%.2f s, archive %.1f MB (%s)"
            % (a.rows, t1 - t0, t2 - t1, size / 1e6, rep[0]["action"])
        )
        own.close()
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
