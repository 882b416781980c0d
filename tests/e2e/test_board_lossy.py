"""The real firmware on the virtual board, reached through a proxy that corrupts 1 % of the bytes,
drops and duplicates 1 % of the chunks and pulls the cable for seconds, while the board also
restarts: commands still get their replies and every event reaches the audit store exactly once,
in order, with its MAC and hash chain intact."""

import contextlib
import time

import pytest

from host_tools.audit import AuditStore
from host_tools.errors import ShoeError
from host_tools.sim.faultproxy import FaultProxy
from host_tools.sim.provision_sim import DEMO_KEYS
from tests.support import host_link, wait_for


@pytest.mark.slow
def test_lossy_cable_pulls_and_restarts(tmp_path, sim_board):
    board = sim_board
    audit = AuditStore(tmp_path / "audit.sqlite")
    proxy = FaultProxy(
        ("127.0.0.1", board.host_port), seed=5, corrupt=0.01, drop=0.01, dup=0.01, ensure=True
    ).start()  # each kind at least once, not luck
    ok = failed = 0
    with contextlib.closing(proxy), host_link(proxy.url, audit=audit, open_timeout=30) as link:
        shoe = link.shoe_id
        for life in range(5):
            for _ in range(4):
                try:
                    st = link.command("status", {}, timeout=15)
                    assert st["ok"] and st["boot"] == life + 1
                    ok += 1
                except ShoeError:
                    failed += 1  # a volatile reply lost to a cut is allowed, never a wrong one
            if life == 2:
                proxy.cut(3.0)  # the cable pulled for 3 s
                time.sleep(3.5)
            board.restart()  # and a power cut: a new hello event from the next boot
        assert wait_for(lambda: sum(1 for e in audit.events(shoe, kinds=["hello"])) >= 6, 60)
    assert ok >= 18
    assert proxy.stats["corrupted"] and proxy.stats["dropped"] and proxy.stats["duplicated"]
    assert proxy.stats["cuts"] == 1
    evs = audit.events(shoe)
    assert [e["eseq"] for e in evs] == list(range(1, len(evs) + 1))
    assert all(e["chain"] == "ok" for e in evs)
    assert [e["body"]["boot"] for e in evs if e["kind"] == "hello"] == list(range(1, 7))
    rep = audit.verify(shoe, DEMO_KEYS["shoe"])
    assert not (rep["bad_mac"] or rep["broken"] or rep["gaps"])
    audit.close()
