"""The compact binary round_result: exact round trip, size budget, same bytes on MicroPython."""

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools.engine import unpacking
from host_tools.engine.evaluate import compiled_firmware
from shoe.games import engine, packing
from tests.firmware.games.rounds import FRACTIONAL_FCF, FRACTIONAL_HCF, fcf_round, hcf_round
from tests.mpy import json_lines, run_code


@st.composite
def results(draw):
    rng = random.Random(draw(st.integers(0, 2**32)))
    game = draw(st.sampled_from(["fcf", "hcf"]))
    seats = draw(st.integers(1, 6))
    if game == "fcf":
        table = draw(st.sampled_from(["fcf-public-1", FRACTIONAL_FCF]))
        r = engine.evaluate_round(fcf_round(rng, seats, table))
    else:
        table = draw(st.sampled_from(["hcf-public-1", "hcf-public-2", FRACTIONAL_HCF]))
        r = engine.evaluate_round(hcf_round(rng, seats, table))
    for key, strat in (
        ("round", st.integers(0, 2**40)),
        ("deck", st.integers(0, 65535)),
        ("paytable", st.text(max_size=40)),
    ):
        if draw(st.booleans()):
            r[key] = draw(strat)
    return r


@settings(max_examples=400, deadline=None)
@given(results())
def test_round_trip_is_exact(r):
    data = packing.pack(r)
    assert isinstance(data, bytes)
    assert unpacking.unpack(data) == r


def full_fcf_round(amount):
    rng = random.Random(amount)
    obj = fcf_round(rng, 6, "fcf-public-1")
    obj["all_six_card"] = obj["all_six_card"] or "2c"
    for s in obj["seats"].values():
        if "2c" in s["cards"] or "2c" in obj["dealer"]:
            return None
        s["wagers"] = {
            "ante": amount,
            "odds": amount,
            "prime": amount,
            "four_card_bonus": amount,
            "all_six": amount,
        }
        s["raise"] = amount
    return obj


@pytest.mark.parametrize("amount", [5, 100, 25000, 1000000])
def test_six_seat_fcf_round_with_every_wager_fits_the_frame(amount):
    for k in range(50):
        obj = full_fcf_round(amount + k)
        if obj is not None:
            break
    r = engine.evaluate_round(obj)
    r.update({"round": 123456, "deck": 4242, "paytable": "fcf-public-1"})
    data = packing.pack(r)
    assert len(data) <= 400, len(data)
    assert unpacking.unpack(data) == r


def test_hand_edited_results_keep_their_values():
    r = engine.evaluate_round(fcf_round(random.Random(3), 2, FRACTIONAL_FCF))
    seat = r["seats"][sorted(r["seats"])[0]]
    seat["wagers"]["ante"]["payout"] = 12345  # not derivable: stored explicitly
    seat["uncapped_net"] = -7
    assert unpacking.unpack(packing.pack(r)) == r


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(extra=1),
        lambda r: r["dealer"].update(cards=["As"]),
        lambda r: r.update(game="poker"),
        lambda r: r["seats"].update({"x": {}}),
        lambda r: r["seats"].update({"\u00b2": {}}),
        lambda r: r.update(round=-1),
    ],
)
def test_unpackable_results_are_refused(change):
    r = engine.evaluate_round(fcf_round(random.Random(4), 1, "fcf-public-1"))
    change(r)
    with pytest.raises(packing.PackError) as e:
        packing.pack(r)
    assert e.value.reason == "pack"


@pytest.mark.parametrize("data", [b"", b"\x10", b"\x33\x00", bytes(range(40))])
def test_malformed_data_is_refused(data):
    with pytest.raises(packing.PackError):
        unpacking.unpack(data)


def test_micropython_packs_the_same_bytes():
    rng = random.Random(77)
    rs = []
    for i in range(30):
        r = engine.evaluate_round(fcf_round(rng) if i % 2 else hcf_round(rng))
        r["round"] = i
        rs.append(r)
    code = """
import json, binascii, sys
from shoe.games import packing
while True:
    line = sys.stdin.readline()
    if not line:
        break
    r = json.loads(line)
    b = packing.pack(r)
    print(json.dumps([binascii.hexlify(b).decode()]))
"""
    cache = compiled_firmware()
    got = json_lines(
        run_code(
            code,
            extra_path=(cache,) if cache else (),
            heap="64k",
            stdin="\n".join(json.dumps(r) for r in rs) + "\n",
        )
    )
    assert len(got) == len(rs)
    for r, [hexed] in zip(rs, got):
        assert bytes.fromhex(hexed) == packing.pack(r)
        assert unpacking.unpack(bytes.fromhex(hexed)) == r
