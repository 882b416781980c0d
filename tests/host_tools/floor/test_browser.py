"""The floor page in a real headless Chromium: the login form, every table live over server-sent
events, the drill-down, the alerts page with an acknowledgement, logging out, a screenshot in the
test artifacts, and no key on any page."""
import json
import os
from pathlib import Path

import pytest

from host_tools.floor import mqtt
from host_tools.floor.harness import Floor
from tests.host_tools.floor import chromium
from tests.host_tools.floor.conftest import wait_for
from tests.host_tools.floor.web import Web

ARTIFACTS = Path(os.environ.get("SHOE_ARTIFACTS", Path(__file__).resolve().parents[3] / "build"
                                / "test-artifacts"))


@pytest.fixture
def browser():
    if chromium.find() is None:
        pytest.skip("no Chromium installed (apt-get install chromium): the floor page is not "
                    "tested in a browser here")
    with chromium.Chromium() as b:
        yield b


def test_floor_page_live_drilldown_alerts_and_no_keys(tmp_path, broker, db_url, browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with Floor(tmp_path, tables=8, rate=8, broker_url=broker.url, db_url=db_url) as f:
        f.driver.start()
        b = browser
        b.call("Page.navigate", url=f.view.url)          # no session: the login form
        b.wait("location.pathname === '/login' && document.readyState === 'complete'")
        b.screenshot(str(ARTIFACTS / "floor-login.png"))
        b.eval("document.getElementById('username').value = %s;"
               "document.getElementById('password').value = %s;"
               "document.getElementById('login').submit()" % (json.dumps(f.login[0]),
                                                               json.dumps(f.login[1])))
        b.wait("location.pathname === '/' && document.querySelectorAll('.tile').length === 8")
        assert "admin (admin)" in b.eval("document.getElementById('who').textContent")
        # live: the page's numbers follow the shoes without a reload
        first = b.eval("document.querySelector('.tile[data-shoe=T003] .eseq').textContent")
        b.wait("+document.querySelector('.tile[data-shoe=T003] .eseq').textContent > %d + 5"
               % int(first))
        assert b.eval("window.floorUpdates") > 2
        wait_for(lambda: b.eval("document.body.innerText.includes('round ') && "
                                "document.body.innerText.includes('link up')"), what="results")
        b.screenshot(str(ARTIFACTS / "floor.png"))
        # a forged event appears on the alerts page and on the table's tile
        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id="intruder")
        c.connect("127.0.0.1", broker.port)
        c.loop_start()
        c.publish(mqtt.topic("T005", "events"), os.urandom(80), qos=1).wait_for_publish(10)
        c.loop_stop()
        c.disconnect()
        b.wait("document.querySelector('.tile[data-shoe=T005]').classList.contains('alert')")
        b.goto(f.view.url + "alerts")
        b.wait("document.querySelectorAll('.alert-row').length >= 1")
        assert "T005" in b.eval("document.body.innerText")
        b.eval("document.querySelector('button.ack').click()")    # POST with the CSRF token
        b.wait("document.body.innerText.includes('acknowledged by admin')")
        b.screenshot(str(ARTIFACTS / "floor-alerts.png"))
        # drill-down: recent rounds with the engine's verdict, updated live
        b.goto(f.view.url + "table/T002")
        b.wait("document.querySelectorAll('#rounds tr').length > 1")
        assert "agree" in b.eval("document.querySelector('#rounds').innerText")
        b.screenshot(str(ARTIFACTS / "floor-table.png"))
        f.driver.stop()
        # no key, in any form, on any page or API answer
        secrets = [v.hex() for k in f.keys.values() for v in k.values()]
        pages = [b.eval("document.documentElement.outerHTML")]
        web = Web(f.view.url).login(*f.login)
        for path in ("", "alerts", "table/T001", "api/floor", "api/alerts", "api/table/T001"):
            pages.append(web.get(path)[2].decode())
        blob = "\n".join(pages).lower()
        assert not any(s in blob for s in secrets)
        assert "payload" not in json.loads(pages[-1])["table"]
        # logging out ends the session: the page goes back to the login form
        b.eval("document.getElementById('logout').click()")
        b.wait("location.pathname === '/login'")
        b.call("Page.navigate", url=f.view.url + "alerts")
        b.wait("location.pathname === '/login' && location.search === '?next=/alerts'")
        # a pit user: the floor, no link to the alerts or the access log, and /alerts refused
        f.users.add("pat", "pit", "a pit password")
        f.users.save()
        b.eval("document.getElementById('username').value = 'pat';"
               "document.getElementById('password').value = 'a pit password';"
               "document.getElementById('next').value = '/';"
               "document.getElementById('login').submit()")
        b.wait("location.pathname === '/' && document.querySelectorAll('.tile').length === 8")
        assert b.eval("document.getElementById('nav').innerText").split() == ["tables"]
        assert "pat (pit)" in b.eval("document.getElementById('who').textContent")
        b.screenshot(str(ARTIFACTS / "floor-pit.png"))
        b.call("Page.navigate", url=f.view.url + "alerts")
        b.wait("document.readyState === 'complete' && document.body.innerText.includes('403')")
    assert (ARTIFACTS / "floor.png").stat().st_size > 10000
