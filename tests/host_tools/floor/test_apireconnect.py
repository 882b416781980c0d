"""A table system's GatewayLink outlives its gateway's API: when the connection is lost (the
gateway restarted) it logs in again by itself and fetches the events the gateway stored
meanwhile (`since`) before the live ones, each exactly once and in order; a command works again
at once; a range the gateway's store no longer holds is reported, not hidden.

A TableAPI in front of a stand-in link that stores each event in a real AuditStore (the shoe's
sealed payload, as ShoeLink stores it) and then delivers it to the API's listeners.
"""

import os
import threading
import time

import pytest

from host_tools.audit import AuditStore
from host_tools.errors import ShoeError
from host_tools.floor.tableapi import TableAPI
from host_tools.link import apiwire
from host_tools.link.viagateway import GatewayLink
from shoe.link.message import GENESIS, seal_message

KEY = b"s" * 32
SHOE = "T001"


class _Ep:
    stats = {"sessions": 1}


class StoringLink:
    """What TableAPI uses of a ShoeLink; emit() stores an event, then delivers it."""

    shoe_id = SHOE

    def __init__(self, audit):
        self.audit = audit
        self.listeners = []
        self.ep = _Ep()
        self.prev = GENESIS
        self.sent = {}  # eseq -> body

    def up(self):
        return True

    def stats(self):
        return {"up": True}

    def command(self, kind, body, timeout=5.0, supervisor=False):
        return {"did": kind}

    def emit(self, eseq):
        body = {"round": 1, "position": eseq, "commit": os.urandom(16)}
        payload, head = seal_message(KEY, "card", body, eseq, self.prev, SHOE)
        meta = {"prev": self.prev, "hash": head, "mac": payload[-16:], "payload": payload}
        self.audit.store(SHOE, eseq, "card", body, meta)
        self.prev = head
        self.sent[eseq] = body
        for fn in list(self.listeners):
            fn(("card", body, eseq))

    def alert(self, eseq, detail):
        """The link's own alert about event eseq (ShoeLink._check_reveal): flagged in the
        store, then queued with eseq 0."""
        self.audit.flag(SHOE, eseq, "reveal_mismatch", 1, detail)
        for fn in list(self.listeners):
            fn(("reveal_mismatch", {"round": 1, "detail": detail, "eseq": eseq}, 0))


