"""The attacker at the host's files (docs/hoststate.md): every change to the counter floor file
or the audit store that could let a rolled-back shoe in (a flipped byte, a truncation, a
deleted file, an older copy, another shoe's or another store's file, edited or removed rows)
refuses the shoe with one line naming the file and a reason code. Nothing is recreated
silently; the floor never goes down.

The issue's scenario end to end (a shoe restored from an old flash dump, its floor file
damaged, a captured supervisor command) and the real second processes (the lock, kill -9 in
the middle of a write) are in test_hoststate_processes.py."""

import json
import os
import shutil
import sqlite3

import pytest

from host_tools.audit import AuditStore
from host_tools.hoststate import HostState, HostStateError, parse_floor
from tests.security.hoststate_support import KEY, Shoe, floor_of, verdict, write_state


@pytest.fixture
def db(tmp_path):
    """A used audit store and its floor file: 7 events of shoe T1, counter floor 31."""
    path = tmp_path / "audit.sqlite"
    write_state(path)
    assert verdict(path) == 31
    return path


def refused(v, path, *reasons):
    """`v` is a refusal naming `path`, for one of `reasons`, in one line."""
    assert isinstance(v, HostStateError), "accepted (floor %r)" % (v,)
    assert str(path) in str(v) and "\n" not in str(v)
    assert v.reason in reasons, v
    return v.reason


def edit(db, sql):
    """Change the SQLite file behind the store's back."""
    con = sqlite3.connect(str(db))
    try:
        con.execute(sql)
        con.commit()
    finally:
        con.close()


def flips(raw, bits):
    for i in range(len(raw)):
        for bit in bits:
            b = bytearray(raw)
            b[i] ^= bit
            yield i, bytes(b)


def _every_change_refused(db, bits):
    raw = floor_of(db).read_bytes()
    seen = set()
    for _i, changed in flips(raw, bits):
        floor_of(db).write_bytes(changed)
        seen.add(
            refused(
                verdict(db),
                floor_of(db),
                "floor_damaged",
                "floor_mac",
                "floor_foreign",
                "floor_missing",
                "floor_version",
                "floor_legacy",
            )
        )
    floor_of(db).write_bytes(raw)
    assert verdict(db) == 31
    return seen


def test_every_changed_byte_of_the_floor_file_is_refused(db):
    """Bit 0 keeps a digit a digit and most bytes printable (a value changes, the JSON still
    parses: the MAC or the store binding must catch it); 0x20 flips the case of hex digits
    (the same value, another spelling: only the canonical form catches it); 0xFF is garbage."""
    seen = _every_change_refused(db, (0x01, 0x20, 0xFF))
    assert {"floor_damaged", "floor_mac", "floor_foreign"} <= seen


@pytest.mark.slow
def test_every_flipped_bit_of_the_floor_file_is_refused(db):
    _every_change_refused(db, (1, 2, 4, 8, 16, 32, 64, 128))


def test_a_truncated_floor_file_is_refused_at_every_length(db):
    raw = floor_of(db).read_bytes()
    for n in range(len(raw)):
        floor_of(db).write_bytes(raw[:n])
        refused(verdict(db), floor_of(db), "floor_damaged")


def test_a_floor_file_deleted_after_use_is_refused_never_recreated(db):
    floor_of(db).unlink()
    refused(verdict(db), floor_of(db), "floor_missing")
    assert not floor_of(db).exists()  # the refusal wrote nothing


def test_an_older_copy_of_the_floor_file_is_refused(db, tmp_path):
    old = tmp_path / "old.json"
    shutil.copy(floor_of(db), old)  # generation 2, floor 31
    write_state(db, Shoe(), batches=((0, 40), (0, 41)))  # generations 3 and 4 (no new events)
    shutil.copy(old, floor_of(db))
    refused(verdict(db), floor_of(db), "floor_old")


