"""A real virtual board (the firmware on the MicroPython unix port) on the floor: `shoectl
gateway` holds its link, the collector verifies its real events and re-evaluates its real round
result with the pay table the gateway read from the shoe's status."""

import signal
import subprocess
import sys

from host_tools.audit import AuditStore
from host_tools.floor import keyring, pg
from host_tools.floor.collector import Collector
from host_tools.sim.virtual_table import VirtualTable
from tests.host_tools.floor.conftest import wait_for

SEATS = {str(s): {"wagers": {"ante": 10, "odds": 10, "prime": 5}} for s in (1, 4)}


def test_virtual_board_through_shoectl_gateway(tmp_path, broker, db_url):
    flash = tmp_path / "flash"
    audit = tmp_path / "gw.sqlite"
    with VirtualTable(str(flash), db=str(audit), event_timeout=120.0) as t:  # a deadline
        t.runner.play(
            {
                "game": "four-card-frenzy",
                "procedure": "manual-shoe",
                "seed": 5,
                "rounds": [{"seats": SEATS}],
            }
        )
        ring = keyring.load(flash / "shoe.json")
        [sid] = ring.shoes()  # the board's id (provisioned in its flash)
        t.link.close()  # the gateway takes the shoe and its audit store over (one host each)
        c = Collector(broker.url, db_url, ring, "collector-board").start()
        gw = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "host_tools",
                "gateway",
                "--port",
                "socket://127.0.0.1:%d" % t.board.host_port,
                "--demo-keys",
                "--db",
                str(audit),
                "--broker",
                broker.url,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            conn = pg.connect(db_url)
            store = AuditStore(audit)
            held = store.last_eseq(sid)
            assert held > 20
            wait_for(
                lambda: (
                    conn.execute(
                        "SELECT count(*), max(eseq) FROM events WHERE shoe=%s", (sid,)
                    ).fetchone()
                    == (held, held)
                    or None
                ),
                what="the board's events in PostgreSQL",
            )
            assert conn.execute("SELECT kind, detail FROM alerts").fetchall() == [], c.config
            assert conn.execute("SELECT reeval FROM rounds WHERE shoe=%s", (sid,)).fetchall() == [
                ("agree",)
            ]
            assert (
                conn.execute("SELECT count(*) FROM events WHERE chain <> 'ok'").fetchone()[0] == 0
            )
        finally:
            gw.send_signal(signal.SIGTERM)
            out, err = gw.communicate(timeout=30)
            c.stop()
        assert gw.returncode == 0, err
        assert sid in out
