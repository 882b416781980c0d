"""Cards and card codes: the same module under CPython and MicroPython."""

import hashlib
import hmac
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe import cards
from shoe.cardcode import CardCodes, CodeError
from tests.mpy import json_lines, run_code

KEY = b"demo-card-key"
ALL = [r + s for r in "23456789TJQKA" for s in "cdhs"]


def test_ids_follow_rank_times_four_plus_suit():
    assert [cards.parse(n) for n in ALL] == list(range(52))
    assert cards.parse("CV") == cards.COVER == 52
    assert [cards.name(i) for i in range(53)] == ALL + ["CV"]


@pytest.mark.parametrize("bad", ["", "A", "1s", "Ax", "as", "AS", "10s", None, 5, "CVx"])
def test_bad_card_names_are_refused_with_a_reason(bad):
    with pytest.raises(cards.CardError) as e:
        cards.parse(bad)
    assert e.value.reason == "bad_card"


def test_parse_hand_checks_count_and_duplicates():
    assert cards.parse_hand(["As", "Kd"], 2) == [51, 45]
    with pytest.raises(cards.CardError) as e:
        cards.parse_hand(["As", "As"], 2)
    assert e.value.reason == "duplicate_card"
    with pytest.raises(cards.CardError) as e:
        cards.parse_hand(["As"], 2)
    assert e.value.reason == "card_count"


def test_interface_example_code():
    codes = CardCodes(KEY)
    assert codes.make(0x3A7F, "R", cards.parse("As")) == "3A7FRAs1d52a21b"
    assert codes.parse("3A7FRAs1d52a21b\r\n") == (0x3A7F, "R", 51)


@pytest.mark.clause("rules:3-card-forged")
@given(st.integers(0, 0xFFFF), st.sampled_from("RB"), st.integers(0, 52))
def test_codes_round_trip_and_match_reference_hmac(serial, back, card):
    codes = CardCodes(KEY)
    code = codes.make(serial, back, card)
    body = code[:7].encode()
    assert code[7:] == hmac.new(KEY, body, hashlib.sha256).hexdigest()[:8]
    assert codes.parse(code) == (serial, back, card)


@given(st.binary(max_size=40))
def test_garbage_codes_are_refused_with_a_reason(raw):
    try:
        CardCodes(KEY).parse(raw)
    except CodeError as e:
        assert e.reason in ("code_format", "code_mac")


@pytest.mark.clause("rules:3-card-forged")
@given(st.integers(0, 14), st.integers(1, 255))
def test_any_flipped_byte_is_refused(pos, flip):
    code = bytearray(b"3A7FRAs1d52a21b")
    code[pos] ^= flip
    if bytes(code).strip() != bytes(code):
        return  # whitespace at the edges is trimmed by design, and the length check catches it
    with pytest.raises(CodeError):
        CardCodes(KEY).parse(bytes(code))


def test_same_answers_under_micropython():
    codes = CardCodes(KEY)
    samples = [
        codes.make(s, b, c) for s, b, c in [(0, "R", 0), (0xFFFF, "B", 52), (0x3A7F, "R", 51)]
    ]
    samples += [
        "3A7FRAs1d52a21c",
        "3A7FXAs1d52a21b",
        "3a7fRAs1d52a21b",
        "3A7FR1s1d52a21b",
        "short",
    ]
    code = (
        "import json\nfrom shoe.cardcode import CardCodes, CodeError\n"
        "c = CardCodes(b'demo-card-key')\n"
        "for s in %s:\n"
        "    try:\n        print(json.dumps(list(c.parse(s))))\n"
        "    except CodeError as e:\n        print(json.dumps(['err', e.reason]))\n"
    ) % json.dumps(samples)
    got = json_lines(run_code(code))
    want = []
    for s in samples:
        try:
            want.append(list(codes.parse(s)))
        except CodeError as e:
            want.append(["err", e.reason])
    assert got == want


@given(st.integers(0, 14), st.integers(1, 255))
def test_any_flipped_byte_is_refused_after_the_real_code_was_read(pos, flip):
    """A verified code is remembered for its deck (the fast check of the next reads): a code
    differing from it anywhere is still refused."""
    codes = CardCodes(KEY)
    assert codes.parse(b"3A7FRAs1d52a21b") == (0x3A7F, "R", 51)
    code = bytearray(b"3A7FRAs1d52a21b")
    code[pos] ^= flip
    if bytes(code).strip() != bytes(code):
        return
    with pytest.raises(CodeError):
        codes.parse(bytes(code))
    assert codes.parse(b"3A7FRAs1d52a21b") == (0x3A7F, "R", 51)


_SERIALS = (0x3A7F, 0x0001, 0xFFFF, 0x1234, 0x00A0, 0xBEEF)


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_SERIALS),
            st.sampled_from("RB"),
            st.sampled_from((0, 1, 26, 51, 52)),
            st.integers(-1, 14),
            st.integers(1, 255),
        ),
        max_size=80,
    )
)
def test_remembered_codes_answer_exactly_as_a_fresh_check(reads):
    """One CardCodes over many reads (genuine and altered codes of six decks, so the memory of
    verified codes fills and is cleared) gives every answer a fresh CardCodes gives."""
    warm = CardCodes(KEY)

    def answer(codes, raw):
        try:
            return codes.parse(raw)
        except CodeError as e:
            return e.reason

    for serial, back, card, pos, flip in reads:
        raw = bytearray(warm.make(serial, back, card).encode())
        if pos >= 0:
            raw[pos] ^= flip
        raw = bytes(raw)
        assert answer(warm, raw) == answer(CardCodes(KEY), raw)
        assert len(warm._known) <= 4
