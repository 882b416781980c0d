"""The same floor against Mosquitto, the broker a casino runs (skips where it is not installed)."""

import pytest

from host_tools.floor import pg
from host_tools.sim.floor import mosquitto
from host_tools.sim.floor.harness import Floor
from tests.host_tools.floor.conftest import wait_all_stored, wait_for


def test_floor_through_mosquitto_with_a_restart(tmp_path, db_url):
    if mosquitto.find() is None:
        pytest.skip("no mosquitto installed (apt-get install mosquitto): not tested against it")
    with mosquitto.Mosquitto(tmp_path / "mq") as m:
        with Floor(tmp_path / "floor", tables=4, rate=20, broker_url=m.url, db_url=db_url) as f:
            conn = pg.connect(db_url)
            f.driver.start()
            wait_for(lambda: sum(f.emitted().values()) > 100, what="events")
            m.restart()
            n = sum(f.emitted().values())
            wait_for(lambda: sum(f.emitted().values()) > n + 100, what="events after restart")
            f.driver.stop()
            wait_all_stored(f, conn)
            assert conn.execute("SELECT count(*) FROM alerts").fetchone()[0] == 0
