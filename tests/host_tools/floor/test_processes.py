"""The commands as separate processes, as on a real floor: `shoectl collector` x 2 (one killed
with SIGKILL mid-run), the broker in its own process, and `shoectl floor --db` serving the page."""
import json
import subprocess
import sys
import time
import urllib.request

from host_tools.floor import pg
from host_tools.floor.harness import Floor
from host_tools.floor.mqtt import free_port
from tests.host_tools.floor.conftest import wait_all_stored, wait_for


def test_collector_processes_and_the_floor_command(tmp_path, db_url):
    with Floor(tmp_path, tables=4, collectors=2, rate=20, db_url=db_url, view=False,
               processes=True) as f:
        conn = pg.connect(db_url)
        f.driver.start()
        wait_for(lambda: conn.execute("SELECT count(DISTINCT owner) FROM shoes").fetchone()[0]
                 == 2, what="both collectors holding shoes")
        f.collectors[0].kill()                       # SIGKILL: a crashed collector
        n = sum(f.emitted().values())
        wait_for(lambda: sum(f.emitted().values()) > n + 80, what="more events")
        f.driver.stop()
        wait_all_stored(f, conn)
        assert conn.execute("SELECT count(*) FROM alerts").fetchone()[0] == 0
        assert {r[0] for r in conn.execute("SELECT owner FROM shoes")} == {"collector-2"}

        port = free_port()
        view = subprocess.Popen([sys.executable, "-m", "host_tools", "floor", "--db", db_url,
                                 "--http", "127.0.0.1:%d" % port], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            assert view.stdout.readline().startswith("floor view: http://127.0.0.1:%d/" % port)

            def tables():
                try:
                    return json.load(urllib.request.urlopen(
                        "http://127.0.0.1:%d/api/floor" % port, timeout=5))["tables"]
                except OSError:
                    time.sleep(0.1)
                    return None
            got = wait_for(tables, what="the floor command's API")
            assert {t["shoe"]: t["head_eseq"] for t in got} == f.emitted()
        finally:
            view.terminate()
            view.wait(15)
        assert view.returncode == 0
