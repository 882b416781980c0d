"""The audit store proves what it shows: every kind of tampering with the SQLite file is reported.

Events travel from a shoe Endpoint (in memory) to a HostEndpoint and into an AuditStore, as on a
real link; then the database is edited behind the store's back: a body, a payload, a middle row,
the last rows. `verify` and `compare_live` (the shoe's own chain, as `shoectl verify --port` gets
it from `status`) must name each one; reports show the signed body, not the edited copy."""

import io
import json

import pytest

from host_tools.audit import AuditStore
from host_tools.link.host import HostEndpoint
from host_tools.sim.memstore import MemoryStore
from shoe.link.endpoint import Endpoint

KEY = b"k" * 32


@pytest.fixture
def filled(tmp_path):
    """(store, shoe MemoryStore): six events stored, all acknowledged by the host."""
    st = MemoryStore()
    shoe = Endpoint("shoe", KEY, store=st, shoe_id="A1")
    host = HostEndpoint(KEY, ack_every=1, ack_delay_ms=0)
    a = AuditStore(tmp_path / "a.sqlite")
    for i in range(6):
        kind = "round_result" if i % 2 else "card"
        shoe.send(kind, {"i": i, "payout": 10 * i, "raw": b"\x01\x02"})
    for t in range(0, 1000, 10):
        for kind, body, eseq, meta in host.receive(shoe.transmit(t), t):
            if eseq:
                assert a.store("A1", eseq, kind, body, meta) == "new"
        shoe.receive(host.transmit(t), t)
    assert a.last_eseq("A1") == 6 and st.outbox_first() == 7  # all acknowledged
    yield a, st
    a.close()


def _live(a, st):
    return a.compare_live("A1", st.eseq, st.chain, st.outbox_first() - 1)


def test_an_untouched_store_verifies_and_matches_the_live_chain(filled):
    a, st = filled
    rep = a.verify("A1", KEY)
    assert (rep["bad_mac"], rep["body_mismatch"], rep["broken"], rep["gaps"]) == ([],) * 4
    assert rep["last"] == 6 and bytes.fromhex(rep["head"]) == st.chain
    assert _live(a, st) == []


def test_an_edited_body_is_reported_and_never_shown(filled):
    a, st = filled
    a._db.execute(
        "UPDATE events SET body=? WHERE eseq=4",
        (json.dumps({"i": 3, "payout": 9999, "raw": "0102"}),),
    )
    a._db.execute("UPDATE events SET kind='card' WHERE eseq=2")
    a._db.commit()
    rep = a.verify("A1", KEY)
    assert rep["body_mismatch"] == [2, 4] and rep["bad_mac"] == []
    # what rounds and export show is the signed payload, not the edited copy
    assert [r["body"]["payout"] for r in a.rounds("A1")] == [10, 30, 50]
    out = io.StringIO()
    a.export(out, "jsonl", "A1")
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    assert rows[3]["body"]["payout"] == 30 and rows[1]["kind"] == "round_result"


def test_an_edited_payload_is_reported(filled):
    a, st = filled
    p = a._db.execute("SELECT payload FROM events WHERE eseq=3").fetchone()[0]
    forged = p.replace(b"payout\x14", b"payout\x15")  # 20 -> 21, MAC left as it was
    assert forged != p
    a._db.execute("UPDATE events SET payload=? WHERE eseq=3", (forged,))
    a._db.commit()
    assert a.verify("A1", KEY)["bad_mac"] == [3]


def test_a_deleted_middle_row_is_reported(filled):
    a, st = filled
    a._db.execute("DELETE FROM events WHERE eseq=3")
    a._db.commit()
    assert a.verify("A1", KEY)["gaps"] == [4]


def test_deleted_last_rows_are_caught_against_the_live_chain(filled):
    a, st = filled
    a._db.execute("DELETE FROM events WHERE eseq>=5")
    a._db.commit()
    rep = a.verify("A1", KEY)  # the store alone cannot see it ...
    assert (rep["bad_mac"], rep["body_mismatch"], rep["broken"], rep["gaps"]) == ([],) * 4
    [problem] = _live(a, st)  # ... the shoe's chain can
    assert "removed at the end" in problem and "4" in problem and "6" in problem


def test_a_store_ahead_of_the_shoe_or_on_another_chain_is_caught(filled):
    a, st = filled
    assert "only sent 5" in a.compare_live("A1", 5, st.chain, 5)[0]
    assert "differs" in a.compare_live("A1", 6, b"\x00" * 16, 6)[0]
    assert "not yet delivered" in a.compare_live("A1", 8, st.chain, 6)[0]


def test_events_arriving_after_the_status_are_not_a_problem(filled):
    import time

    a, st = filled
    asked = time.time() + 3600  # all six rows arrived "before" the status was asked for
    assert "only sent 5" in a.compare_live("A1", 5, st.chain, 5, before=asked)[0]
    asked = 0.0  # ... or all after it: the shoe sent them since
    e5 = a._db.execute("SELECT hash FROM events WHERE eseq=5").fetchone()[0]
    assert a.compare_live("A1", 5, e5, 5, before=asked) == []


