"""Read-quality diagnostics: rates per card/deck/position, worst cards, timeline, PNG chart."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools import diagnose as dg

T0 = 1_764_441_600.0


def rec(t, outcome, deck="3A7F", card="As", position=None):
    return {"t": T0 + t, "outcome": outcome, "deck": deck, "card": card, "position": position}


def test_rates_per_card_and_deck():
    records = (
        [rec(i, "ok", card="As", position=0) for i in range(8)]
        + [rec(10, "misread", card="As", position=0), rec(11, "no_read", card="As")]
        + [rec(20 + i, "ok", card="Kd", position=1) for i in range(5)]
        + [rec(30, "double_read", card="Kd", position=1)]
        + [rec(40 + i, "ok", deck="0B12", card="As") for i in range(4)]
        + [rec(50, "noread", deck="0B12", card=None)]
    )
    r = dg.summarize(records)
    assert r["overall"]["reads"] == 21 and r["overall"]["counts"]["no_read"] == 2
    a = r["per_card"]["3A7F:As"]
    assert a["reads"] == 10 and a["misread_rate"] == 0.1 and a["no_read_rate"] == 0.1
    assert math.isclose(a["problem_rate"], 0.2)
    assert r["per_deck"]["0B12"]["no_read_rate"] == 0.2
    assert r["per_position"][1]["double_read_rate"] == 1 / 6
    assert [w["card"] for w in r["worst_cards"]] == ["3A7F:As", "3A7F:Kd"]
    assert "0B12:As" not in [w["card"] for w in r["worst_cards"]]  # no problems: not listed


def test_bad_records_are_skipped_with_reasons():
    records = [
        None,
        {"t": "x", "outcome": "ok"},
        {"t": float("nan"), "outcome": "ok"},
        {"t": 1.0, "outcome": "sneezed"},
        {"t": True, "outcome": "ok"},
        rec(0, "ok"),
    ]
    r = dg.summarize(records)
    assert r["overall"]["reads"] == 1
    assert r["skipped"] == {"not_a_record": 1, "bad_time": 3, "bad_outcome": 1}
    assert dg.summarize([])["overall"] == {
        "reads": 0,
        "counts": {k: 0 for k in dg.OUTCOMES},
        "misread_rate": 0.0,
        "double_read_rate": 0.0,
        "no_read_rate": 0.0,
        "problem_rate": 0.0,
    }


def test_timeline_shows_a_sensor_getting_dirty():
    records = []
    for minute in range(60):
        bad = minute >= 30 and minute % 3 == 0  # a dirty window in the second half hour
        records.append(rec(minute * 60, "no_read" if bad else "ok"))
    rows = dg.timeline(records, buckets=2)
    assert [r["reads"] for r in rows] == [30, 30]
    assert rows[0]["no_read_rate"] == 0 and rows[1]["no_read_rate"] == 10 / 30


outcome = st.sampled_from(list(dg.OUTCOMES) + ["noread", "garbled", "double", "bogus"])
record = st.fixed_dictionaries(
    {
        "t": st.floats(0, 1e6, allow_nan=False),
        "outcome": outcome,
        "deck": st.sampled_from(["3A7F", "0B12", None]),
        "card": st.sampled_from(["As", "Kd", "2c", None]),
        "position": st.one_of(st.none(), st.integers(0, 52)),
    }
)


@settings(max_examples=150, deadline=None)
@given(st.lists(record, max_size=60), st.integers(1, 30))
def test_invariants(records, buckets):
    r = dg.summarize(records)
    n = r["overall"]["reads"]
    assert n + sum(r["skipped"].values()) == len(records)
    assert sum(r["overall"]["counts"].values()) == n
    for s in list(r["per_card"].values()) + list(r["per_deck"].values()):
        for k in ("misread_rate", "double_read_rate", "no_read_rate", "problem_rate"):
            assert 0.0 <= s[k] <= 1.0
    rows = dg.timeline(records, buckets)
    assert sum(x["reads"] for x in rows) == n
    assert len(rows) == (buckets if n else 0)
    rates = [w["problem_rate"] for w in r["worst_cards"]]
    assert rates == sorted(rates, reverse=True)


def test_chart_is_a_png(tmp_path):
    records = [rec(i * 60, "ok" if i % 7 else "misread", card="As") for i in range(200)]
    p = dg.chart(records, tmp_path / "q.png")
    data = (tmp_path / "q.png").read_bytes()
    assert p == tmp_path / "q.png" and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    dg.chart([], tmp_path / "empty.png")  # no records: a chart saying so, not a crash
    assert (tmp_path / "empty.png").read_bytes()[:4] == b"\x89PNG"
