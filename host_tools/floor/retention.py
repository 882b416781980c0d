"""Retention of the floor's events: archive whole day partitions to files, verify, then drop.

    partitions(conn) -> [Partition(name, lo, hi)]   events' partitions, oldest first (UTC)
    retire(conn, directory, days, now=None, archive_only=False, dry_run=False) -> [report]

For each partition whose upper bound is at least `days` days old: COPY it (text format, rows in
(shoe, eseq) order) to <directory>/<partition>.copy with a manifest <partition>.json (range, rows,
SHA-256). An archive already there is not written again but verified: the file's SHA-256 must be
the manifest's, and a fresh COPY of the partition from the database must hash to the same value
(the file holds exactly what the database holds). Only then, in one transaction: the highest eseq
of each shoe in it raises that shoe's archived horizon (event_horizon: the insert trigger skips an
archived event sent again), the archive is recorded (table `archives`), and the partition is
detached and dropped. A partition whose archive does not verify is refused and left attached.
Rows are never deleted or updated (migrations/003_trust.sql): runs as the tables' owner.
"""

import hashlib
import json
import os
import re
from collections import namedtuple
from datetime import datetime, timedelta, timezone
from pathlib import Path

from psycopg import sql

from host_tools.errors import ShoeError

Partition = namedtuple("Partition", "name lo hi")
_BOUND = re.compile(r"FOR VALUES FROM \((.+)\) TO \((.+)\)$")


def _bound(text):
    text = text.strip()
    if text == "MINVALUE":
        return None
    if text == "MAXVALUE":
        return datetime.max.replace(tzinfo=timezone.utc)
    return datetime.fromisoformat(text.strip("'")).astimezone(timezone.utc)


def partitions(conn):
    conn.execute("SET TimeZone = 'UTC'")
    rows = conn.execute(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i JOIN pg_class c "
        "ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass"
    ).fetchall()
    out = []
    for name, bound in rows:
        m = _BOUND.match(bound or "")
        if m:
            out.append(Partition(name, _bound(m.group(1)), _bound(m.group(2))))
    return sorted(out, key=lambda p: p.hi)


def _copy_sql(name):
    return sql.SQL("COPY (SELECT * FROM {} ORDER BY shoe, eseq) TO STDOUT").format(_ident(name))


def _ident(name):
    if not re.fullmatch(r"events_[a-z0-9_]+", name):
        raise ShoeError("not an events partition: %r" % name)
    return sql.Identifier(name)


def _db_digest(conn, name):
    h, rows = hashlib.sha256(), 0
    with conn.cursor() as cur:
        with cur.copy(_copy_sql(name)) as cp:
            for chunk in cp:
                h.update(chunk)
                rows += bytes(chunk).count(b"\n")
    return h.hexdigest(), rows


def _file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def archive(conn, part, directory):
    """Write the partition's archive and manifest (atomically, flushed to disk) -> manifest."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    data, tmp = directory / (part.name + ".copy"), directory / (part.name + ".copy.tmp")
    h, rows = hashlib.sha256(), 0
    with open(tmp, "wb") as f, conn.cursor() as cur:
        with cur.copy(_copy_sql(part.name)) as cp:
            for chunk in cp:
                chunk = bytes(chunk)
                f.write(chunk)
                h.update(chunk)
                rows += chunk.count(b"\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, data)
    man = {
        "partition": part.name,
        "from": part.lo.isoformat() if part.lo else "MINVALUE",
        "to": part.hi.isoformat(),
        "rows": rows,
        "sha256": h.hexdigest(),
        "file": data.name,
        "format": "PostgreSQL COPY text, columns of table events, ORDER BY shoe, eseq",
    }
    mtmp = directory / (part.name + ".json.tmp")
    mtmp.write_text(json.dumps(man, sort_keys=True, indent=1) + "\n")
    os.replace(mtmp, directory / (part.name + ".json"))
    return man


def verify(conn, part, directory):
    """-> (manifest, []) when the archive on disk is exactly the partition; else problems."""
    directory = Path(directory)
    mpath = directory / (part.name + ".json")
    try:
        man = json.loads(mpath.read_text())
        data = directory / man["file"]
        if man.get("partition") != part.name or "/" in man["file"]:
            return man, ["the manifest %s names another partition or file" % mpath]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return None, ["no readable manifest %s (%s)" % (mpath, e)]
    problems = []
    try:
        on_disk = _file_digest(data)
    except OSError as e:
        return man, ["the archive %s cannot be read (%s)" % (data, e)]
    if on_disk != man.get("sha256"):
        problems.append(
            "the archive %s does not match its manifest's SHA-256 (altered or damaged)" % data
        )
    in_db, rows = _db_digest(conn, part.name)
    if in_db != man.get("sha256") or rows != man.get("rows"):
        problems.append(
            "the partition %s no longer matches its archive (%d rows in the "
            "database, %s in the manifest)" % (part.name, rows, man.get("rows"))
        )
    return man, problems


def _drop(conn, part, man):
    with conn.transaction():
        conn.execute(
            sql.SQL(
                "INSERT INTO event_horizon AS h (shoe, eseq) "
                "SELECT shoe, max(eseq) FROM {} GROUP BY shoe "
                "ON CONFLICT (shoe) DO UPDATE SET eseq = GREATEST(h.eseq, EXCLUDED.eseq)"
            ).format(_ident(part.name))
        )
        conn.execute(
            "INSERT INTO archives (partition, range_from, range_to, rows, file, sha256) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (part.name, man["from"], man["to"], man["rows"], man["file"], man["sha256"]),
        )
        conn.execute(sql.SQL("ALTER TABLE events DETACH PARTITION {}").format(_ident(part.name)))
        conn.execute(sql.SQL("DROP TABLE {}").format(_ident(part.name)))


def retire(conn, directory, days, now=None, archive_only=False, dry_run=False):
    """Archive, verify, detach and drop every partition older than `days` days. -> [dict] one
    per partition: {"partition", "rows", "sha256", "action": archived|dropped|refused|would,
    "problems"}. Raises nothing for a refused partition: the report says why."""
    if days < 1:
        raise ShoeError("keep at least one day of events (--days >= 1)")
    now = now or datetime.now(timezone.utc)
    cutoff = now - timedelta(days=days)
    out = []
    for part in partitions(conn):
        if part.hi > cutoff:
            continue
        rep = {"partition": part.name, "to": part.hi.isoformat(), "problems": []}
        out.append(rep)
        if dry_run:
            rep["action"] = "would"
            continue
        if not (Path(directory) / (part.name + ".json")).exists():
            archive(conn, part, directory)
            rep["written"] = True
        man, problems = verify(conn, part, directory)
        rep.update(
            rows=(man or {}).get("rows"), sha256=(man or {}).get("sha256"), problems=problems
        )
        if problems:
            rep["action"] = "refused"
        elif archive_only:
            rep["action"] = "archived"
        else:
            _drop(conn, part, man)
            rep["action"] = "dropped"
    return out
