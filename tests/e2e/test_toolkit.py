"""The technician's commands against a virtual board that has played real rounds."""

import json
import subprocess
import sys

import pytest

from host_tools.sim.provision_sim import shoe_id_of
from host_tools.sim.virtual_table import VirtualTable
from tests.e2e.conftest import Recorder

SEATS = {
    str(s): {"wagers": {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5}}
    for s in range(1, 7)
}


def shoectl(*args):
    return subprocess.run(
        [sys.executable, "-m", "host_tools", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.clause("684a.11(e)")
def test_recall_status_and_verify_after_real_rounds(tmp_path):
    rec = Recorder()
    db = str(tmp_path / "audit.sqlite")  # the table system's audit store
    with VirtualTable(str(tmp_path / "flash"), on_event=rec, db=db) as t:
        t.runner.play(
            {
                "game": "four-card-frenzy",
                "procedure": "manual-shoe",
                "seed": 4,
                "rounds": [
                    {"seats": SEATS},
                    {"seats": SEATS, "faults": [{"kind": "forged", "at": 3}]},
                ],
            }
        )
        t.link.close()  # the technician's commands take the board and its store over
        port = "socket://127.0.0.1:%d" % t.board.host_port  # straight to the board
        common = ["--port", port, "--demo-keys", "--db", db]
        r = shoectl("rounds", *common, "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == [1, 2]
        r = shoectl("rounds", *common, "--round", "1", "--json")
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        [result] = rec.of("round_result")
        assert got["kind"] == "round_result"
        assert got["record"]["seats"] == result["seats"]  # six seats, recalled whole
        r = shoectl("rounds", *common, "--round", "2", "--json")
        assert json.loads(r.stdout)["record"]["reason"] == "card_forged"
        r = shoectl("rounds", *common, "--round", "99")
        assert r.returncode == 1 and "99" in r.stderr
        r = shoectl("status", *common)
        assert (
            r.returncode == 0
            and shoe_id_of(tmp_path / "flash") in r.stdout
            and "demo: true" in r.stdout
        )
        r = shoectl("verify", *common)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "live chain" in r.stdout and "MATCHES" in r.stdout
        # someone removes the last two rows of the store: refused
        import sqlite3

        c = sqlite3.connect(db)
        last = c.execute("SELECT MAX(eseq) FROM events").fetchone()[0]
        c.execute("DELETE FROM events WHERE eseq > ?", (last - 2,))
        c.commit()
        c.close()
        r = shoectl("verify", *common, "--timeout", "3")
        # the host's record of the store catches it at the link's open, before the live chain
        assert r.returncode == 1 and "[store_truncated]" in r.stderr, r.stdout + r.stderr
        assert "events were removed" in r.stderr and r.stderr.count("\n") == 1
