"""Par sheets end to end: the API other tools use (host_tools.par.sheet / render), the
simulation through the firmware's engine agreeing with the exact figures (and catching a wrong
one), bad pay tables and rules refused with a clear error, `shoectl par` (docs/par.md)."""

import json
import re
from fractions import Fraction

import pytest

from host_tools import cli, par
from host_tools.errors import ShoeError
from host_tools.par import fcfside
from host_tools.par.sheet import RULES
from shoe.games import engine, paytable


def _check_entry(w):
    total = sum(o["combinations"] for o in w["outcomes"])
    assert total == w["total"], w["wager"]
    assert abs(sum(o["probability"] for o in w["outcomes"]) - 1) < 1e-12
    contrib = sum(o["contribution"] for o in w["outcomes"] if o["contribution"] is not None)
    assert abs(contrib - w["return"]) < 1e-9
    assert Fraction(w["return_exact"]) == sum(
        Fraction(o["combinations"], total) * Fraction(o["pays"])
        for o in w["outcomes"]
        if o["pays"] is not None
    )
    if w["house_edge"] is not None:
        assert abs(w["house_edge"] + w["return"] / w["wagered_per_hand"]) < 1e-12
    assert w["simulation"]["agrees"], (w["wager"], w["simulation"])


@pytest.mark.parametrize(
    "name, wagers",
    [
        ("fcf-public-1", ["ante", "odds", "raise", "prime", "four_card_bonus", "all_six"]),
        ("hcf-public-1", ["ante", "raise", "flush_bonus", "straight_flush_bonus", "progressive"]),
        ("hcf-public-2", ["ante", "raise", "flush_bonus", "straight_flush_bonus", "progressive"]),
    ],
)
def test_preset_sheets_are_consistent_and_agree_with_the_engine(name, wagers):
    s = par.sheet(name, sim_rounds=300, seed=4)
    assert s["type"] == "par_sheet" and s["paytable"]["name"] == name
    assert [w["wager"] for w in s["wagers"]] == wagers
    for w in s["wagers"]:
        _check_entry(w)
    assert s["main_game"]["simulation"]["agrees"] and s["simulation"]["agrees"]
    assert s["simulation"]["hands"] == 300 * 6 and s["simulation"]["seed"] == 4
    assert s["paytable"]["digest"] == paytable.digest(paytable.preset(name))


def test_house_edges_of_the_presets():
    # regression pins of the figures this code computes (docs/par.md lists them); the Flush
    # and Straight Flush Bonus also match reference-figures.md 4.4 to the last digit
    fcf_ = par.sheet("fcf-public-1", sim_rounds=0)
    he = {w["wager"]: "%.4f" % (100 * w["house_edge"]) for w in fcf_["wagers"]}
    assert he == {
        "ante": "17.0907",
        "odds": "34.3718",
        "raise": "-42.6854",
        "prime": "9.8039",
        "four_card_bonus": "22.6626",
        "all_six": "59.5712",
    }
    assert "%.4f" % (100 * fcf_["main_game"]["house_edge_per_hand"]) == "1.4745"
    for name, fb, sfb in (
        ("hcf-public-1", "7.8072", "13.0864"),
        ("hcf-public-2", "5.3038", "6.3515"),
    ):
        s = par.sheet(name, sim_rounds=0)
        he = {w["wager"]: w["house_edge"] for w in s["wagers"]}
        assert (
            "%.4f" % (100 * he["flush_bonus"]),
            "%.4f" % (100 * he["straight_flush_bonus"]),
        ) == (fb, sfb)
        assert "%.4f" % (100 * s["main_game"]["house_edge_per_hand"]) == "2.6645"
        assert (
            "%.4f" % (100 * s["main_game"]["strategy"]["flush_value_only"]["house_edge_per_hand"])
            == "2.7114"
        )


def test_a_new_inline_table_offers_only_its_wagers():
    doc = {
        "name": "casino-7",
        "game": "four-card-frenzy",
        "odds": {"four_of_a_kind": {"win": 40, "bad_beat": 80}, "straight": {"win": 1}},
        "four_card_bonus": {"four_of_a_kind": 50, "two_pair": 1.5},
    }
    s = par.sheet(doc, {"ties": "push"}, sim_rounds=200, seed=2)
    assert [w["wager"] for w in s["wagers"]] == ["ante", "odds", "raise", "four_card_bonus"]
    assert s["rules"] == {"ties": "push", "raise_when_dealer_not_open": "compare"}
    bonus = s["wagers"][-1]
    expect = 624 * 50 + Fraction(3, 2) * 123552 - (2598960 - 624 - 123552)
    assert Fraction(bonus["return_exact"]) == expect / 2598960
    for w in s["wagers"]:
        _check_entry(w)


