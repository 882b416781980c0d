"""Real engines for the floor tests: the embedded broker (aedes, the default; amqtt where node is
missing) and one PostgreSQL 16 (pgserver) per session, a fresh database per test."""

import functools
import itertools

import pytest

from host_tools.floor import pg
from host_tools.sim.floor import brokers, embedded_pg
from tests import support

_n = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server():
    pytest.importorskip("pgserver", reason="no embedded PostgreSQL (pgserver) for this Python")
    srv = embedded_pg.EmbeddedPostgres()
    url = srv.start()
    yield url
    srv.stop()


@pytest.fixture
def db_url(pg_server):
    name = "floor_%d" % next(_n)
    c = pg.connect(pg_server)
    c.execute("CREATE DATABASE %s" % name)
    c.close()
    base, _, query = pg_server.partition("?")
    return base.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")


@pytest.fixture
def broker():
    b = brokers.embedded()
    b.start()
    yield b
    b.stop()


# the floor's waits are long (brokers, PostgreSQL, processes, on a loaded machine): deadlines of
# 120 s unless told (a condition met sooner returns at once)
wait_for = functools.partial(support.wait_for, timeout=120.0, interval=0.05)


def all_stored(floor, conn):
    """Every event every simulated shoe sealed is in PostgreSQL exactly once."""
    em = floor.emitted()
    st = floor.stored(conn)
    return all(st.get(s) == (e, e, e) for s, e in em.items() if e)


def wait_all_stored(floor, conn, timeout=180.0):
    wait_for(
        lambda: all_stored(floor, conn),
        timeout=timeout,
        what=lambda: (
            "every event stored: sealed %s, in PostgreSQL (rows, distinct, max) %s, "
            "collectors %s, gateway published %d"
            % (
                floor.emitted(),
                floor.stored(conn),
                [c.counts for c in floor.collectors],
                floor.gateway.published,
            )
        ),
    )
