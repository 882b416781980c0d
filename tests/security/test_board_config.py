"""Configuration authority and inline pay tables, end to end on the virtual board.

Findings 7, 8 and 9 of issue 9: security-relevant settings need the supervisor key (issue 18: every
field does, docs/roles.md; and the table's own `ack` is not reachable around it); `status` says the
shoe runs on demo keys; an inline pay table in the interfaces.md format keeps every reply within
one frame (status names it by name and digest) and a whole session script plays with it; an HCF
table without a progressive section needs no `offered`."""

import json
import subprocess
import sys

import pytest

from host_tools.errors import ShoeError
from host_tools.sim.virtual_table import VirtualTable
from shoe.games import paytable
from tests.e2e.conftest import Recorder

FCF = "four-card-frenzy"
HCF = "high-card-flush"
# interfaces.md section 3, in full (every category of rules.md), with a payout limit
FCF_TABLE = {
    "name": "house-fcf-7",
    "game": FCF,
    "example": False,
    "odds": {
        "four_of_a_kind": {"win": 30, "bad_beat": 100},
        "straight_flush": {"win": 15, "bad_beat": 40},
        "three_of_a_kind": {"win": 3, "bad_beat": 1},
        "flush": {"win": 1.5, "bad_beat": 1},
        "straight": {"win": 1, "bad_beat": 1},
    },
    "prime": {"five_one_colour": 5, "four_one_colour": 1},
    "four_card_bonus": {
        "four_of_a_kind": 100,
        "straight_flush": 40,
        "three_of_a_kind": 8,
        "flush": 3,
        "straight": 2,
        "two_pair": 1.5,
    },
    "all_six": {
        "six_card_royal_flush": 1000,
        "royal_flush": 200,
        "straight_flush": 50,
        "four_of_a_kind": 20,
        "full_house": 10,
        "flush": 5,
        "straight": 4,
        "three_of_a_kind": 3,
    },
    "payout_limit": 50000,
}
HCF_NO_PROGRESSIVE = {
    "name": "house-hcf-3",
    "game": HCF,
    "example": False,
    "flush_bonus": {"7": 300, "6": 100, "5": 10, "4": 1},
    "straight_flush_bonus": {"7": 8000, "6": 1000, "5": 100, "4": 60, "3": 7},
    "payout_limit": None,
}


def refused(link, kind, body, supervisor=False):
    with pytest.raises(ShoeError) as e:
        link.command(kind, body, timeout=10, supervisor=supervisor)
    return e.value.reason


@pytest.mark.clause("rules:1.4-stub-count")
def test_authority_demo_flag_and_an_inline_table_in_status(tmp_path):
    with VirtualTable(str(tmp_path / "s"), on_event=Recorder()) as t:
        link = t.link
        st = link.command("status", {}, timeout=10)
        assert st["demo"] is True
        base = {"game": FCF, "procedure": "manual-shoe"}
        # every field of the configuration is the supervisor's (docs/roles.md): the first
        # configure sets them all
        assert refused(link, "configure", base) == "needs_supervisor"
        assert link.command("configure", base, timeout=10)["ok"]  # the link's supervisor key
        for weaker in (
            {"stub_every": 3},
            {"shuffle_check": False},
            {"paytable": FCF_TABLE},
            {"double_reads": True},
            {"two_deck": True},
        ):
            assert refused(link, "configure", dict(base, **weaker)) == "needs_supervisor"
        # the older supervised kind signed with the table key, or the table's own `ack`
        assert (
            refused(link, "configure_supervised", dict(base, stub_every=3)) == "needs_supervisor"
        )
        assert refused(link, "ack", {"all": True}) == "needs_supervisor"
        # the supervisor sets an inline table; every reply stays one frame
        rep = link.command(
            "configure_supervised", dict(base, paytable=FCF_TABLE), supervisor=True, timeout=10
        )
        digest = paytable.digest(json.loads(json.dumps(FCF_TABLE)))
        assert rep["config"]["paytable"] == "house-fcf-7"
        assert rep["config"]["paytable_sha256"] == digest
        st = link.command("status", {}, timeout=10)
        assert st["config"]["paytable"] == "house-fcf-7"
        assert st["config"]["paytable_sha256"] == digest and st["config"]["paytable_inline"]
        # the same table again, other settings unchanged: the table key will do
        assert link.command(
            "configure", dict(base, paytable=FCF_TABLE), timeout=10, supervisor=False
        )["ok"]
        # and a round settles with it (the session runner configures as the supervisor)
        out = t.runner.play(
            {
                "game": FCF,
                "procedure": "manual-shoe",
                "paytable": FCF_TABLE,
                "seed": 2,
                "rounds": [
                    {
                        "seats": {
                            "1": {
                                "wagers": {
                                    "ante": 10,
                                    "odds": 10,
                                    "prime": 5,
                                    "four_card_bonus": 5,
                                    "all_six": 5,
                                }
                            }
                        }
                    }
                ],
            }
        )
        assert [o[1] for o in out] == ["round_result"]
        assert link.command("status", {}, timeout=10)["config"]["paytable_sha256"] == digest


def test_a_session_script_with_an_inline_hcf_table_without_progressive(tmp_path):
    """`shoectl session --script` (interfaces.md section 5) with an inline table and no
    `offered`: the table offers what its pay table pays, and every round settles."""
    seats = {
        "1": {"wagers": {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 5}},
        "2": {"wagers": {"ante": 10}},
    }
    script = {
        "game": HCF,
        "procedure": "manual-shoe",
        "paytable": HCF_NO_PROGRESSIVE,
        "seed": 9,
        "rounds": [{"seats": seats}, {"seats": seats}],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "host_tools",
            "session",
            "--script",
            str(path),
            "--json",
            "--state",
            str(tmp_path / "flash"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert [e["event"] for e in events if e["event"] in ("round_result", "round_void")] == [
        "round_result",
        "round_result",
    ]
