"""The gateway's loop with stand-ins for the link, the store and paho (no broker): it sleeps while
nothing happens, an event queued by a link still goes out at once, and a cursor that advanced
reaches the cursor file within SAVE_EVERY even when nothing follows it."""

import json
import queue
import threading
import time

import pytest

from host_tools.floor import gateway as gwmod
from host_tools.floor.gateway import Gateway
from tests.host_tools.floor.conftest import wait_for

SAVE_EVERY = getattr(gwmod, "SAVE_EVERY", 0.5)


class _Info:
    def __init__(self, acked=True):
        self.acked = acked

    def is_published(self):
        return self.acked


class FakeClient:
    """paho's surface the gateway uses; every publish acknowledged at once."""

    def __init__(self):
        self.events = []  # (topic, payload, monotonic time)
        self.lock = threading.Lock()

    def publish(self, topic, payload, qos=0, retain=False):
        with self.lock:
            if topic.endswith("/events"):
                self.events.append((topic, payload, time.monotonic()))
        return _Info()

    def is_connected(self):
        return True

    def subscribe(self, *a, **k):
        pass

    def disconnect(self):
        pass

    def loop_stop(self):
        pass


class FakeStore:
    def __init__(self):
        self.rows = []
        self.lock = threading.Lock()

    def add(self, eseq):
        with self.lock:
            self.rows.append((eseq, b"payload-%d" % eseq, time.time()))

    def payloads(self, shoe, since=0, limit=500, received=False):
        with self.lock:
            return [r for r in self.rows if r[0] > since][:limit]


class _Ep:
    key = b"k" * 32


class FakeLink:
    """What the gateway uses of a ShoeLink; `listeners` as ShoeLink._emit calls them (unless
    `wakes` is False: a stand-in without them, which the gateway polls)."""

    def __init__(self, wakes=True):
        self.events = queue.Queue()
        if wakes:
            self.listeners = []
        self.ep = _Ep()
        self.fatal = None

    def emit(self, ev):
        self.events.put(ev)
        for fn in list(getattr(self, "listeners", [])):
            fn(ev)

    def up(self):
        return True

    def stats(self):
        return {"up": True}


@pytest.fixture
def gateway(tmp_path, monkeypatch):
    monkeypatch.setattr(gwmod.mqtt, "client", lambda *a, **k: FakeClient())
    made = []

    def make(n=1, wakes=True, **kw):
        gw = Gateway(
            "mqtt://unused:1", "gw-test", cursor_path=tmp_path / "cur.json", timed=False, **kw
        )
        feeds = []
        for i in range(n):
            link, store = FakeLink(wakes), FakeStore()
            gw.add("T%03d" % i, link, store)
            feeds.append((link, store))
        made.append(gw.start())
        return gw, feeds

    yield make
    for gw in made:
        gw.stop()


def _event(link, store, eseq):
    store.add(eseq)  # stored before it is queued, as the link does
    link.emit(("card", {"round": 1}, eseq))


def _counting(gw, name):
    calls = []
    orig = getattr(gw, name)

    def counted(*a, **k):
        calls.append(time.monotonic())
        return orig(*a, **k)

    setattr(gw, name, counted)
    return calls


def test_an_idle_gateway_sleeps_instead_of_polling(gateway):
    gw, _ = gateway(n=5)
    time.sleep(0.3)  # started: its first states are out
    turns = _counting(gw, "_publish_states")  # once per turn of the loop
    time.sleep(1.5)
    # woken by nothing, it looks at its tables every IDLE_WAIT (0.5 s): link health, states;
    # it used to look 50 times a second
    assert len(turns) <= 5, len(turns)