def test_a_floor_file_one_write_behind_keeps_the_floor_and_is_brought_up_to_date(db, tmp_path):
    """One generation behind is what a crash between the store's commit and the file's rename
    leaves: accepted, but the floor is the store's (the higher) and the file is rewritten."""
    old = tmp_path / "old.json"
    shutil.copy(floor_of(db), old)  # floor 31
    write_state(db, Shoe(), batches=((0, 45),))  # the store's record: floor 45
    shutil.copy(old, floor_of(db))
    assert verdict(db) == 45
    assert parse_floor(floor_of(db).read_bytes())["shoes"]["T1"]["ctr"] == 45


def test_another_stores_floor_file_is_refused(db, tmp_path):
    other = tmp_path / "other" / "audit.sqlite"
    other.parent.mkdir()
    write_state(other, Shoe(), batches=((7, 31),))  # the same shoe, another store
    shutil.copy(floor_of(other), floor_of(db))
    refused(verdict(db), floor_of(db), "floor_foreign")


def test_another_shoes_entry_under_this_shoes_name_is_refused(tmp_path):
    """One store, two shoes: T2's entry copied over T1's (T2's key, T2's id in the MAC)."""
    db = tmp_path / "audit.sqlite"
    write_state(db, Shoe("T1"))
    write_state(db, Shoe("T2", key=b"t" * 32), batches=((2, 90),))
    d = json.loads(floor_of(db).read_text())
    d["shoes"]["T1"] = d["shoes"]["T2"]
    floor_of(db).write_text(json.dumps(d, sort_keys=True, separators=(",", ":")) + "\n")
    refused(verdict(db, "T1"), floor_of(db), "floor_mac")
    assert verdict(db, "T2", b"t" * 32) == 90


def test_the_legacy_unauthenticated_file_is_refused(db):
    floor_of(db).write_text('{"T1": 31}')
    refused(verdict(db), floor_of(db), "floor_legacy")


def test_a_store_that_is_not_a_database_is_refused(db):
    db.write_bytes(b"this is not an SQLite file" * 40)
    refused(verdict(db), db, "store_damaged")


