"""Nothing face down is readable before its time, downstream of the table: a six-seat round of
each game on the virtual board (the firmware under MicroPython), its events through the gateway
(the table's audit store, MQTT) and a collector into PostgreSQL, and the floor page.

While the players decide (every card dealt, the round's decisions not yet closed), the test
reads everything each party can: every row and column of the gateway's audit store (SQLite), every
MQTT message on floor/# (events and the retained state messages) through a subscriber of its
own, every row of every table the `floor_reader` role can SELECT (payloads included), and the
floor page and its JSON and event stream as each role sees them (pit, surveillance, auditor,
admin: every route each may use, logged in, the round view of the round in play included). It
searches all of it for every dealt card (tests/security/leaks.py: names, codes, card ids) and
finds none. After the reveal the store, MQTT and the database hold every card, and so does the
round view (/round/<shoe>/<round> and its JSON) for the roles that may open it, and no other
page: the pit, which may not, sees no card anywhere."""

import queue
import re
import sqlite3
import threading

import pytest

from host_tools.floor import keyring, mqtt, pg
from host_tools.floor.auth import ROLES, Users
from host_tools.floor.collector import Collector
from host_tools.floor.gateway import Gateway
from host_tools.floor.view import ROUTES, FloorView
from host_tools.sim.virtual_table import VirtualTable
from shoe.link import codec
from tests.host_tools.floor.conftest import wait_for
from tests.host_tools.floor.web import Web
from tests.security import leaks
from tests.security.test_secrecy import FCF, HCF, dealt_count, seats, stacked


class _Tee(queue.Queue):
    """The link's event queue, copied to the gateway's (the runner consumes the original)."""

    def __init__(self, copy):
        super().__init__()
        self.copy = copy

    def put(self, item, block=True, timeout=None):
        super().put(item, block, timeout)
        self.copy.put(item)


class _GatewaysLink:
    """The table's ShoeLink as the gateway sees it: its own copy of the events."""

    def __init__(self, link, events):
        self._link = link
        self.events = events

    def __getattr__(self, name):
        return getattr(self._link, name)


class _Sniffer:
    """Anyone allowed to subscribe to floor/#: every message, retained ones included."""

    def __init__(self, url):
        self.msgs = []
        self.lock = threading.Lock()
        self.c = mqtt.client(
            url, "sniffer", clean=True, on_connect=self._on_connect, on_message=self._on_message
        )

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        client.subscribe(mqtt.PREFIX + "/#", qos=1)

    def _on_message(self, client, userdata, msg):
        with self.lock:
            self.msgs.append((msg.topic, bytes(msg.payload)))
            inner, at = keyring.split_event(msg.payload)
            if at is not None:  # the gateway's timed envelope: search the sealed bytes too
                self.msgs.append((msg.topic + " (sealed payload)", inner))

    def snapshot(self):
        with self.lock:
            return list(self.msgs)

    def stop(self):
        self.c.disconnect()
        self.c.loop_stop()


def _store_rows(path):
    db = sqlite3.connect(str(path))
    try:
        out = []
        for table in ("events", "flags"):
            out += [(table, r) for r in db.execute("SELECT * FROM %s" % table).fetchall()]
        return out
    finally:
        db.close()


def _reader_rows(db_url):
    c = pg.connect(db_url)
    try:
        c.execute("SET ROLE floor_reader")
        out = []
        for table in ("shoes", "events", "rounds", "alerts", "collectors", "schema_migrations"):
            out += [(table, r) for r in c.execute("SELECT * FROM %s" % table).fetchall()]
        return out
    finally:
        c.close()


def _logins(view, users):
    """One logged-in client per role."""
    out = {}
    for role in ROLES:
        users.add("u-" + role, role, "password-of-" + role, replace=True)
        out[role] = Web(view.url).login("u-" + role, "password-of-" + role)
    return out


def _page(webs, shoe, rnd=1):
    out = []
    paths = (
        "",
        "alerts",
        "audit",
        "table/" + shoe,
        "api/me",
        "api/floor",
        "api/alerts",
        "api/audit",
        "api/table/" + shoe,
        "round/%s/%d" % (shoe, rnd),
        "api/round/%s/%d" % (shoe, rnd),
        "timeline/" + shoe,
        "api/timeline/" + shoe,
    )
    gets = [p for m, p, roles, kind in ROUTES if m == "GET" and p != "/events"]
    # every GET route of the allowlist is read here
    assert {next(p for p in gets if re.fullmatch(p, "/" + path)) for path in paths} == set(gets)
    for role, w in webs.items():
        may = {p for m, p, roles, kind in ROUTES if role in roles and m == "GET"}
        for path in paths:
            status, _, body = w.get(path)
            route = next(p for p in gets if re.fullmatch(p, "/" + path))
            assert status == (200 if route in may else 403), (role, path, status)
            out.append((role + " " + path, body.decode()))
        status, first = w.first_event("events")  # the live stream
        assert status == 200
        out.append((role + " events", first.decode()))
    return out


