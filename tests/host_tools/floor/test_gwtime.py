"""The gateway's receive time with each event (keyring.wrap_event, migrations/006): stored by the
collector with the event, the payload inside verified and stored byte for byte; a bare payload
(a gateway before the envelope, during a rollout) still taken, with no time; a time altered on
the broker refused and alerted while the event is still stored; a gateway clock ahead of the
collector's alerted as clock_skew from the events alone."""

import time

from host_tools.floor import keyring, pg
from host_tools.floor.collector import Collector
from host_tools.sim.floor.simshoe import make_keys
from shoe.link.message import GENESIS
from tests.host_tools.floor.conftest import wait_for
from tests.host_tools.floor.test_hostile import _publish
from tests.host_tools.floor.test_trust import _event


def test_gateway_time_stored_verified_and_its_skew_alerted(broker, db_url):
    k = make_keys()
    key = k["shoe"]
    ring = keyring.KeyRing({"X001": key})
    topic = "floor/shoe/X001/events"
    events, prev = [], GENESIS
    for eseq in range(1, 6):
        p, prev = _event(key, "X001", eseq, prev)
        events.append(p)
    now = time.time()
    msgs = [
        keyring.wrap_event(key, "X001", now - 1.5, events[0]),  # live, in time
        events[1],
    ]  # bare: a rollout
    bad = bytearray(keyring.wrap_event(key, "X001", now - 1.0, events[2]))
    bad[11] ^= 1  # its time moved 1 us
    msgs.append(bytes(bad))
    msgs.append(keyring.wrap_event(key, "X001", now - 0.5, events[3]))
    # the payload inside is still the shoe's: a wrong payload fails its own MAC as ever
    forged = bytearray(events[4])
    forged[-1] ^= 1
    msgs.append(keyring.wrap_event(key, "X001", now, bytes(forged)))
    inner, at0 = keyring.split_event(msgs[0])
    assert inner == events[0] and abs(at0 - (now - 1.5)) < 2e-6
    conn = pg.connect(db_url)
    c = Collector(broker.url, db_url, ring, "collector-gwtime", skew_alert=5.0).start()
    try:
        wait_for(lambda: c.sessions, what="connected")
        _publish(broker.url, [(topic, m) for m in msgs])
        wait_for(
            lambda: c.counts["stored"] == 4 and c.counts["rejected"] == 1,
            what=lambda: "4 events stored, the forged one rejected: %s" % c.counts,
        )
        rows = conn.execute(
            "SELECT eseq, payload, extract(epoch FROM gateway_at)::float8 FROM "
            "events ORDER BY eseq"
        ).fetchall()
        assert [bytes(r[1]) for r in rows] == events[:4]  # the sealed bytes, unchanged
        at = {r[0]: r[2] for r in rows}
        assert abs(at[1] - (now - 1.5)) < 1e-5 and abs(at[4] - (now - 0.5)) < 1e-5
        assert at[2] is None and at[3] is None  # bare; refused time
        kinds = [r[0] for r in conn.execute("SELECT kind FROM alerts ORDER BY id")]
        assert kinds.count("bad_gateway_time") == 1 and "clock_skew" not in kinds, kinds
        assert c.counts["bad_gateway_time"] == 1
        # the gateway's clock 60 s ahead: the next event says so at once (no state needed)
        p5, _ = _event(key, "X001", 5, prev)
        _publish(broker.url, [(topic, keyring.wrap_event(key, "X001", time.time() + 60.0, p5))])
        wait_for(
            lambda: (
                conn.execute("SELECT count(*) FROM alerts WHERE kind = 'clock_skew'").fetchone()[0]
                == 1
            ),
            what="a clock_skew alert",
        )
        detail = conn.execute("SELECT detail FROM alerts WHERE kind = 'clock_skew'").fetchone()[0]
        assert "ahead of" in detail and "events' receive times" in detail, detail
        assert c.ops.skew["X001"] < -55
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 5
    finally:
        c.stop()
        conn.close()