def test_stored_of_names_the_eseqs_held_and_only_those(filled):
    """What the floor's loss report asks (sim/floor/procfloor.py): which of these eseqs are here;
    more than one batch of 500, other shoes' and absent ones left out."""
    a, _ = filled
    assert a.stored_of("A1", [6, 2, 7, 0, 1200]) == {2, 6}
    assert a.stored_of("A1", list(range(-600, 600))) == {1, 2, 3, 4, 5, 6}
    assert a.stored_of("B9", [1, 2]) == set() and a.stored_of("A1", []) == set()


def test_a_transaction_holds_the_write_lock_from_its_first_read(tmp_path):
    """What a transaction reads (the last event, its hash) is what it writes after: no other
    connection commits in between (BEGIN IMMEDIATE), readers still read."""
    import sqlite3

    a = AuditStore(tmp_path / "a.sqlite")
    other = sqlite3.connect(str(a.path), timeout=0)
    try:
        with a.transaction():
            a.last_eseq("A1")
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("INSERT INTO flags VALUES ('A1', 1, 'x', 1, 'x', 0)")
            other.rollback()
            assert other.execute("SELECT COUNT(*) FROM events").fetchall() == [(0,)]
        other.execute("INSERT INTO flags VALUES ('A1', 1, 'x', 1, 'x', 0)")
        other.commit()
    finally:
        other.close()
        a.close()


def _chained(n, shoe="A1"):
    """n signed, chained events of `shoe` as the link delivers them: [(kind, body, eseq, meta)]."""
    from shoe.link.message import GENESIS, seal_message

    out, head = [], GENESIS
    for eseq in range(1, n + 1):
        payload, h = seal_message(KEY, "card", {"i": eseq}, eseq, head)
        out.append(
            ("card", {"i": eseq}, eseq, {"prev": head, "hash": h, "payload": payload, "mac": b""})
        )
        head = h
    return out


def _put(a, ev, shoe="A1"):
    kind, body, eseq, meta = ev
    return a.store(shoe, eseq, kind, body, meta)


def _chain_of(a, eseq, shoe="A1"):
    return a._db.execute(
        "SELECT chain FROM events WHERE shoe=? AND eseq=?", (shoe, eseq)
    ).fetchone()[0]


def test_a_rolled_back_event_is_not_the_last_one_after(tmp_path):
    """The last event each shoe's store() keeps in memory goes with a rollback: the next event
    after the rolled-back one arrives after a gap, and the store ends where it did."""
    evs = _chained(5)
    a = AuditStore(tmp_path / "a.sqlite")
    try:
        for ev in evs[:3]:
            assert _put(a, ev) == "new"
        with pytest.raises(RuntimeError):
            with a.transaction():
                assert _put(a, evs[3]) == "new" and a.last_eseq("A1") == 4
                raise RuntimeError("the floor file cannot be written")
        assert a.last_eseq("A1") == 3 and a.hash_at("A1", 4) is None
        with a.transaction():
            assert a.last_eseq("A1") == 3 and a.hash_at("A1", 4) is None
            assert _put(a, evs[4]) == "new"
        assert _chain_of(a, 5) == "gap"
        assert _put(a, evs[3]) == "new" and _chain_of(a, 4) == "ok"  # sent again: in place
        with a.transaction():
            assert a.last_eseq("A1") == 5 and a.hash_at("A1", 5) == evs[4][3]["hash"]
    finally:
        a.close()


@pytest.mark.parametrize("same_connection", [False, True], ids=["another", "this-one"])
def test_rows_changed_outside_the_store_are_seen_by_the_next_event(tmp_path, same_connection):
    """Another connection (or a raw statement on this one) removes the last event between two
    store() calls: the next event is marked as after a gap, not chained onto the kept hash."""
    import sqlite3

    evs = _chained(4)
    a = AuditStore(tmp_path / "a.sqlite")
    other = a._db if same_connection else sqlite3.connect(str(a.path))
    try:
        for ev in evs[:3]:
            _put(a, ev)
        other.execute("DELETE FROM events WHERE eseq=3")
        other.commit()
        with a.transaction():
            assert a.last_eseq("A1") == 2 and a.hash_at("A1", 3) is None
        assert _put(a, evs[3]) == "new" and _chain_of(a, 4) == "gap"
        other.execute("UPDATE events SET hash=zeroblob(16) WHERE eseq=4")
        other.commit()
        with a.transaction():
            assert a.hash_at("A1", 4) == bytes(16)
    finally:
        if not same_connection:
            other.close()
        a.close()


def test_a_duplicate_changes_nothing_and_a_bad_row_still_raises(tmp_path):
    """An event already held is "duplicate" (the kept last event stays); a row SQLite refuses
    for another reason than the key (kind NULL) raises, it is not taken for a duplicate."""
    import sqlite3

    evs = _chained(3)
    a = AuditStore(tmp_path / "a.sqlite")
    try:
        for ev in evs:
            _put(a, ev)
        assert _put(a, evs[1]) == "duplicate" and _put(a, evs[2]) == "duplicate"
        with a.transaction():
            assert a.last_eseq("A1") == 3 and a.hash_at("A1", 3) == evs[2][3]["hash"]
        with pytest.raises(sqlite3.IntegrityError):
            a.store("A1", 4, None, {}, {"prev": evs[2][3]["hash"]})
        assert a.last_eseq("A1") == 3
    finally:
        a.close()