def _search(where, rows, cards):
    found = {}
    for i, (what, row) in enumerate(rows):
        for j, v in enumerate(row if isinstance(row, (tuple, list)) else [row]):
            leaks.search(v, cards, "%s %s[%d][%d]" % (where, what, i, j), found)
    return found


def _everything(t, store_path, sniffer, db_url, webs, shoe, cards):
    return {
        "store": _search("store", _store_rows(store_path), cards),
        "mqtt": _search("mqtt", sniffer.snapshot(), cards),
        "floor_reader": _search("db", _reader_rows(db_url), cards),
        "page": _search("page", _page(webs, shoe), cards),
    }


@pytest.mark.parametrize("game", (FCF, HCF))
def test_store_mqtt_database_and_page_hold_no_face_down_card_before_the_reveal(
    tmp_path, broker, db_url, game
):
    order = stacked(31 if game == FCF else 32)
    n = dealt_count(game, "manual-shoe")
    cards = order[:n]
    script = {
        "game": game,
        "procedure": "manual-shoe",
        "seed": 5,
        "shuffle_check": False,
        "rounds": [{"deck": order, "seats": seats(game)}],
    }
    store_path = tmp_path / "gw.sqlite"
    before = {}
    parts = []
    with VirtualTable(str(tmp_path / "flash"), db=str(store_path)) as t:
        try:
            gw_events = queue.Queue()
            with t.link._lock:  # the link's events, copied to the gateway
                old, t.link.events = t.link.events, _Tee(gw_events)
                while not old.empty():
                    t.link.events.put(old.get())
            shoe = t.link.shoe_id
            ring = keyring.load(tmp_path / "flash" / "shoe.json")
            sniffer = _Sniffer(broker.url)
            parts.append(sniffer)
            col = Collector(broker.url, db_url, ring, "collector-secrecy").start()
            parts.append(col)
            gw = Gateway(broker.url, "gw-secrecy", fetch_config=True)
            gw.add(shoe, _GatewaysLink(t.link, gw_events), t.store)
            gw.start()
            parts.append(gw)
            users = Users()
            view = FloorView(db_url, users=users).start()
            parts.append(view)
            webs = _logins(view, users)
            conn = pg.connect(db_url)

            def stored_up_to(eseq):
                return conn.execute(
                    "SELECT coalesce(max(eseq), 0) FROM events WHERE shoe=%s", (shoe,)
                ).fetchone()[0] >= eseq and any(
                    tp.endswith("/events") and codec.decode(keyring.split_event(p)[0])[2] >= eseq
                    for tp, p in sniffer.snapshot()
                )

            orig = t.runner.command

            def command(kind, body, supervisor=None):
                if kind == "decisions" and not before:
                    # every card dealt, the decisions not closed: everything is downstream
                    last = t.store.last_eseq(shoe)
                    wait_for(lambda: stored_up_to(last), what="the deal in PostgreSQL")
                    kinds = [e["kind"] for e in t.store.events(shoe)]
                    assert kinds.count("card") == n and "deal_complete" in kinds
                    assert "reveal" not in kinds
                    before.update(_everything(t, store_path, sniffer, db_url, webs, shoe, cards))
                return orig(kind, body, supervisor)

            t.runner.command = command
            out = t.runner.play(script)
            assert [o[1] for o in out] == ["round_result"]
            last = t.store.last_eseq(shoe)
            wait_for(lambda: stored_up_to(last), what="the round in PostgreSQL")
            after = _everything(t, store_path, sniffer, db_url, webs, shoe, cards)
            alerts = conn.execute("SELECT kind, detail FROM alerts").fetchall()
        finally:
            for p in reversed(parts):
                p.stop()
    assert before == {"store": {}, "mqtt": {}, "floor_reader": {}, "page": {}}
    for who in ("store", "mqtt", "floor_reader"):
        assert set(after[who]) == set(cards), (who, sorted(set(cards) - set(after[who])))
    # after the reveal the round view shows every card, to the roles that may open it, and no
    # other page shows one
    assert set(after["page"]) == set(cards), sorted(set(cards) - set(after["page"]))
    watch = [
        r for r in ROLES if any(r in roles for m, p, roles, k in ROUTES if p.startswith("/round/"))
    ]
    assert "pit" not in watch and watch
    for card, where in after["page"].items():
        for w in where:
            who, path = w.split(" ")[1], w.split(" ")[2].split("[")[0]
            assert who in watch and re.match(r"(api/)?round/", path), (card, w)
    assert alerts == []  # every commitment checked by the collector: no mismatch
