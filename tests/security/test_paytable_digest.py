"""The pay table digest that names an inline table in replies: the same on the shoe (MicroPython)
and the host, independent of key order and of 5 vs 5.0, different for any changed value."""

import json

from host_tools.commands.monitor import _table
from shoe.games import paytable
from tests.mpy import json_lines, run_code

DOC = {
    "name": "house-hcf-3",
    "game": "high-card-flush",
    "example": False,
    "flush_bonus": {"7": 300, "6": 100, "5": 10, "4": 1.5},
    "straight_flush_bonus": {"7": 8000, "6": 1000, "5": 100, "4": 60, "3": 7},
    "payout_limit": None,
}


def test_same_digest_on_both_runtimes_and_canonical():
    text = json.dumps(DOC)
    [[dev]] = json_lines(
        run_code(
            "import json\nfrom shoe.games import paytable\n"
            "print(json.dumps([paytable.digest(json.loads(%r))]))" % text
        )
    )
    host = paytable.digest(json.loads(text))
    assert dev == host and len(host) == 64
    shuffled = json.loads(json.dumps(DOC, sort_keys=True))
    shuffled["straight_flush_bonus"]["7"] = 8000.0
    assert paytable.digest(shuffled) == host
    for change in (
        {"payout_limit": 5000},
        {"name": "other"},
        {"flush_bonus": dict(DOC["flush_bonus"], **{"4": 1.4999})},
    ):
        assert paytable.digest(dict(DOC, **change)) != host


def test_monitor_re_evaluates_with_the_given_table_only_if_it_is_the_shoes():
    cfg = {
        "paytable": "house-hcf-3",
        "paytable_inline": True,
        "paytable_sha256": paytable.digest(DOC),
    }
    assert _table(cfg, DOC) is DOC
    assert _table(cfg, dict(DOC, payout_limit=1)) == "house-hcf-3"
    assert _table({"paytable": "hcf-public-1", "paytable_sha256": None}, DOC) == "hcf-public-1"
