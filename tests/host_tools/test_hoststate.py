"""host_tools/hoststate.py: the floor file's format, the atomic write, the lock, and the record
the store and the file share (its generation, the window a crash leaves, the acceptance).
The attacks on these files are in tests/security/test_hoststate*.py."""

import json
import os

import pytest

from host_tools.audit import AuditStore
from host_tools.hoststate import (
    HostState,
    HostStateError,
    atomic_write,
    parse_floor,
    record_mac,
    refusal,
)
from tests.security.hoststate_support import KEY, SUP, Shoe, floor_of, verdict, write_state


@pytest.fixture
def state(tmp_path):
    store = AuditStore(tmp_path / "audit.sqlite")
    hs = HostState(store)
    hs.open()
    yield hs
    hs.close()
    store.close()


def test_a_new_store_has_no_floor_until_the_first_commit(state):
    assert state.check("T1", KEY) == 0
    assert not state.path.exists()  # nothing to write yet
    shoe = Shoe()
    rec = state.commit("T1", KEY, 5, shoe.events(3))
    assert (rec["gen"], rec["ctr"], rec["eseq"], rec["base"]) == (1, 5, 3, 0)
    assert rec["head"] == state.store.hash_at("T1", 3)
    doc = parse_floor(state.path.read_bytes())
    assert doc["store"] == state.store_id and doc["shoes"]["T1"] == rec
    assert state.store.host_record("T1") == rec  # the same record in the store
    assert not os.path.exists(str(state.path) + ".tmp")


def test_a_commit_with_nothing_new_writes_nothing(state):
    state.check("T1", KEY)
    state.commit("T1", KEY, 5)
    before = state.path.stat().st_mtime_ns, state.path.read_bytes()
    assert state.commit("T1", KEY, 5)["gen"] == 1
    assert state.commit("T1", KEY, 3)["gen"] == 1  # lower: the floor never goes down
    assert (state.path.stat().st_mtime_ns, state.path.read_bytes()) == before
    assert state.commit("T1", KEY, 6)["gen"] == 2


def test_commit_only_for_a_shoe_checked_in_this_process(state):
    with pytest.raises(HostStateError) as e:
        state.commit("T9", KEY, 3)
    assert e.value.reason == "floor_conflict"


def test_events_and_record_are_one_transaction(state):
    """A commit whose events cannot all be stored leaves neither them nor the record."""
    state.check("T1", KEY)
    shoe = Shoe()
    state.commit("T1", KEY, 2, shoe.events(2))
    bad = shoe.events(2)
    bad[1] = (bad[1][0], bad[1][1], bad[1][2], {"payload": object()})  # not storable
    with pytest.raises(Exception):  # noqa: B017 - whatever the store raises, nothing is kept
        state.commit("T1", KEY, 9, bad)
    assert state.store.last_eseq("T1") == 2 and state.store.host_record("T1")["ctr"] == 2
    assert parse_floor(state.path.read_bytes())["shoes"]["T1"]["ctr"] == 2
    rec = state.commit("T1", KEY, 3)  # the next record names the store's end, not event 3
    assert (rec["eseq"], rec["head"]) == (2, state.store.hash_at("T1", 2))
    assert state.commit("T1", KEY, 4, bad[:1])["eseq"] == 3


def test_the_fork_check_reads_the_store_not_what_the_process_remembers(state):
    """The stored last event changes behind the open store (another connection): the next
    event is checked against what the store now holds (here it no longer follows: refused)."""
    import sqlite3

    state.check("T1", KEY)
    shoe = Shoe()
    state.commit("T1", KEY, 2, shoe.events(3))
    con = sqlite3.connect(str(state.store.path))
    con.execute("UPDATE events SET hash = zeroblob(16) WHERE eseq = 3")
    con.commit()
    con.close()
    with pytest.raises(HostStateError) as e:
        state.commit("T1", KEY, 3, shoe.events(1))
    assert e.value.reason == "store_fork"
    assert state.store.last_eseq("T1") == 3 and state.store.host_record("T1")["ctr"] == 2


