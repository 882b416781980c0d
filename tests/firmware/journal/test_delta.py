"""State deltas (shoe/journal/delta.py): applying diff(old, new) to a copy of old gives new, also
after the ops went through the codec (as they do through the journal), for any codec value."""

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe.journal import delta
from shoe.link import codec

_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.text(max_size=6),
    st.binary(max_size=6),
    st.floats(allow_nan=False),
)
_keys = st.one_of(st.sampled_from(["a", "b", "cards", "seen", "t"]), st.integers(0, 3))
values = st.recursive(
    _leaf,
    lambda c: st.one_of(st.lists(c, max_size=5), st.dictionaries(_keys, c, max_size=5)),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(values, values)
def test_apply_diff_gives_the_new_state_through_the_codec(old, new):
    ops = delta.diff(old, new)
    got = delta.apply(codec.decode(codec.encode(old)), codec.decode(codec.encode(ops)))
    assert codec.encode(got) == codec.encode(new)
    assert (ops == []) == (codec.encode(old) == codec.encode(new)) or ops


def test_a_dealt_card_is_a_small_delta():
    old = {
        "table": {
            "tracker": {"cards": "0a1b", "seats": [1, 2]},
            "t_last": 1.5,
            "ledger": {"seen": "00000000000000", "slots": [[1, "R"], None]},
            "cfg": {"game": "four-card-frenzy", "paytable": "fcf-public-1"},
        }
    }
    new = delta.copy(old)
    new["table"]["tracker"]["cards"] += "2c"
    new["table"]["t_last"] = 2.5
    new["table"]["ledger"]["seen"] = "00000000000800"
    ops = delta.diff(old, new)
    assert len(codec.encode(ops)) < 50
    assert delta.apply(delta.copy(old), ops) == new
    assert delta.diff(new, new) == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), values, max_size=4),
        min_size=2,
        max_size=6,
    )
)
def test_a_chain_of_deltas_with_one_key_cache(states):
    """The journal applies hundreds of deltas with one cache of sorted keys (delta.apply's
    `cache`): keys added and removed on the way must never be served stale."""
    cache = {}
    mine = delta.copy(states[0])
    for old, new in zip(states, states[1:]):
        ops = codec.decode(codec.encode(delta.diff(old, new)))
        mine = delta.apply(mine, ops, cache)
        assert codec.encode(mine) == codec.encode(new)
