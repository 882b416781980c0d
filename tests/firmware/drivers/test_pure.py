"""The drivers' pure parts under CPython (hypothesis): read/exit pairing and the watchdog rule.

The same classes run under MicroPython in check_io.py; here hypothesis explores sequences.
"""

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools.runtime import FIRMWARE

if str(FIRMWARE) not in sys.path:
    sys.path.insert(0, str(FIRMWARE))

import shoe  # noqa: E402,F401  (installs the micropython stand-in)
from shoe.drivers import _ticks  # noqa: E402
from shoe.drivers.beam import ExitMatcher  # noqa: E402
from shoe.drivers.watchdog import Watchdog  # noqa: E402

WINDOW = 400


def run(events, window=WINDOW, size=8):
    """Feed (t, kind) in time order, checking before each event and at the end."""
    m = ExitMatcher(window_ms=window, size=size, ticks_diff=_ticks.ticks_diff)
    reports = []

    def drain(now):
        while True:
            r = m.check(now)
            if r is None:
                return
            reports.append((now, r))

    for t, kind in events:
        drain(t)
        (m.read if kind == "read" else m.exit)(t)
    drain((events[-1][0] if events else 0) + window + 1)
    return m, reports


pair = st.tuples(
    st.integers(0, WINDOW // 2), st.booleans(), st.sampled_from(["ok", "no_read", "no_exit"])
)


@settings(max_examples=300, deadline=None)
@given(st.lists(pair, max_size=40))
def test_missing_partners_are_reported_exactly(pairs):
    """Cards far apart; each is a read+exit within the window, or lacks one of them."""
    events, expect = [], []
    for i, (gap, read_first, fate) in enumerate(pairs):
        base = i * 3 * WINDOW
        r, e = (base, base + gap) if read_first else (base + gap, base)
        if fate != "no_read":
            events.append((r, "read"))
        if fate != "no_exit":
            events.append((e, "exit"))
        if fate == "no_read":
            expect.append("exit_without_read")
        elif fate == "no_exit":
            expect.append("read_without_exit")
    events.sort(key=lambda x: x[0])
    m, reports = run(events)
    assert [k for _, k in reports] == expect
    assert m.matched == sum(1 for p in pairs if p[2] == "ok")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5000), st.sampled_from(["read", "exit"])), max_size=60),
    st.integers(1, 8),
)
def test_every_event_is_paired_reported_or_counted(events, size):
    events.sort(key=lambda x: x[0])
    m, reports = run(events, size=size)
    assert 2 * m.matched + len(reports) + m.dropped == len(events)
    for _now, kind in reports:
        assert kind in ("exit_without_read", "read_without_exit")
    assert m.pending() == (0, 0)


def test_pairing_across_the_ticks_wrap():
    top = _ticks.ticks_add(0, -150)
    m, reports = run([(top, "read"), (_ticks.ticks_add(top, 300), "exit")])
    # run() sorts nothing here; the wrap makes the second tick small, ticks_diff handles it
    assert m.matched == 1 and reports == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 300), st.sets(st.sampled_from(["a", "b", "c"]))),
        min_size=1,
        max_size=80,
    )
)
def test_watchdog_feeds_only_while_all_tasks_are_fresh(steps):
    """Oracle: fed at time t iff every task checked in within its limit before t."""
    now = [1000]
    limits = {"a": 200, "b": 500, "c": 1000}

    class WDT:
        fed = 0

        def feed(self):
            WDT.fed += 1

    dog = Watchdog(WDT(), ticks_ms=lambda: now[0], ticks_diff=_ticks.ticks_diff)
    last = {}
    for name, lim in limits.items():
        dog.register(name, lim)
        last[name] = now[0]
    for dt, checkins in steps:
        now[0] += dt
        for name in checkins:
            dog.checkin(name)
            last[name] = now[0]
        fresh = all(now[0] - last[n] <= limits[n] for n in limits)
        before = WDT.fed
        assert dog.service() == fresh
        assert WDT.fed == before + (1 if fresh else 0)
        if not fresh:
            assert now[0] - last[dog.starved] > limits[dog.starved]