def test_a_truncated_store_is_refused(db):
    raw = db.read_bytes()
    for n in (len(raw) // 2, 4096, 100, 0):
        db.write_bytes(raw[:n])
        v = verdict(db)
        refused(
            v,
            db if n else floor_of(db),
            "store_damaged",
            "store_missing",
            "store_record",
            "store_truncated",
            "floor_missing",
            "floor_foreign",
        )


def test_the_last_rows_removed_from_the_store_are_refused(db):
    edit(db, "DELETE FROM events WHERE eseq >= 6")
    refused(verdict(db), db, "store_truncated")


def test_a_middle_row_removed_or_an_event_altered_in_the_tail_is_refused(db, tmp_path):
    clean = tmp_path / "clean.sqlite"
    shutil.copy(db, clean)
    for sql in (
        "DELETE FROM events WHERE eseq = 4",
        "UPDATE events SET payload = CAST(substr(payload, 1, length(payload) - 1) "
        "|| x'00' AS BLOB) WHERE eseq = 5",
        "UPDATE events SET body = '{\"i\": 9}' WHERE eseq = 3",
        "UPDATE events SET prev = zeroblob(16) WHERE eseq = 6",
    ):
        shutil.copy(clean, db)
        edit(db, sql)
        refused(verdict(db), db, "store_tail")


def test_the_stores_host_record_edited_or_removed_is_refused(db, tmp_path):
    clean = tmp_path / "clean.sqlite"
    shutil.copy(db, clean)
    for sql, reason in (
        ("UPDATE host_record SET ctr = 8", "store_record"),
        ("DELETE FROM host_record", "store_record"),
        ("DROP TABLE host_record", "store_record"),
        ("UPDATE store_meta SET value = zeroblob(16)", "floor_foreign"),
    ):
        shutil.copy(clean, db)
        edit(db, sql)
        v = verdict(db)
        refused(v, floor_of(db) if reason.startswith("floor") else db, reason)


def test_an_older_copy_of_the_store_is_refused(db, tmp_path):
    old = tmp_path / "old.sqlite"
    shutil.copy(db, old)
    write_state(db, Shoe(), batches=((0, 40),))  # the floor file moves on with the store
    shutil.copy(old, db)  # the store goes back
    refused(verdict(db), db, "store_old")


def test_a_store_removed_while_its_floor_file_stays_is_refused(db):
    db.unlink()
    refused(verdict(db), db, "store_missing")


# make test flips every 97th byte of the store; SHOE_SOAK=full every 7th (40 s of CPU alone)
SOAK = os.environ.get("SHOE_SOAK") == "full"


@pytest.mark.parametrize(
    "stride",
    [
        pytest.param(97, id="every-97th-byte"),
        pytest.param(
            7,
            id="every-7th-byte",
            marks=[
                pytest.mark.slow,
                pytest.mark.skipif(
                    not SOAK, reason="every 7th byte: SHOE_SOAK=full (make test flips every 97th)"
                ),
            ],
        ),
    ],
)
def test_bit_flips_in_the_store_are_refused_or_found_by_verify_or_change_nothing(db, stride):
    """The open checks the file's structure (quick_check), the host record and the last events;
    `shoectl verify --shoe` checks every event and every index. A flipped byte anywhere in the
    SQLite file is refused at open, or reported by verify, or leaves every authenticated value
    as it was (free space, the unauthenticated arrival time or chain column)."""
    raw = db.read_bytes()

    def authenticated():
        con = sqlite3.connect(str(db))
        try:
            return (
                con.execute(
                    "SELECT shoe, eseq, payload, prev, hash, kind, body FROM events "
                    "ORDER BY shoe, eseq"
                ).fetchall(),
                con.execute("SELECT * FROM host_record").fetchall(),
                con.execute("SELECT * FROM store_meta").fetchall(),
            )
        finally:
            con.close()

    clean = authenticated()
    outcome = {"refused": 0, "verify": 0, "unchanged": 0}
    for i in range(0, len(raw), stride):
        b = bytearray(raw)
        b[i] ^= 0x10
        db.write_bytes(bytes(b))
        flagged = quick_check(db)  # what SQLite itself sees
        v = verdict(db)
        assert isinstance(v, HostStateError) or not flagged, "byte %d: %s" % (i, flagged)
        if isinstance(v, HostStateError):
            assert "\n" not in str(v) and (str(db) in str(v) or str(floor_of(db)) in str(v))
            outcome["refused"] += 1
            continue
        assert v == 31, v
        store = AuditStore(db)
        try:  # what `shoectl verify --shoe` checks
            rep = store.verify("T1", KEY)
            damaged = store.integrity(full=True)
        finally:
            store.close()
        if damaged or rep["bad_mac"] or rep["body_mismatch"] or rep["broken"] or rep["gaps"]:
            outcome["verify"] += 1
            continue
        try:
            same = authenticated() == clean
        except sqlite3.DatabaseError:
            same = False
        assert same, "byte %d: accepted, verify silent, yet an authenticated value changed" % i
        outcome["unchanged"] += 1
    db.write_bytes(raw)
    assert outcome["refused"] > 0 and verdict(db) == 31, outcome


def quick_check(db):
    con = sqlite3.connect(str(db))
    try:
        rows = con.execute("PRAGMA quick_check").fetchall()
        return None if rows == [("ok",)] else rows
    except sqlite3.DatabaseError as e:
        return str(e)
    finally:
        con.close()


def test_a_locked_store_is_refused_naming_the_holder(db):
    store = AuditStore(db)
    hs = HostState(store)
    hs.open()
    try:
        v = verdict(db)
        refused(v, db, "store_locked")
        assert "PID %d" % __import__("os").getpid() in str(v)
    finally:
        hs.close()
        store.close()
    assert verdict(db) == 31  # released


def test_the_floor_never_goes_down(db):
    """A session that saw a lower counter (a stale view) cannot lower the recorded floor."""
    write_state(db, Shoe(), batches=((0, 12),))
    assert verdict(db) == 31
