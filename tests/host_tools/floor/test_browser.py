"""The floor page in a real headless Chromium: the login form, every table live over server-sent
events with exceptions first and per-seat nets, the drill-down with the shift's figures and its
SVG charts, a round's cards after its reveal, the irregularity timeline, the alerts page with an
acknowledgement, logging out, screenshots (the test artifacts and the test's tmp_path), and no
key on any page. Assertions are on the DOM, never on pixels."""

import json
import os
from pathlib import Path

import pytest

from host_tools.floor import mqtt
from host_tools.sim.floor.harness import Floor
from tests.host_tools.floor import chromium
from tests.host_tools.floor.conftest import wait_for
from tests.host_tools.floor.web import Web

ARTIFACTS = Path(
    os.environ.get(
        "SHOE_ARTIFACTS", Path(__file__).resolve().parents[3] / "build" / "test-artifacts"
    )
)


@pytest.fixture
def browser():
    if chromium.find() is None:
        pytest.skip(
            "no Chromium installed (apt-get install chromium): the floor page is not "
            "tested in a browser here"
        )
    with chromium.Chromium() as b:
        yield b


def _submit_login(b, user, password):
    """Fill the login form the page shows and submit it."""
    b.eval(
        "document.getElementById('username').value = %s;"
        "document.getElementById('password').value = %s;"
        "document.getElementById('login').submit()" % (json.dumps(user), json.dumps(password))
    )


def _open_first_round(b, base_url):
    """From a table's page, open the first settled round it links -> (its href, {positions,
    cards, verdict, wagers} as the round page shows them)."""
    href = b.eval("document.querySelector('#rounds a[href^=\"/round/\"]').getAttribute('href')")
    b.goto(base_url + href.lstrip("/"))
    b.wait("document.querySelectorAll('#dealing .card[data-card]').length > 0")
    return href, b.eval(
        "(() => { const all = s => [...document.querySelectorAll(s)]; return {"
        "positions: all('#dealing .deal').map(d => +d.dataset.position), "
        "cards: all('#dealing .deal .card').map(c => c.dataset.card || null), "
        "verdict: document.getElementById('verdict').textContent, "
        "wagers: all('#seats td.wagers').map(t => t.textContent)}; })()"
    )


