"""PostgreSQL for the floor: versioned migrations, roles, and an embedded server for tests/laptops.

    migrate(conninfo) -> [versions applied]   migrations/NNN_name.sql in order, each once, in its
        own transaction, recorded in schema_migrations; serialised by an advisory lock so several
        collectors starting together migrate once.
    EmbeddedPostgres(dir).start() -> "postgresql://..."   PostgreSQL 16 from the pgserver wheel.

Roles (migrations/002_roles.sql): floor_collector (writes events, rounds, alerts, leases) and
floor_reader (SELECT only: the floor view). Production grants them to login roles; the commands
`SET ROLE` to them (--role) so a superuser URL on a laptop still runs with the narrow rights.
"""

import re
from pathlib import Path

from host_tools.errors import ShoeError

MIGRATIONS = Path(__file__).with_name("migrations")
_MIGRATE_LOCK = 0x5E0E_F100  # advisory lock id for migrations


def migration_files():
    out = []
    for f in sorted(MIGRATIONS.glob("*.sql")):
        m = re.match(r"(\d+)_([a-z0-9_]+)\.sql$", f.name)
        if not m:
            raise ShoeError("migration file %s is not NNN_name.sql" % f.name)
        out.append((int(m.group(1)), m.group(2), f))
    versions = [v for v, _, _ in out]
    if len(set(versions)) != len(versions):
        raise ShoeError("two migration files share a version")
    return out


def connect(conninfo, autocommit=True):
    import psycopg

    try:
        return psycopg.connect(conninfo, autocommit=autocommit)
    except psycopg.Error as e:
        raise ShoeError("cannot connect to PostgreSQL: %s" % str(e).strip().splitlines()[0]) from e


def set_role(conn, role):
    """SET ROLE to `role`, quoted as an identifier (psycopg.sql): a role name is never SQL."""
    from psycopg import sql

    conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))


def migrate(conninfo):
    conn = connect(conninfo)
    try:
        conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATE_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
            "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
        applied = []
        for version, name, f in migration_files():
            if version in done:
                continue
            with conn.transaction():
                conn.execute(f.read_text())
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (version, name),
                )
            applied.append(version)
        conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATE_LOCK,))
        return applied
    finally:
        conn.close()
