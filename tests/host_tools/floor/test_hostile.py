"""Someone on the broker: forged, altered, replayed, re-ordered and mis-settled events are
rejected (never stored as genuine) and alerted; the real shoes' streams go on untouched."""

import os

from host_tools.floor import keyring, mqtt, pg
from host_tools.link.host import chain_next
from host_tools.sim.floor.harness import Floor
from host_tools.sim.floor.simshoe import make_keys
from shoe.games import engine, packing
from shoe.link.message import GENESIS, seal_message
from tests.host_tools.floor.conftest import wait_all_stored, wait_for


def _publish(url, items):
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    c = paho.Client(CallbackAPIVersion.VERSION2, client_id="intruder")
    c.connect("127.0.0.1", int(url.rsplit(":", 1)[1]))
    c.loop_start()
    infos = [c.publish(t, p, qos=1) for t, p in items]
    for i in infos:
        i.wait_for_publish(10)
    c.disconnect()
    c.loop_stop()


def _result_body(rnd, tamper=False):
    obj = {
        "game": "four-card-frenzy",
        "paytable": "fcf-public-1",
        "rules": {},
        "dealer": ["Ah", "Kd", "7c", "7s", "2h"],
        "all_six_card": "9h",
        "seats": {
            "1": {
                "cards": ["As", "Ks", "Qs", "Js", "2d"],
                "wagers": {"ante": 10, "odds": 10},
                "raise": 10,
            }
        },
    }
    res = engine.evaluate_round(obj)
    res.update(round=rnd, deck=0x1234, paytable="fcf-public-1")
    if tamper:
        res["seats"]["1"]["net"] += 1000  # the shoe (or its key) pays what it should not
    return {"round": rnd, "packed": packing.pack(res)}


def test_injected_events_are_rejected_and_alerted(tmp_path, broker, db_url):
    with Floor(
        tmp_path, tables=2, rate=20, broker_url=broker.url, db_url=db_url, gap_timeout=1.0
    ) as f:
        conn = pg.connect(db_url)
        xk = make_keys()  # a shoe the floor knows, whose key the test holds
        f.ring.add("X001", xk["shoe"])
        keyring.write(tmp_path / "keys", "X001", xk)
        f.driver.start()
        wait_for(lambda: all(v >= 20 for v in f.emitted().values()), what="real events")
        real = conn.execute("SELECT payload FROM events WHERE shoe='T001' AND eseq=3").fetchone()[
            0
        ]
        altered = bytearray(real)
        altered[10] ^= 0x01
        ev = lambda s, w: mqtt.topic(s, w)  # noqa: E731
        x = "X001"
        p1, h1 = seal_message(xk["shoe"], "phase", {"phase": "idle"}, 1, GENESIS, x)
        p2, h2 = seal_message(xk["shoe"], "round_result", _result_body(1, tamper=True), 2, h1, x)
        p3, _ = seal_message(xk["shoe"], "phase", {"phase": "idle"}, 3, os.urandom(16), x)  # break
        other1, _ = seal_message(xk["shoe"], "phase", {"phase": "betting"}, 1, GENESIS, x)
        far, _ = seal_message(xk["shoe"], "phase", {"phase": "idle"}, 9, os.urandom(16), x)
        forged, _ = seal_message(os.urandom(32), "round_result", _result_body(7), 1, GENESIS)
        _publish(
            broker.url,
            [
                (ev("T001", "events"), bytes(altered)),  # altered on the way: bad MAC
                (ev("T002", "events"), real),  # T001's event replayed as T002's
                (ev("T001", "events"), forged),  # forged with a guessed key
                (ev("T001", "events"), os.urandom(60)),  # garbage
                (ev("Z999", "events"), real),  # a shoe nobody provisioned
                (ev("X001", "events"), p1),
                (ev("X001", "events"), p2),
                (ev("X001", "events"), p3),
                (ev("X001", "events"), other1),  # same eseq, other contents
                (ev("X001", "events"), far),  # a hole no gateway fills
            ],
        )

        def kinds():
            return {
                k: n
                for k, n in conn.execute(
                    "SELECT kind, count(*) FROM alerts GROUP BY kind"
                ).fetchall()
            }

        want = {
            "bad_mac",
            "malformed",
            "unknown_shoe",
            "disagreement",
            "chain_break",
            "conflict",
            "gap",
        }
        got = wait_for(
            lambda: want <= set(kinds()) and kinds(),
            timeout=30,
            what=lambda: "alerts (have %s)" % kinds(),
        )
        assert got["bad_mac"] >= 3
        f.driver.stop()
        wait_all_stored(f, conn)
        # the real tables' streams are whole and clean: nothing injected was stored for them
        assert (
            conn.execute(
                "SELECT count(*) FROM events WHERE shoe IN ('T001','T002') AND chain <> 'ok'"
            ).fetchone()[0]
            == 0
        )
        for _shoe, _eseq, payload in conn.execute(
            "SELECT shoe, eseq, payload FROM events WHERE shoe IN ('T001','T002')"
        ):
            assert bytes(payload) not in (bytes(altered), forged)
        assert conn.execute("SELECT count(*) FROM events WHERE shoe='Z999'").fetchone()[0] == 0
        # X001: the MAC-valid events are stored with what was found about them, never as clean
        rows = dict(conn.execute("SELECT eseq, chain FROM events WHERE shoe='X001'").fetchall())
        assert rows == {1: "ok", 2: "ok", 3: "broken", 9: "gap"}
        assert (
            bytes(
                conn.execute("SELECT payload FROM events WHERE shoe='X001' AND eseq=1").fetchone()[
                    0
                ]
            )
            == p1
        )  # the first one kept, not `other1`
        assert (
            conn.execute("SELECT reeval FROM rounds WHERE shoe='X001'").fetchone()[0] == "disagree"
        )
        assert chain_next(GENESIS, "phase", {"phase": "idle"}, 1) == h1  # (vector sanity)
