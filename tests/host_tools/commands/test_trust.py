"""`shoectl trust`: it shows the host state about a shoe, and only a supervisor (the shoe itself
checks the supervisor key) accepts a refused shoe again; every refusal is one line."""

import json
import shutil

import pytest

from host_tools import cli
from host_tools.audit import AuditStore
from host_tools.errors import ShoeError
from host_tools.hoststate import parse_floor
from host_tools.link import ShoeLink
from tests.host_tools.link.fakeshoe import KEY, SUP, FakeShoe
from tests.support import wait_for


def shoectl(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def used(tmp_path):
    """(shoe, db, keys file): a shoe that sent 3 events into the store at db."""
    shoe = FakeShoe(tmp_path / "board")
    db = tmp_path / "audit.sqlite"
    store = AuditStore(db)
    with ShoeLink(shoe.url, KEY, audit=store) as link:
        link.open(timeout=10)
        link.command("emit", {"n": 3})
        wait_for(lambda: link.command("status")["outbox"] == 0)
    store.close()
    kf = tmp_path / "keys.json"
    kf.write_text(
        json.dumps({"shoe": KEY.hex(), "supervisor": SUP.hex(), "card": (b"c" * 32).hex()})
    )
    yield shoe, db, kf
    shoe.close()


def floor(db):
    return db.parent / (db.name + ".counters.json")


def test_an_intact_state_is_shown_and_needs_nothing(used, capsys):
    shoe, db, kf = used
    rc, out, err = shoectl(capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db)
    assert rc == 0 and "intact" in out and "REFUSED" not in out
    rc, out, err = shoectl(
        capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db, "--accept", "--yes"
    )
    assert rc == 0 and "nothing to accept" in out
    rc, out, err = shoectl(capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db, "--json")
    rep = json.loads(out)
    assert rc == 0 and rep["problems"] == [] and rep["store_last"] == 3


def test_a_deleted_floor_file_is_accepted_only_by_the_supervisor(used, tmp_path, capsys):
    shoe, db, kf = used
    floor(db).unlink()
    wrong = tmp_path / "wrong.json"
    wrong.write_text(
        json.dumps({"shoe": KEY.hex(), "supervisor": (b"w" * 32).hex(), "card": (b"c" * 32).hex()})
    )
    rc, out, err = shoectl(
        capsys, "trust", "--port", shoe.url, "--keys", wrong, "--db", db, "--accept", "--yes"
    )
    # the shoe refuses the supervised command: not accepted, nothing written
    assert rc == 1 and "not accepted" in err and "bad_mac" in err and err.count("\n") == 1
    assert not floor(db).exists() and AuditStore(db).acceptances("T1") == []
    rc, out, err = shoectl(
        capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db, "--accept"
    )  # no terminal to ask on
    assert rc == 1 and "--yes" in err and not floor(db).exists()
    rc, out, err = shoectl(
        capsys,
        "trust",
        "--port",
        shoe.url,
        "--keys",
        kf,
        "--db",
        db,
        "--accept",
        "--yes",
        "--note",
        "file lost in a restore",
    )
    assert rc == 0, err
    assert "floor_missing" in out and "accepted" in out
    entry = parse_floor(floor(db).read_bytes())["shoes"]["T1"]
    assert entry["ctr"] == shoe.j.ctr and entry["eseq"] == 3 and entry["base"] == 3
    rc, out, err = shoectl(capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db, "--json")
    rep = json.loads(out)
    assert rc == 0 and rep["problems"] == []
    [acc] = rep["acceptances"]
    assert acc["mac_ok"] is True and acc["note"] == "file lost in a restore"
    assert any("floor_missing" in p for p in acc["problems"])


def test_without_the_supervisor_key_nothing_is_accepted(used, tmp_path, capsys, monkeypatch):
    shoe, db, kf = used
    floor(db).write_text("{}")
    only = tmp_path / "table.json"
    only.write_text(json.dumps({"shoe": KEY.hex(), "card": (b"c" * 32).hex()}))
    monkeypatch.delenv("SHOE_KEY_SUPERVISOR", raising=False)
    rc, out, err = shoectl(
        capsys, "trust", "--port", shoe.url, "--keys", only, "--db", db, "--accept", "--yes"
    )
    assert rc == 1 and "supervisor" in err and err.count("\n") == 1
    assert floor(db).read_text() == "{}"


def test_a_shoe_whose_events_went_back_cannot_be_accepted_into_the_same_store(
    used, tmp_path, capsys
):
    shoe, db, kf = used
    wiped = FakeShoe(tmp_path / "wiped")  # same id, empty journal
    try:
        rc, out, err = shoectl(
            capsys, "trust", "--port", wiped.url, "--keys", kf, "--db", db, "--accept", "--yes"
        )
        assert rc == 1 and "--new-db" in err and "sequence_reset" in out
        assert wiped.j.ctr == 0  # nothing was sent to it
        old_floor = parse_floor(floor(db).read_bytes())["shoes"]["T1"]["ctr"]
        new = tmp_path / "new.sqlite"
        rc, out, err = shoectl(
            capsys,
            "trust",
            "--port",
            wiped.url,
            "--keys",
            kf,
            "--db",
            db,
            "--accept",
            "--yes",
            "--new-db",
            new,
        )
        assert rc == 0, err
        assert wiped.j.ctr == old_floor + 1  # above the old store's floor
        store = AuditStore(new)
        with ShoeLink(wiped.url, KEY, audit=store) as link:  # its log goes on in the new store
            link.open(timeout=10)
            link.command("emit", {"n": 2})  # after the supervised command's durable reply
            assert wait_for(lambda: store.last_eseq("T1") == 3)
        assert store.acceptances("T1")[0][1].count(str(db)) == 1  # where it came from
        store.close()
        old = AuditStore(db)
        with ShoeLink(wiped.url, KEY, audit=old) as link:  # the old store: its numbers caught
            link.open(timeout=10)  # up, but its next event forks
            with pytest.raises(ShoeError) as e:
                link.command("emit", {"n": 1})
            assert "[store_fork]" in str(e.value) and str(db) in str(e.value)
        assert old.last_eseq("T1") == 3 and 4 in [e for e, _ in wiped.j.outbox()]  # kept
        old.close()
    finally:
        wiped.close()


def test_a_damaged_sqlite_file_is_one_line_and_cannot_be_accepted(used, capsys):
    shoe, db, kf = used
    shutil.copy(floor(db), db)  # not a database any more
    for extra in ((), ("--accept", "--yes")):
        rc, out, err = shoectl(
            capsys, "trust", "--port", shoe.url, "--keys", kf, "--db", db, *extra
        )
        assert rc == 1 and "[store_damaged]" in err and str(db) in err and err.count("\n") == 1
