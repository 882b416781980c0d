"""The multi-process floor (host_tools/floor/procfloor.py, bench/bench_floor_procs.py) at a tiny
size: every event each shoe sealed is stored once, and every process it started has exited."""
import os
import tempfile

from host_tools.floor import pg
from host_tools.floor.procfloor import ProcFloor
from tests.host_tools.floor.conftest import wait_for


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:                        # a zombie (exited, not reaped) is not running
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_tables_spread_over_processes_lose_nothing_and_leave_no_process(db_url):
    with ProcFloor(tempfile.mkdtemp(prefix="test-procs-"), tables=4, per_process=2,
                   collectors=2, rate=8, broker="amqtt", db_url=db_url) as f:
        assert len(f.groups) == 2
        conn = pg.connect(f.db_url)
        f.go()
        wait_for(lambda: sum(f.emitted().values()) >= 40, what="40 events sealed")
        f.stop_driving()
        sealed = f.emitted()
        rows = {}

        def stored():
            rows.update({r[0]: r[1:] for r in conn.execute(
                "SELECT shoe, count(*), count(DISTINCT eseq), min(eseq), max(eseq) FROM events "
                "GROUP BY shoe").fetchall()})
            return all(rows.get(s, (0, 0, 0, 0))[1] >= e for s, e in sealed.items())

        wait_for(stored, what=lambda: "every sealed event stored: %s vs %s" % (sealed, rows))
        for s, e in sealed.items():    # exactly eseq 1..e, each once: 0 lost, 0 duplicated
            assert rows[s] == (e, e, 1, e), (s, rows[s], e)
        conn.close()
        pids = list(f.pids)
        assert len(pids) >= 2 + 2 + 1 + 1       # groups, collectors, broker, view
    assert {(s, e) for s, e, t in f.sent()} == {(s, e) for s, n in sealed.items()
                                                 for e in range(1, n + 1)}
    assert [p for p in pids if _alive(p)] == []