@pytest.mark.parametrize(
    "doc, field",
    [
        (
            {"name": "x", "game": "four-card-frenzy", "prime": {"five_one_colour": -1}},
            "prime.five_one_colour",
        ),
        (
            {"name": "x", "game": "four-card-frenzy", "four_card_bonus": {"royal": 5}},
            "four_card_bonus",
        ),
        ({"name": "x", "game": "high-card-flush", "flush_bonus": {"4": 1.00001}}, "flush_bonus.4"),
        ({"name": "x", "game": "high-card-flush", "flush_bonus": {"4": "2"}}, "flush_bonus.4"),
        ({"name": "x", "game": "poker"}, "game"),
        ("no-such-table", "no-such-table"),
    ],
)
def test_bad_pay_tables_are_refused_naming_the_field(doc, field):
    with pytest.raises(ShoeError) as e:
        par.sheet(doc, sim_rounds=0)
    assert e.value.reason == "paytable" and field in str(e.value)


def test_bad_rules_and_rounds_are_refused():
    with pytest.raises(ShoeError, match="ties must be one of player, push"):
        par.sheet("fcf-public-1", {"ties": "dealer"}, sim_rounds=0)
    with pytest.raises(ShoeError, match="unknown rule"):
        par.sheet("hcf-public-1", {"ties": "push"}, sim_rounds=0)
    with pytest.raises(ShoeError, match="sim_rounds"):
        par.sheet("hcf-public-1", sim_rounds=-5)
    assert RULES == engine._RULES  # the par sheets know the engine's rule set


def test_the_simulation_catches_a_wrong_exact_figure(monkeypatch, capsys):
    # exact counts made wrong on purpose (2 million losing six-card sets counted as three of
    # a kind): the engine's settlement must disagree, in the sheet and in the exit code
    right = fcfside.all_six_counts()
    wrong = dict(right)
    wrong[None] -= 2000000
    wrong["three_of_a_kind"] += 2000000
    monkeypatch.setattr(fcfside, "all_six_counts", lambda: dict(wrong))
    s = par.sheet("fcf-public-1", sim_rounds=150, seed=3)
    six = next(w for w in s["wagers"] if w["wager"] == "all_six")
    assert not six["simulation"]["agrees"] and abs(six["simulation"]["z"]) > 3
    assert not s["simulation"]["agrees"]
    others = [w["simulation"]["agrees"] for w in s["wagers"] if w["wager"] != "all_six"]
    assert all(others)
    assert cli.main(["par", "--paytable", "fcf-public-1", "--sim-rounds", "150"]) == 1
    assert "simulation agrees within 3 SE: NO" in capsys.readouterr().err


def test_render_formats():
    s = par.sheet("hcf-public-1", sim_rounds=60)
    md = par.render(s, "md")
    assert "| outcome | combinations | probability | pays | contribution |" in md
    assert "75.3637 %" in md and "7.8072 %" in md
    assert json.loads(par.render(s, "json")) == json.loads(json.dumps(s))
    page = par.render(s, "html")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2
    assert "<table>" in page
    # standalone: no script, stylesheet, image or link to anything outside the page
    assert not re.search(r"<script|<link|<img|src=", page)
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', page))
    with pytest.raises(ValueError):
        par.render(s, "pdf")


def test_shoectl_par(tmp_path, capsys):
    table = tmp_path / "t.json"
    table.write_text(
        json.dumps(
            {
                "name": "mine",
                "game": "high-card-flush",
                "flush_bonus": {"7": 250, "6": 90, "5": 12, "4": 1},
            }
        )
    )
    out = tmp_path / "sheet.json"
    assert (
        cli.main(
            [
                "par",
                "--paytable",
                str(table),
                "--format",
                "json",
                "--sim-rounds",
                "80",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    s = json.loads(out.read_text())
    assert [w["wager"] for w in s["wagers"]] == ["ante", "raise", "flush_bonus"]
    assert "simulation agrees within 3 SE: yes" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "par",
                "--paytable",
                '{"name": "x", "game": "high-card-flush", "flush_bonus": {"3": 1}}',
                "--sim-rounds",
                "0",
            ]
        )
        == 1
    )
    assert 'flush_bonus: unknown category "3"' in capsys.readouterr().err
    table.write_text("{not json")
    assert cli.main(["par", "--paytable", str(table)]) == 1
    assert "is not JSON" in capsys.readouterr().err
    assert cli.main(["par", "--paytable", "fcf-public-1", "--rule", "ties"]) == 1
    assert "NAME=VALUE" in capsys.readouterr().err


def test_all_six_is_offered_only_with_its_card():
    # the engine refuses an All-Six wager without the All-Six card: the simulation deals it
    s = par.sheet("fcf-public-1", sim_rounds=30)
    assert "all_six" in [w["wager"] for w in s["wagers"]]
    assert sum(fcfside.all_six_counts().values()) == 20358520
