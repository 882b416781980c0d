"""The floor page's figures and views against a known floor written straight into PostgreSQL:
the shift's win/loss, hands per hour and hold (SQL over `rounds` and the results' wagers, read as
floor_reader), the round view's rule (no card before the round's reveal or end, even from
firmware that dealt cards in clear; after it, every card in dealing order, each wager, the
engine's verdict), and the irregularity timeline in time order, acknowledgements included."""

import calendar
import itertools
import json

import pytest

from host_tools.floor import pg
from host_tools.floor.auth import Users
from host_tools.floor.view import FloorView
from tests.host_tools.floor.web import Web
from tests.security import leaks

SHOE = None
_shoes = itertools.count(1)
_dbs = itertools.count(1)


class _Floor:
    """Rows as the collector would write them (the owner writes here: the view only reads).
    One database for the module (each test its own table): the floor's setup is the slow part."""

    def __init__(self, c, view):
        self.c = c
        self.view = view
        global SHOE
        SHOE = "P%03d" % next(_shoes)
        self.c.execute("INSERT INTO shoes (shoe, phase) VALUES (%s, 'idle')", (SHOE,))
        self.eseq = 0

    def event(self, kind, body, at=None):
        self.eseq += 1
        self.c.execute(
            "INSERT INTO events (shoe, eseq, kind, body, prev, hash, mac, payload, "
            "chain, collector, received_at) VALUES (%s, %s, %s, %s, '\\x00', "
            "'\\x00', '\\x00', '\\x00', 'ok', 'c1', coalesce(to_timestamp(%s), "
            "clock_timestamp()))",
            (SHOE, self.eseq, kind, json.dumps(body), at),
        )
        return self.eseq

    def round(self, eseq, rnd, outcome, summary, reeval, at=None):
        self.c.execute(
            "INSERT INTO rounds (shoe, eseq, round, outcome, summary, reeval, "
            "settled_at) VALUES (%s, %s, %s, %s, %s, %s, coalesce(to_timestamp(%s), "
            "clock_timestamp()))",
            (SHOE, eseq, rnd, outcome, json.dumps(summary), reeval, at),
        )


@pytest.fixture(scope="module")
def _db(pg_server):
    from argon2 import PasswordHasher

    # a name of its own each time: worksteal may split the module, set this up again in the same
    # worker, and a session of the view stopped just before may still be ending in PostgreSQL
    name = "floor_page_%d" % next(_dbs)
    c = pg.connect(pg_server)
    c.execute("CREATE DATABASE %s" % name)
    c.close()
    base, _, query = pg_server.partition("?")
    url = base.rsplit("/", 1)[0] + "/" + name + ("?" + query if query else "")
    pg.migrate(url)
    light = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)  # as test_login
    users = Users(
        None,
        {
            "sam": {"role": "surveillance", "hash": light.hash("password-of-sam")},
            "pat": {"role": "pit", "hash": light.hash("password-of-pat")},
        },
    )
    v = FloorView(url, users=users).start()
    c = pg.connect(url)
    yield c, v
    v.stop()
    c.close()


@pytest.fixture
def floor(_db):
    return _Floor(*_db)


def _result(rnd, seats):
    """A decoded round_result body: seats {seat: (net, {wager: amount})}."""
    return {
        "round": rnd,
        "game": "four-card-frenzy",
        "dealer": {"cards": [], "category": "pair"},
        "seats": {
            s: {
                "net": n,
                "cards": [],
                "category": "pair",
                "wagers": {k: {"amount": a, "result": 0, "payout": 0} for k, a in w.items()},
            }
            for s, (n, w) in seats.items()
        },
    }


def test_shift_start_follows_the_shift_boundaries():
    v = FloorView("postgresql://unused", users=Users())  # 8 h shifts from 06:00 UTC
    t = calendar.timegm((2026, 12, 2, 17, 0, 0))
    assert v.shift_start(t) == calendar.timegm((2026, 12, 2, 14, 0, 0))
    t = calendar.timegm((2026, 12, 3, 3, 30, 0))
    assert v.shift_start(t) == calendar.timegm((2026, 12, 2, 22, 0, 0))


