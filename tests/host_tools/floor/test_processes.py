"""The commands as separate processes, as on a real floor: `shoectl collector` x 2 (one killed
with SIGKILL mid-run), the broker in its own process, and `shoectl floor --db` serving the page."""

import subprocess
import sys
import time

from host_tools.floor import pg
from host_tools.sim.floor.harness import Floor
from host_tools.sim.floor.localbroker import free_port
from tests.host_tools.floor.conftest import wait_all_stored, wait_for
from tests.host_tools.floor.web import Web


def test_collector_processes_and_the_floor_command(tmp_path, db_url):
    with Floor(
        tmp_path, tables=4, collectors=2, rate=20, db_url=db_url, view=False, processes=True
    ) as f:
        conn = pg.connect(db_url)
        f.driver.start()
        wait_for(
            lambda: conn.execute("SELECT count(DISTINCT owner) FROM shoes").fetchone()[0] == 2,
            what="both collectors holding shoes",
        )
        f.collectors[0].kill()  # SIGKILL: a crashed collector
        n = sum(f.emitted().values())
        wait_for(lambda: sum(f.emitted().values()) > n + 80, what="more events")
        f.driver.stop()
        wait_all_stored(f, conn)
        assert conn.execute("SELECT count(*) FROM alerts").fetchone()[0] == 0
        assert {r[0] for r in conn.execute("SELECT owner FROM shoes")} == {"collector-2"}

        port = free_port()
        users = tmp_path / "users.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "host_tools",
                "floor-user",
                "add",
                "pat",
                "--role",
                "pit",
                "--users",
                str(users),
            ],
            input="a pit password\n",
            text=True,
            check=True,
            capture_output=True,
        )
        view = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "host_tools",
                "floor",
                "--db",
                db_url,
                "--http",
                "127.0.0.1:%d" % port,
                "--users",
                str(users),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert view.stdout.readline().startswith("floor view: http://127.0.0.1:%d/" % port)

            web = Web("http://127.0.0.1:%d/" % port)
            assert web.get("api/floor")[0] == 401  # no session: refused
            web.login("pat", "a pit password")

            def tables():
                try:
                    return web.json("api/floor")["tables"]
                except OSError:
                    time.sleep(0.1)
                    return None

            got = wait_for(tables, what="the floor command's API")
            assert {t["shoe"]: t["head_eseq"] for t in got} == f.emitted()
        finally:
            view.terminate()
            view.wait(15)
        assert view.returncode == 0