def test_an_event_goes_out_at_once_though_the_loop_sleeps(gateway, monkeypatch):
    # the loop's longest sleep made 600 s, past wait_for's deadline (at least 60 s): an event
    # published woke it (a wall-time bound on the latency itself would fail on a loaded machine)
    monkeypatch.setattr(gwmod, "IDLE_WAIT", 600.0)
    gw, [(link, store)] = gateway()
    time.sleep(0.3)  # started: the loop goes to its long sleep
    for eseq in (1, 2, 3):
        _event(link, store, eseq)
        wait_for(lambda n=eseq: len(gw.client.events) >= n, timeout=10.0, what="event %d" % eseq)
        time.sleep(0.3)  # asleep again
    assert [p for _, p, _ in gw.client.events] == [b"payload-1", b"payload-2", b"payload-3"]


def test_a_link_without_listeners_is_still_drained(gateway):
    gw, [(link, store)] = gateway(wakes=False)
    time.sleep(0.3)
    _event(link, store, 1)
    wait_for(lambda: gw.client.events, timeout=2.0, what="published")
    assert link.events.empty()  # drained: the gateway's live table saw it


def test_a_cursor_advance_reaches_the_file_though_nothing_follows_it(gateway, tmp_path):
    gw, [(link, store)] = gateway()
    saved = lambda: json.loads((tmp_path / "cur.json").read_text()).get("T000")  # noqa: E731
    _event(link, store, 1)
    wait_for(lambda: (tmp_path / "cur.json").exists() and saved() == 1, timeout=2.0, what="1")
    _event(link, store, 2)  # right after the first save: within SAVE_EVERY of it
    wait_for(lambda: gw.tables["T000"].cursor == 2, timeout=2.0, what="acknowledged")
    # nothing else happens: the file still follows (within SAVE_EVERY; it used to wait for the
    # next acknowledgement, however late, or for stop())
    wait_for(lambda: saved() == 2, timeout=10.0, what="the second cursor in the file")


def test_the_cursor_file_is_written_at_most_every_save_every(gateway):
    gw, [(link, store)] = gateway()
    saves = _counting(gw, "_save_cursors")
    t0 = time.monotonic()
    for eseq in range(1, 61):  # an acknowledgement every 20 ms for 1.2 s
        _event(link, store, eseq)
        time.sleep(0.02)
    wait_for(lambda: gw.tables["T000"].cursor == 60, timeout=2.0, what="acknowledged")
    span = time.monotonic() - t0 + SAVE_EVERY
    assert 2 <= len(saves) <= 1 + span / SAVE_EVERY + 1, len(saves)
    gaps = [b - a for a, b in zip(saves, saves[1:])]
    assert all(g >= SAVE_EVERY * 0.9 for g in gaps), gaps


def test_a_stopped_gateway_leaves_the_link_without_its_listener(gateway):
    gw, [(link, store)] = gateway()
    assert len(link.listeners) == 1
    gw.stop()
    assert link.listeners == []


def test_the_cursor_file_is_written_outside_the_gateways_lock(gateway, monkeypatch):
    """A slow disk must not hold the lock paho's thread takes for a replay request."""
    free = []
    real = gwmod.os.replace

    def replace(a, b):
        gw = made[0]
        got = gw._lock.acquire(blocking=False)
        if got:
            gw._lock.release()
        free.append(got)
        return real(a, b)

    made = []
    monkeypatch.setattr(gwmod.os, "replace", replace)
    gw, [(link, store)] = gateway()
    made.append(gw)
    _event(link, store, 1)
    wait_for(lambda: free, timeout=2.0, what="a save")
    gw.stop()
    assert free and all(free), free


def test_a_cursor_file_that_cannot_be_written_is_said_and_tried_again(gateway, monkeypatch):
    real, fails = gwmod.os.replace, [1]

    def replace(a, b):
        if fails:
            fails.pop()
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(gwmod.os, "replace", replace)
    gw, [(link, store)] = gateway()
    _event(link, store, 1)
    wait_for(lambda: gw.errors.last, timeout=2.0, what="the error said")
    assert "No space left" in str(gw.errors.last)
    _event(link, store, 2)  # the loop is alive and publishing
    wait_for(lambda: len(gw.client.events) == 2, timeout=2.0, what="published")
    saved = gw.saved_cursors
    wait_for(lambda: saved().get("T000") == 2, timeout=2.0, what="saved on a later try")