def test_floor_page_live_drilldown_alerts_and_no_keys(tmp_path, broker, db_url, browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with Floor(tmp_path, tables=8, rate=8, broker_url=broker.url, db_url=db_url) as f:
        f.driver.start()
        b = browser
        b.call("Page.navigate", url=f.view.url)  # no session: the login form
        b.wait("location.pathname === '/login' && document.readyState === 'complete'")
        b.screenshot(str(ARTIFACTS / "floor-login.png"))
        _submit_login(b, *f.login)
        b.wait("location.pathname === '/' && document.querySelectorAll('.tile').length === 8")
        assert "admin (admin)" in b.eval("document.getElementById('who').textContent")
        # live: the page's numbers follow the shoes without a reload
        first = b.eval("document.querySelector('.tile[data-shoe=T003] .eseq').textContent")
        b.wait(
            "+document.querySelector('.tile[data-shoe=T003] .eseq').textContent > %d + 5"
            % int(first)
        )
        assert b.eval("window.floorUpdates") > 2
        wait_for(
            lambda: b.eval(
                "document.body.innerText.includes('round ') && "
                "document.body.innerText.includes('link up')"
            ),
            what="results",
        )
        b.screenshot(str(ARTIFACTS / "floor.png"))
        # a forged event appears on the alerts page and on the table's tile
        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion

        c = paho.Client(CallbackAPIVersion.VERSION2, client_id="intruder")
        c.connect("127.0.0.1", broker.port)
        c.loop_start()
        c.publish(mqtt.topic("T005", "events"), os.urandom(80), qos=1).wait_for_publish(10)
        c.disconnect()
        c.loop_stop()
        b.wait("document.querySelector('.tile[data-shoe=T005]').classList.contains('alert')")
        # exceptions first: the table with an open alert leads the floor; nets per seat, no JSON
        b.wait("document.querySelector('#grid .tile').dataset.shoe === 'T005'")
        assert (
            b.eval("document.querySelector('.tile[data-shoe=T005] .why').textContent") == "alert"
        )
        assert b.eval(
            "[...document.querySelectorAll('#grid .tile')].map(t => +t.dataset.rank)"
            ".every((r, i, a) => i === 0 || a[i - 1] <= r)"
        )
        b.wait("document.querySelectorAll('.tile .net[data-seat]').length > 0")
        assert '{"' not in b.eval("document.getElementById('grid').innerText")
        b.screenshot(str(tmp_path / "floor-exceptions.png"))
        b.goto(f.view.url + "alerts")
        b.wait("document.querySelectorAll('.alert-row').length >= 1")
        assert "T005" in b.eval("document.body.innerText")
        b.eval("document.querySelector('button.ack').click()")  # POST with the CSRF token
        b.wait("document.body.innerText.includes('acknowledged by admin')")
        b.screenshot(str(ARTIFACTS / "floor-alerts.png"))
        # drill-down: recent rounds with the engine's verdict, updated live
        b.goto(f.view.url + "table/T002")
        b.wait("document.querySelectorAll('#rounds tr').length > 1")
        assert "agree" in b.eval("document.querySelector('#rounds').innerText")
        b.screenshot(str(ARTIFACTS / "floor-table.png"))
        # the shift's figures and charts: one point a hand on the win line, a bar an hour
        b.wait("document.querySelector('#chart-win .win-line') !== null")
        # read in one evaluation: the shoes still deal and the page redraws as they do
        d = b.eval(
            "(() => { const q = s => document.querySelector(s); return {"
            "hands: parseInt(q('#fig-hands .v').textContent), "
            "points: q('#chart-win .win-line').getAttribute('points').trim().split(' ')"
            ".length, bars: [...document.querySelectorAll('#chart-hands rect.bar')]"
            ".map(r => +r.dataset.hands), hold: q('#fig-hold .v').textContent}; })()"
        )
        assert d["hands"] >= 1 and d["points"] == d["hands"], d
        assert len(d["bars"]) == 8 and sum(d["bars"]) == d["hands"], d
        assert d["hold"].endswith("%"), d
        b.screenshot(str(tmp_path / "floor-table-chart.png"))
        # a settled round: every card in dealing order, each wager, the engine's verdict
        href, r = _open_first_round(b, f.view.url)
        assert r["positions"] == list(range(len(r["positions"]))), r  # dealing order
        assert None not in r["cards"] and len(set(r["cards"])) == len(r["positions"]), r
        assert r["verdict"] == "agree" and r["wagers"] and all("ante" in w for w in r["wagers"])
        b.screenshot(str(tmp_path / "floor-round.png"))
        # the irregularity timeline of the table with the forged event
        b.goto(f.view.url + "timeline/T005")
        b.wait("document.querySelectorAll('#timeline .tl-item').length >= 1")
        assert "alert raised: " in b.eval("document.getElementById('timeline').innerText")
        b.screenshot(str(tmp_path / "floor-timeline.png"))
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
        b.eval(
            "document.getElementById('username').value = 'pat';"
            "document.getElementById('password').value = 'a pit password';"
            "document.getElementById('next').value = '/';"
            "document.getElementById('login').submit()"
        )
        b.wait("location.pathname === '/' && document.querySelectorAll('.tile').length === 8")
        assert b.eval("document.getElementById('nav').innerText").split() == ["tables"]
        assert "pat (pit)" in b.eval("document.getElementById('who').textContent")
        b.screenshot(str(ARTIFACTS / "floor-pit.png"))
        # the pit's drill-down: the shift's figures, no link to a round's cards or the timeline
        b.goto(f.view.url + "table/T002")
        b.wait(
            "document.querySelectorAll('#rounds tr').length > 1 && "
            "document.querySelector('#chart-win') !== null"
        )
        assert b.eval("document.querySelectorAll('#rounds a, #timeline-link').length") == 0
        b.call("Page.navigate", url=f.view.url + "alerts")
        b.wait("document.readyState === 'complete' && document.body.innerText.includes('403')")
        b.call("Page.navigate", url=f.view.url + href.lstrip("/"))
        b.wait("document.readyState === 'complete' && document.body.innerText.includes('403')")
    assert (ARTIFACTS / "floor.png").stat().st_size > 10000
    for name in ("floor-exceptions", "floor-table-chart", "floor-round", "floor-timeline"):
        assert (tmp_path / (name + ".png")).stat().st_size > 5000, name


def test_rounds_the_table_system_drives_through_the_gateway_show_on_the_logged_in_page(
    db_url, browser
):
    """The floor as issue 20 asks for it, end to end: each table's gateway holds its shoe's link
    and serves the table system on its API (procfloor: rounds opened and decided by a
    TableClient on a GatewayLink, role table), the events go gateway -> broker -> collector ->
    PostgreSQL, and the floor page, behind its login, shows each settled round's cards in
    dealing order with the engine's verdict."""
    import tempfile

    from host_tools.sim.floor.procfloor import ProcFloor

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with ProcFloor(
        tempfile.mkdtemp(prefix="test-ts-page-"),  # short: the APIs' Unix socket paths
        tables=2,
        per_process=2,
        collectors=1,
        rate=40,
        broker="aedes",
        db_url=db_url,
        table_system={"decide_s": 0.0, "gap_s": 0.2},
    ) as f:
        f.go()
        b = browser
        b.call("Page.navigate", url=f.view_url)
        b.wait("location.pathname === '/login' && document.readyState === 'complete'")
        _submit_login(b, *f.login)
        b.wait("location.pathname === '/' && document.querySelectorAll('.tile').length === 2")
        b.goto(f.view_url + "table/T0001")
        b.wait("document.querySelectorAll('#rounds a[href^=\"/round/\"]').length >= 2")
        assert "agree" in b.eval("document.querySelector('#rounds').innerText")
        _, r = _open_first_round(b, f.view_url)
        assert r["positions"] == list(range(len(r["positions"]))) and r["positions"], r
        assert None not in r["cards"] and len(set(r["cards"])) == len(r["positions"]), r
        assert r["verdict"] == "agree", r
        b.screenshot(str(ARTIFACTS / "floor-table-system-round.png"))
        ts = f.stop_driving()
    # the rounds were the table system's: opened and decided through the gateways' APIs
    assert ts["rounds"] >= 2 and ts["commands"] >= 2 * ts["rounds"], ts
    assert not ts["errors"], ts
