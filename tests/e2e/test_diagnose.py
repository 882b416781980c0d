"""Read-quality diagnostics from the audit store, fed by a real session on the virtual board."""

import json
import subprocess
import sys

from host_tools.sim.virtual_table import VirtualTable
from tests.e2e.conftest import Recorder

# double_reads: this reader is known to double-read (no beam on the virtual board), so the shoe
# de-duplicates and reports double reads instead of voiding the round (docs/irregularities.md)
SCRIPT = {
    "game": "four-card-frenzy",
    "procedure": "manual-shoe",
    "seed": 5,
    "double_reads": True,
    "rounds": [
        {
            "seats": {
                "1": {"wagers": {"ante": 10, "odds": 10}},
                "2": {"wagers": {"ante": 10, "odds": 10}},
            },
            "faults": [
                {"at": 2, "kind": "no-read"},
                {"at": 5, "kind": "misread"},
                {"at": 8, "kind": "double-read"},
            ],
        },
        {
            "seats": {"1": {"wagers": {"ante": 10, "odds": 10}}},
            "faults": [{"at": 1, "kind": "double-read"}],
        },
    ],
}


def test_diagnose_counts_what_the_reader_suffered(tmp_path):
    db = str(tmp_path / "audit.sqlite")
    rec = Recorder()
    with VirtualTable(str(tmp_path / "flash"), on_event=rec, db=db) as t:
        outcomes = t.runner.play(SCRIPT)
    assert [o[1] for o in outcomes] == ["round_result", "round_result"]
    png = tmp_path / "quality.png"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "host_tools",
            "diagnose",
            "--db",
            db,
            "--json",
            "--chart",
            str(png),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["overall"]["counts"] == {"ok": 25, "misread": 1, "no_read": 1, "double_read": 2}
    assert rep["per_position"]["2"]["counts"]["no_read"] == 1
    assert rep["per_position"]["5"]["counts"]["misread"] == 1
    # every card named from its round's reveal (the card events hold commitments; a double
    # read during a deal names its round and position)
    assert all("card" not in b for b in rec.of("card"))
    assert all("card" not in b and "position" in b for b in rec.of("double_read"))
    reveals = {r["round"]: r["cards"] for r in rec.of("reveal")}
    deck = {b["round"]: b["deck"] for b in rec.of("round_open")}
    for b in rec.of("double_read"):
        key = "%s:%s" % (deck[b["round"]], reveals[b["round"]][b["position"]])
        assert rep["per_card"][key]["counts"]["double_read"] >= 1, key
    assert sum(s["reads"] for k, s in rep["per_card"].items()) == 25 + 2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_diagnose_on_an_empty_store_says_so(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "host_tools", "diagnose", "--db", str(tmp_path / "none.sqlite")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1 and "no card reads" in r.stderr