# ---- publish_rate: a backlog spread out, not sent at once ------------------------------
def test_pace_gives_rate_tokens_a_second_in_bounded_bursts():
    p = gwmod.Pace(10)  # burst 2 (0.2 s worth)
    assert p.take(100.0) == 1  # starts with one
    p.spent(1)
    assert p.take(100.05) == 0  # half a token
    assert p.take(100.125) == 1  # 1.25
    p.spent(1)
    assert p.take(200.0) == 2  # a long pause saves no more than the burst
    p.spent(2)
    assert p.take(200.0) == 0
    sent, t = 0, 300.0
    p = gwmod.Pace(10)
    while t < 310.0:  # 10 s at 10/s, asked every 7 ms
        n = p.take(t)
        p.spent(n)
        sent += n
        t += 0.007
    assert 99 <= sent <= 102, sent
    assert gwmod.Pace(0.5).burst == 1.0
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            Gateway("mqtt://unused:1", "gw", publish_rate=bad)


def test_a_paced_gateway_spreads_a_backlog(gateway):
    rate, n = 20.0, 30
    gw, [(link, store)] = gateway(publish_rate=rate)
    traced = []
    gw.trace = lambda shoe, eseq: traced.append((shoe, eseq))
    for eseq in range(1, n + 1):  # a backlog: in the store at once (an outage's)
        _event(link, store, eseq)
    wait_for(lambda: len(gw.client.events) == n, timeout=30.0, what="the backlog published")
    times = [at for _, _, at in gw.client.events]
    # no faster than the rate (slower is allowed: a loaded machine); the first burst aside
    burst = gwmod.Pace(rate).burst
    assert times[-1] - times[0] >= (n - burst - 1) / rate * 0.95, times[-1] - times[0]
    assert [p for _, p, _ in gw.client.events] == [b"payload-%d" % e for e in range(1, n + 1)]
    assert traced == [("T000", e) for e in range(1, n + 1)]


def test_an_unpaced_gateway_sends_a_backlog_at_once(gateway):
    gw, [(link, store)] = gateway()
    for eseq in range(1, 31):
        _event(link, store, eseq)
    wait_for(lambda: len(gw.client.events) == 30, timeout=10.0, what="the backlog published")
    times = [at for _, _, at in gw.client.events]
    assert times[-1] - times[0] < 1.0  # what the paced test's bound tells apart (1.3 s there)


def test_a_paced_backlog_does_not_wait_for_the_idle_sleep(gateway, monkeypatch):
    # the loop's longest sleep made 600 s (past wait_for's deadline): a paced table with more
    # to send wakes for its next token (BUSY_WAIT), not for the idle sleep
    monkeypatch.setattr(gwmod, "IDLE_WAIT", 600.0)
    gw, [(link, store)] = gateway(publish_rate=20.0)
    time.sleep(0.3)
    for eseq in range(1, 6):
        store.add(eseq)
    link.emit(("card", {"round": 1}, 5))
    wait_for(lambda: len(gw.client.events) == 5, timeout=10.0, what="the paced backlog")


def test_shoectl_gateway_takes_a_positive_publish_rate_only(capsys):
    import argparse

    from host_tools.commands import gateway as gateway_cmd

    p = argparse.ArgumentParser()
    gateway_cmd.configure(p)
    port = ["--port", "socket://127.0.0.1:1"]
    assert p.parse_args(port + ["--publish-rate", "5"]).publish_rate == 5.0
    assert p.parse_args(port).publish_rate is None  # no cap
    for bad in ("0", "-3", "inf", "nan", "many"):
        with pytest.raises(SystemExit):
            p.parse_args(port + ["--publish-rate", bad])
        assert "a positive number" in capsys.readouterr().err