def test_the_floor_file_is_canonical_and_versioned(tmp_path):
    db = tmp_path / "audit.sqlite"
    write_state(db)
    raw = floor_of(db).read_bytes()
    doc = json.loads(raw)
    assert doc["format"] == "shoectl counter floor" and doc["version"] == 2
    assert json.dumps(doc, sort_keys=True, separators=(",", ":")).encode() + b"\n" == raw
    spaced = json.dumps(doc, sort_keys=True, indent=1).encode()  # the same values, re-spelt
    assert parse_floor(spaced)[0] == "floor_damaged"
    doc["version"] = 3
    assert (
        parse_floor(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode() + b"\n")[0]
        == "floor_version"
    )


def test_the_mac_binds_the_store_the_shoe_and_every_field():
    rec = {"gen": 3, "ctr": 31, "eseq": 7, "head": b"\x01" * 16, "base": 0}
    m = record_mac(KEY, b"\x00" * 16, "T1", rec)
    assert m != record_mac(KEY, b"\x00" * 15 + b"\x01", "T1", rec)
    assert m != record_mac(KEY, b"\x00" * 16, "T2", rec)
    assert m != record_mac(b"x" * 32, b"\x00" * 16, "T1", rec)
    for k in ("gen", "ctr", "eseq", "base"):
        assert m != record_mac(KEY, b"\x00" * 16, "T1", dict(rec, **{k: rec[k] + 1}))
    assert m != record_mac(KEY, b"\x00" * 16, "T1", dict(rec, head=b"\x02" * 16))


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "f.json"
    atomic_write(p, b"one")
    atomic_write(p, b"two" * 1000)
    assert p.read_bytes() == b"two" * 1000 and os.listdir(tmp_path) == ["f.json"]


def test_a_floor_file_that_cannot_be_written_refuses(tmp_path, state):
    state.check("T1", KEY)
    os.mkdir(str(state.path) + ".tmp")  # where the temporary file must go
    with pytest.raises(HostStateError) as e:
        state.commit("T1", KEY, 4)
    assert e.value.reason == "floor_write" and str(state.path) in str(e.value)


def test_the_lock_is_released_on_close_and_names_its_holder(tmp_path, state):
    other = HostState(state.store)
    with pytest.raises(HostStateError) as e:
        other.open()
    assert e.value.reason == "store_locked" and "PID %d" % os.getpid() in str(e.value)
    state.close()
    other.open()
    other.close()


def test_acceptance_starts_a_new_generation_and_is_kept_under_the_supervisor_key(tmp_path):
    db = tmp_path / "audit.sqlite"
    write_state(db)
    floor_of(db).write_text("garbage")
    store = AuditStore(db)
    hs = HostState(store)
    try:
        assert [p.reason for p in hs.open(strict=False)] == ["floor_damaged"]
        rep = hs.inspect("T1", KEY)
        assert rep["floor"] == 31 and rep["record"]["gen"] == 2 and rep["entry"] is None
        rec = hs.accept("T1", KEY, 32, SUP, {"note": "checked the shoe"})
        assert (rec["gen"], rec["ctr"], rec["eseq"], rec["base"]) == (3, 32, 7, 7)
        [(at, details, ok)] = hs.acceptances("T1", SUP)
        assert details == {"note": "checked the shoe"} and ok is True
        assert hs.acceptances("T1", b"w" * 32)[0][2] is False  # not the supervisor's
    finally:
        hs.close()
        store.close()
    assert verdict(db) == 32


def test_acceptance_never_lowers_the_floor(tmp_path):
    db = tmp_path / "audit.sqlite"
    write_state(db)
    store = AuditStore(db)
    hs = HostState(store)
    try:
        hs.open(strict=False)
        assert hs.accept("T1", KEY, 5, SUP, {})["ctr"] == 31
    finally:
        hs.close()
        store.close()


def test_the_refusal_line_says_what_to_do():
    e = HostStateError("/x/a.sqlite.counters.json", "is missing,\nbut used", "floor_missing")
    line = refusal(e, "T1")
    assert "\n" not in line and line.startswith("host state: refusing shoe T1: /x/a.sqlite")
    assert "[floor_missing]" in line and "shoectl trust --accept" in line
    locked = HostStateError("/x/a.sqlite", "is in use (PID 5)", "store_locked")
    assert "trust" not in refusal(locked)  # nothing for a supervisor to accept