def test_shift_win_loss_hands_per_hour_and_hold_from_rounds(floor):
    v = floor.view
    start = v.shift_start()
    old = floor.event("round_result", _result(1, {"1": (-1000, {"ante": 1000})}))
    floor.round(old, 1, "result", {"seats": {"1": -1000}}, "agree", at=start - 60)  # last shift
    plays = [  # (seats {seat: (net, wagers)}) ; the house wins minus the nets
        {
            "1": (50, {"ante": 25, "odds": 25, "raise": 25}),
            "2": (-30, {"ante": 10, "odds": 10, "raise": 10}),
        },
        {"1": (-75, {"ante": 25, "odds": 25, "raise": 25})},
        {"3": (-20, {"ante": 5, "odds": 5, "raise": 5, "prime": 5})},
    ]
    for i, seats in enumerate(plays):
        e = floor.event("round_result", _result(i + 2, seats))
        floor.round(
            e,
            i + 2,
            "result",
            {"seats": {s: n for s, (n, _) in seats.items()}},
            "agree",
            at=start + 60 + 600 * i,
        )
    e = floor.event("round_void", {"round": 5, "reason": "misdeal"})
    floor.round(e, 5, "void", {"reason": "misdeal"}, "void", at=start + 60 + 1800)
    # a malformed summary and a result event without wagers count as nothing, not a failure
    e = floor.event("round_result", {"round": 6, "seats": "garbage"})
    floor.round(e, 6, "result", {"seats": {"1": "x", "2": None}}, "agree", at=start + 60 + 2400)
    s = v.shift(SHOE, now=start + 3000)
    assert s["start"] == start
    assert (s["hands"], s["voids"]) == (4, 1)
    assert s["win"] == -50 + 30 + 75 + 20 == 75
    assert s["wagered"] == 75 + 30 + 75 + 20 == 200
    assert s["hold"] == pytest.approx(75 / 200)
    assert s["per_hour"] == pytest.approx(4 * 3600 / 2400)  # 5 rounds in 40 min
    assert [r["house"] for r in s["series"]] == [-20, 75, 20, 0, 0]
    # as the page gets it: the pit sees its table's figures
    pit = Web(v.url).login("pat", "password-of-pat")
    assert pit.json("api/table/" + SHOE)["shift"]["hands"] == 4


def test_round_view_shows_no_card_before_the_reveal_then_every_card_in_dealing_order(floor):
    v = floor.view
    sam = Web(v.url).login("sam", "password-of-sam")
    floor.event("round_open", {"round": 7, "seats": {"1": {"ante": 25, "odds": 25}}})
    dealt = ["Ah", "Kd", "2c", "9s"]
    for i, (card, target) in enumerate(zip(dealt, ("1", "dealer", "1", "dealer"))):
        # as firmware before the secrecy change sent them: the card in clear
        floor.event(
            "card",
            {"round": 7, "position": i, "target": target, "card": card, "commit": "ab" * 16},
        )
    floor.event("deal_complete", {"round": 7, "cards": 4})
    before = sam.json("api/round/%s/7" % SHOE)
    assert before["revealed"] is False and before["settled"] is None
    assert [(d["position"], d["target"], d["card"]) for d in before["dealt"]] == [
        (0, "1", None),
        (1, "dealer", None),
        (2, "1", None),
        (3, "dealer", None),
    ]
    assert before["wagers"] == {"1": {"ante": 25, "odds": 25}}
    page = sam.get("round/%s/7" % SHOE)[2].decode() + json.dumps(before)
    assert leaks.search(page, dealt) == {} and leaks.search(v.round_view(SHOE, 7), dealt) == {}
    # the reveal: every card in dealing order, from the reveal (it wins over the card events)
    floor.event("reveal", {"round": 7, "secret": "00" * 16, "cards": dealt})
    after = sam.json("api/round/%s/7" % SHOE)
    assert after["revealed"] is True
    assert [d["card"] for d in after["dealt"]] == dealt
    # the result: each seat's wagers, hand and net, the dealer, the engine's verdict
    res = _result(7, {"1": (-75, {"ante": 25, "odds": 25, "raise": 25})})
    res["seats"]["1"]["cards"] = ["Ah", "2c"]
    res["dealer"]["cards"] = ["Kd", "9s"]
    e = floor.event("round_result", res)
    floor.round(e, 7, "result", {"seats": {"1": -75}}, "disagree")
    floor.c.execute(
        "INSERT INTO alerts (shoe, eseq, kind, detail, collector) VALUES "
        "(%s, %s, 'disagreement', 'seat 1: the engine pays -50', 'c1')",
        (SHOE, e),
    )
    done = sam.json("api/round/%s/7" % SHOE)
    assert done["settled"]["reeval"] == "disagree"
    assert done["seats"]["1"]["wagers"]["raise"]["amount"] == 25
    assert done["seats"]["1"]["cards"] == ["Ah", "2c"] and done["dealer"]["cards"] == ["Kd", "9s"]
    assert [a["kind"] for a in done["alerts"]] == ["disagreement"]
    # the next round, in play: the view of round 8 shows none of its cards
    floor.event("round_open", {"round": 8, "seats": {}})
    floor.event("card", {"round": 8, "position": 0, "target": "1", "card": "Qh"})
    nxt = sam.json("api/round/%s/8" % SHOE)
    assert nxt["revealed"] is False and leaks.search(nxt, ["Qh"]) == {}
    assert sam.get("api/round/%s/9" % SHOE)[0] == 404
    assert sam.get("api/round/NOPE/7")[0] == 404


