"""`shoectl status | errors | rounds | verify | export` against the real firmware on the virtual
board (MicroPython unix port), through the CLI entry point."""

import json

import pytest

from host_tools import cli
from tests.support import virtual_board


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    with virtual_board(tmp_path_factory.mktemp("board")) as b:
        yield b


def shoectl(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_status_errors_rounds_verify_export(board, tmp_path, capsys):
    db = tmp_path / "audit.sqlite"
    port = board.host_url
    rc, out, err = shoectl(capsys, "status", "--port", port, "--demo-keys", "--db", db, "--json")
    assert rc == 0, err
    st = json.loads(out)
    assert st["status"]["ok"] and st["link"]["up"]
    shoe_id = st["link"]["shoe_id"]
    rc, out, err = shoectl(capsys, "errors", "--port", port, "--demo-keys", "--db", db)
    assert rc == 0 and "no latched errors" in out
    rc, out, err = shoectl(
        capsys, "errors", "--port", port, "--demo-keys", "--db", db, "--ack", "7"
    )
    assert rc == 1 and "unknown_irregularity" in err  # reasoned refusal, nothing changed
    rc, out, err = shoectl(capsys, "rounds", "--port", port, "--demo-keys", "--db", db, "--json")
    assert rc == 0 and json.loads(out) == []
    rc, out, err = shoectl(
        capsys, "verify", "--port", port, "--demo-keys", "--shoe", shoe_id, "--db", db, "--json"
    )
    assert rc == 0, err
    rep = json.loads(out)
    assert rep["firmware"]["ok"] and rep["firmware"]["files"] > 10
    assert rep["events"]["events"] >= 1 and not rep["events"]["bad_mac"]
    rc, out, err = shoectl(capsys, "export", "--db", db, "--format", "jsonl")
    rows = [json.loads(x) for x in out.splitlines()]
    assert rc == 0 and rows and rows[0]["eseq"] == 1 and rows[0]["kind"] == "hello"
    assert len({r["eseq"] for r in rows}) == len(rows)  # every event once, however many connects


def test_firmware_verification_fails_against_another_tree(board, tmp_path, capsys):
    other = tmp_path / "fw"
    other.mkdir()
    (other / "main.py").write_text("print('not the shoe')\n")
    rc, out, err = shoectl(
        capsys,
        "verify",
        "--port",
        board.host_url,
        "--demo-keys",
        "--firmware",
        other,
        "--db",
        tmp_path / "a.sqlite",
    )
    assert rc == 1 and "does not match" in err


def test_wrong_key_is_one_clear_line(board, tmp_path, capsys):
    keys = tmp_path / "k.json"
    keys.write_text(
        json.dumps(
            {
                "version": 1,
                "shoe_id": "X",
                "keys": {"shoe": "11" * 32, "supervisor": "22" * 32, "card": "33" * 16},
            }
        )
    )
    rc, out, err = shoectl(
        capsys,
        "status",
        "--port",
        board.host_url,
        "--keys",
        keys,
        "--db",
        tmp_path / "a.sqlite",
        "--timeout",
        "3",
    )
    assert rc == 1 and "key does not match" in err and err.count("\n") == 1
