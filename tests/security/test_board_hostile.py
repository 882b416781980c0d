"""ShoeLink against the virtual board (MicroPython) through an attacker on the cable
(FaultProxy hostile mode): injected REFUSE frames and HELLOs with a bad MAC while it connects do
not abort `open()` (issue 9 finding 6); commands that keep timing out make ShoeLink start a new
session by itself, counted; once the attacker stops, the link works."""

import contextlib

import pytest

from host_tools.errors import ShoeError
from host_tools.link import ShoeLink
from host_tools.sim.faultproxy import DATA, HELLO, REFUSE, UP, FaultProxy, Frame, FrameMitm
from shoe.link.frame import VERSION
from tests.support import host_link


def test_shoelink_has_no_default_key():
    with pytest.raises(TypeError):
        ShoeLink("loop://")
    with pytest.raises(ValueError):
        ShoeLink("loop://", b"")


@pytest.mark.slow
def test_refuse_and_bad_hello_during_open_then_a_stall_then_recovery(sim_board):
    mode = {"phase": "connect"}

    def rule(d, f, mitm):
        if mode["phase"] == "connect" and f.ftype == HELLO:
            # toward the host: a REFUSE "bad_key" and the shoe's HELLO with a broken MAC, each
            # before the genuine HELLO; toward the shoe the same
            return [
                Frame(VERSION, REFUSE, 0, 0, b"\xa1freason\x67bad_key"),
                f.copy(mac=bytes(8)),
                f,
            ]
        if mode["phase"] == "black_hole" and d == UP and f.ftype == DATA:
            return []  # every command lost, heartbeats pass: the link "looks up"
        return None

    mitm = FrameMitm(rule)
    proxy = FaultProxy(("127.0.0.1", sim_board.host_port), hostile=mitm).start()
    with contextlib.closing(proxy), host_link(proxy.url, resync_after=2) as link:
        err = link.stats()["errors"]
        assert err.get("refused", 0) + err.get("refuse_unverified", 0) >= 1
        assert err.get("bad_key", 0) >= 1 and mitm.stats["altered"] >= 3
        mode["phase"] = None
        assert link.command("status", {}, timeout=10)["ok"]
        mode["phase"] = "black_hole"
        for _ in range(2):
            with pytest.raises(ShoeError):
                link.command("status", {}, timeout=1.0)
        assert link.resyncs == 1 and link.stats()["resyncs"] == 1
        mode["phase"] = None
        assert link.command("status", {}, timeout=10)["ok"]
        assert link.ep.errors()["sessions"] >= 2  # the new session it started
