"""The floor collector checks every commitment at the reveal (host_tools/reveal.py), on its own:
a lying shoe's genuine, signed events (the shoe's own key) are stored, and the lie is a
`reveal_mismatch` alert on the floor: a card swapped after it was dealt, a position never
committed, a result whose cards are not the revealed ones. An honest table raises none. The
gateway's link (its audit store) flags the same lies; tests/host_tools/test_reveal.py has the
link and `shoectl verify` on their own."""

from host_tools.floor import pg
from host_tools.sim.floor.harness import Floor
from tests.host_tools.floor.conftest import wait_all_stored
from tests.host_tools.lying import HOW, POS, lying_round


def test_the_collector_alerts_each_lie_of_a_shoe(tmp_path, broker, db_url):
    with Floor(tmp_path, tables=len(HOW), broker_url=broker.url, db_url=db_url) as f:
        conn = pg.connect(db_url)
        table = {}
        for shoe, how in zip(f.shoes, HOW):
            shoe._plan = lying_round(shoe, how)
            table[shoe.shoe_id] = how
        while any(s._plan for s in f.shoes):
            for s in f.shoes:
                if s._plan:
                    s.step()
        wait_all_stored(f, conn)
        alerts = conn.execute("SELECT shoe, kind, detail FROM alerts").fetchall()
        want = {
            "changed": "position %d: the revealed card" % POS,
            "missing": "position %d: revealed" % POS,
            "result": "in the result are not the revealed",
        }
        for sid, how in sorted(table.items()):
            mine = [(k, d) for s, k, d in alerts if s == sid]
            if how == "honest":
                assert mine == [], mine
                continue
            assert any(k == "reveal_mismatch" and want[how] in d for k, d in mine), (how, mine)
        # the lying shoe settled on what it revealed: the engine agrees, only the commitments
        # (or, for "result", the revealed cards) tell
        changed = [s for s, h in table.items() if h == "changed"][0]
        assert [k for s, k, d in alerts if s == changed] == ["reveal_mismatch"]
        # the gateway's own link flagged the same lies in its audit store
        for sid, how in table.items():
            store = f.stores[[s.shoe_id for s in f.shoes].index(sid)]
            flags = store.flags(sid)
            assert bool(flags) == (how != "honest"), (how, flags)