def test_timeline_lists_irregularities_and_alerts_in_time_order(floor):
    v = floor.view
    import time

    t = time.time() - 600
    # ten minutes ago may be yesterday (UTC): its partition, as a collector running then made it
    floor.c.execute("SELECT floor_event_partitions(to_timestamp(%s), 1)", (t,))
    floor.event("irregularity", {"id": 3, "reason": "card_removed", "detail": "tray"}, at=t)
    floor.c.execute(
        "INSERT INTO alerts (shoe, eseq, kind, detail, ref, collector, raised_at, "
        "closed_at) VALUES (%s, 1, 'irregularity', 'card_removed: tray', '3', 'c1', "
        "to_timestamp(%s), to_timestamp(%s))",
        (SHOE, t + 1, t + 120),
    )
    floor.event("irregularity_cleared", {"id": 3}, at=t + 119)
    floor.c.execute(
        "INSERT INTO alerts (shoe, kind, detail, collector, raised_at) VALUES "
        "(%s, 'bad_mac', 'forged', 'c1', to_timestamp(%s))",
        (SHOE, t + 60),
    )
    floor.c.execute(
        "INSERT INTO alerts (shoe, kind, detail, collector, raised_at) VALUES "
        "('X999', 'bad_mac', 'another table', 'c1', to_timestamp(%s))",
        (t + 30,),
    )
    sam = Web(v.url).login("sam", "password-of-sam")
    items = sam.json("api/timeline/" + SHOE)["items"]
    assert [(i["what"], i.get("kind")) for i in items] == [
        ("irregularity", None),
        ("alert", "irregularity"),
        ("alert", "bad_mac"),
        ("irregularity_cleared", None),
        ("alert_closed", "irregularity"),
    ]
    assert items[0]["detail"] == "card_removed: tray"
    assert [i["at"] for i in items] == sorted(i["at"] for i in items)
    # an acknowledgement (surveillance may) joins the timeline after the alert it answers
    bad_mac = next(i["alert"] for i in items if i.get("kind") == "bad_mac")
    assert sam.post("api/alerts/%d/ack" % bad_mac, csrf=sam.me()["csrf"])[0] == 200
    items = sam.json("api/timeline/" + SHOE)["items"]
    assert [(i["what"], i.get("detail")) for i in items][-1] == (
        "alert_acknowledged",
        "by sam (surveillance)",
    )
    pit = Web(v.url).login("pat", "password-of-pat")
    assert pit.get("api/timeline/" + SHOE)[0] == 403


def test_a_stopped_view_leaves_no_database_session(pg_server, db_url):
    """FloorView.stop() closes every database session the view opened, those of request threads
    a browser's kept-alive connection still holds included (they used to stay open until
    collected: PostgreSQL then refused to drop the database, once in a CI run)."""
    import gc

    import psycopg
    from argon2 import PasswordHasher

    from tests.support import wait_for

    pg.migrate(db_url)
    light = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    users = Users(None, {"sam": {"role": "surveillance", "hash": light.hash("pw-of-sam")}})
    v = FloorView(db_url, users=users).start()
    name = db_url.split("?")[0].rsplit("/", 1)[1]
    admin = pg.connect(pg_server)

    def sessions():
        q = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        return admin.execute(q, (name,)).fetchone()[0]

    try:
        w = Web(v.url).login("sam", "pw-of-sam")
        r, kept = w.request("GET", "api/floor", keep=True)  # the browser keeps the connection
        assert r.status == 200
        r.read()
        assert sessions() >= 1
        v.stop()
        # at once, no timing in it: no connection to that database is open in this process (the
        # kept-alive request thread's stayed open until its 60 s idle timeout ended the thread)
        gc.collect()
        left = [
            o
            for o in gc.get_objects()
            if isinstance(o, psycopg.Connection) and not o.closed and o.info.dbname == name
        ]
        assert not left, "%d connection(s) of the stopped view still open" % len(left)
        wait_for(lambda: sessions() == 0, what="no session left on the view's database")
        kept.close()
    finally:
        v.stop()
        admin.close()
