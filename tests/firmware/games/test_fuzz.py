"""Fuzz: any JSON value anywhere in a round gives a result or an EngineError, nothing else."""

import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from shoe.games import engine
from tests.firmware.games.rounds import FRACTIONAL_FCF, FRACTIONAL_HCF, fcf_round, hcf_round

junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats()
    | st.text(max_size=6)
    | st.sampled_from(["As", "CV", "four-card-frenzy", "high-card-flush", "fcf-public-1"]),
    lambda inner: (
        st.lists(inner, max_size=7) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, prefix + (i,))


@settings(max_examples=600, deadline=None)
@given(st.integers(0, 2**32), junk, st.integers(0, 10**6), st.booleans())
def test_any_value_anywhere_is_a_result_or_an_engine_error(seed, value, pick, drop):
    rng = random.Random(seed)
    base = (
        fcf_round(rng, table=rng.choice(["fcf-public-1", FRACTIONAL_FCF]))
        if seed % 2
        else hcf_round(rng, table=rng.choice(["hcf-public-2", FRACTIONAL_HCF]))
    )
    obj = copy.deepcopy(base)
    all_paths = [p for p in paths(obj) if p]
    path = all_paths[pick % len(all_paths)]
    target = obj
    for k in path[:-1]:
        target = target[k]
    if drop and isinstance(target, dict):
        del target[path[-1]]
    else:
        target[path[-1]] = value
    try:
        r = engine.evaluate_round(obj)
    except engine.EngineError as e:
        assert e.reason and str(e)
    else:
        assert r["type"] == "round_result"


def fuzz_lines(seed, count):
    """JSON lines of rounds with one random value replaced or key dropped."""
    import json

    rng = random.Random(seed)
    pool = [
        None,
        True,
        False,
        0,
        -1,
        7,
        2**70,
        1.5,
        -0.25,
        1e300,
        "",
        "As",
        "Zz",
        "CV",
        "\u00e9\u20ac",
        "fcf-public-1",
        "hcf-public-1",
        [],
        ["As"],
        {},
        {"ante": 1},
        {"name": "x", "game": "four-card-frenzy"},
        "seat",
        '\n\t"\\',
    ]
    out = []
    for i in range(count):
        base = fcf_round(rng) if i % 2 else hcf_round(rng)
        all_paths = [p for p in paths(base) if p]
        path = rng.choice(all_paths)
        target = base
        for k in path[:-1]:
            target = target[k]
        if rng.random() < 0.2 and isinstance(target, dict):
            del target[path[-1]]
        else:
            target[path[-1]] = copy.deepcopy(rng.choice(pool))
        out.append(json.dumps(base))
    return out