def _until(cond, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def _drain(link, got):
    while True:
        ev = link.next_event(0)
        if ev is None:
            return got
        got.append(ev)


class Gateway:
    """The stand-in link and its store, and the API in front of them (stop(), start() again
    on the same socket and credential: a restarted gateway)."""

    def __init__(self, tmp_path):
        self.store = AuditStore(tmp_path / "gw.db")
        self.link = StoringLink(self.store)
        self.url = "gateway+unix://%s" % (tmp_path / "gw.sock")
        self.secret = apiwire.new_secret_file(apiwire.key_path(self.url, "table"))
        self.sock = tmp_path / "gw.sock"
        self.api = None
        self.start()

    def start(self):
        self.api = TableAPI(self.link, {"table": self.secret}, unix_path=self.sock).start()

    def stop(self):
        self.api.stop()

    def client(self, role, reconnect_s):
        return GatewayLink(self.url, role=role, reconnect_s=reconnect_s).open(timeout=10)


@pytest.fixture
def gw(tmp_path):
    g = Gateway(tmp_path)
    yield g
    g.stop()


def test_a_gateway_restart_costs_the_client_no_event_and_no_duplicate(gw):
    link, store = gw.link, gw.store
    got = []
    client = gw.client("table", 0.1)
    try:
        for n in range(1, 101):
            link.emit(n)
        assert _until(lambda: len(_drain(client, got)) >= 100)
        gw.stop()  # the gateway's API goes away: the client's connection is cut
        assert _until(lambda: not client.ep.up)
        for n in range(101, 201):  # stored while no API runs
            link.emit(n)
        # while the gateway reads the client's catch-up from its store, 201..250 are stored
        # and delivered live: the client gets them in the catch-up reply AND live; 251..260
        # come right after the read, before the reply: live only, held back until it
        read = store.payloads
        first = []

        def payloads(*a, **k):
            if first:
                return read(*a, **k)
            for n in range(201, 251):
                link.emit(n)
            rows = read(*a, **k)
            for n in range(251, 261):
                link.emit(n)
            first.append(1)  # (the shoe's events come one at a time: 261.. after these)
            return rows

        store.payloads = payloads
        gw.start()
        assert _until(lambda: first)
        live = threading.Thread(target=lambda: [link.emit(n) for n in range(261, 301)])
        live.start()  # and more live events race the rest of it
        live.join()
        assert _until(lambda: len(_drain(client, got)) >= 300), sorted(
            set(range(1, 301)) - {e[2] for e in got}
        )
        assert _until(lambda: client.ep.up)
        assert [e[2] for e in got] == list(range(1, 301))
        assert all(body == link.sent[n] and kind == "card" for kind, body, n in got)
        assert client.reconnects == 1 and client.fatal is None and client.gaps == []
        assert client.command("status", {}, timeout=5) == {"did": "status"}
    finally:
        client.close()


def test_events_the_gateways_store_no_longer_holds_are_reported_as_a_gap(gw):
    link, store = gw.link, gw.store
    got = []
    client = gw.client("table", 0.1)
    try:
        for n in range(1, 11):
            link.emit(n)
        assert _until(lambda: len(_drain(client, got)) >= 10)
        gw.stop()
        for n in range(11, 21):
            link.emit(n)
        with store._lock:  # the store pruned 11..15 (the floor held them)
            store._db.execute("DELETE FROM events WHERE shoe=? AND eseq<=15", (SHOE,))
            store._db.commit()
        gw.start()
        assert _until(lambda: len(_drain(client, got)) >= 15)
        assert [e[2] for e in got] == list(range(1, 11)) + list(range(16, 21))
        assert client.gaps == [(11, 15)]
    finally:
        client.close()


def test_without_reconnect_a_lost_gateway_is_final(gw):
    client = gw.client("table", None)
    try:
        gw.stop()
        assert _until(lambda: client.fatal is not None)
        assert "closed the connection" in client.fatal and client.reconnects == 0
    finally:
        client.close()


def test_a_query_in_flight_across_a_restart_is_asked_again_and_a_command_is_not(gw):
    """A request whose connection is lost before its answer: `status` (changes nothing) is
    asked again on the new connection; `open_round` fails with `link_lost` (its outcome is
    unknown) and is never sent twice."""
    gate = threading.Event()
    calls = []

    def command(kind, body, timeout=5.0, supervisor=False):
        calls.append(kind)
        if len(calls) <= 2:  # the first two hang until the API that took them is gone
            gate.wait(10)
        return {"did": kind}

    gw.link.command = command
    client = gw.client("table", 0.1)
    results = {}

    def ask(kind):
        try:
            results[kind] = client.command(kind, {}, timeout=20)
        except ShoeError as e:
            results[kind] = e

    threads = [threading.Thread(target=ask, args=(k,)) for k in ("status", "open_round")]
    try:
        for t in threads:
            t.start()
        assert _until(lambda: len(calls) == 2)
        gw.stop()  # both in flight: their connection is cut
        gate.set()
        gw.start()
        for t in threads:
            t.join(30)
        assert results["status"] == {"did": "status"}
        assert isinstance(results["open_round"], ShoeError), results
        assert results["open_round"].reason == "link_lost"
        assert calls.count("open_round") == 1 and calls.count("status") == 2
    finally:
        gate.set()
        client.close()


def test_the_alerts_about_missed_events_come_with_the_catch_up_once_each(gw):
    """The link's alerts (a reveal that does not match) about events the client missed come
    right after those events in the catch-up; one that arrives live during the catch-up and is
    in its reply too is queued once."""
    link, store = gw.link, gw.store
    got = []
    client = gw.client("table", 0.1)
    try:
        for n in range(1, 6):
            link.emit(n)
        link.alert(5, "seen live")
        assert _until(lambda: len(_drain(client, got)) >= 6)
        gw.stop()
        for n in range(6, 11):
            link.emit(n)
        link.alert(8, "raised while the client was away")
        read, first = store.payloads, []

        def payloads(*a, **k):  # event 11 and its alert arrive live during the catch-up
            if not first:
                first.append(1)
                link.emit(11)
                link.alert(11, "live and in the reply")
            return read(*a, **k)

        store.payloads = payloads
        gw.start()
        assert _until(lambda: len(_drain(client, got)) >= 14), got
        assert _until(lambda: len(_drain(client, got)) > 14, timeout=0.5) is False, got
        shape = [(k, b["eseq"] if e == 0 else e) for k, b, e in got]
        assert shape == [("card", n) for n in range(1, 6)] + [("reveal_mismatch", 5)] + [
            ("card", n) for n in range(6, 9)
        ] + [("reveal_mismatch", 8), ("card", 9), ("card", 10), ("card", 11)] + [
            ("reveal_mismatch", 11)
        ]
        assert got[9][1]["detail"] == "raised while the client was away"
    finally:
        client.close()


def test_a_bad_since_request_gets_nothing_and_the_client_goes_on(gw):
    """`since` with an eseq that is not a non-negative int: an empty answer, the connection
    stays, and a good one after it gets the stored events as they went out live."""
    for n in range(1, 4):
        gw.link.emit(n)
    client = gw.client("table", 0.1)
    try:
        for bad in ("3", -1, True, None, 2.5, [1]):
            rep = client._request({"t": "since", "eseq": bad}, 5.0)
            assert rep["ok"] and rep["body"] == {"events": [], "more": False}, (bad, rep)
        rep = client._request({"t": "since", "eseq": 1}, 5.0)
        assert [e[2] for e in rep["body"]["events"]] == [2, 3]
        assert [e[1] for e in rep["body"]["events"]] == [gw.link.sent[2], gw.link.sent[3]]
        assert client.fatal is None and client.reconnects == 0
    finally:
        client.close()
