"""Deterministic JSON text (shoe.games.jsonout) and the eval command's failure modes."""

import json
import os
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from host_tools import runtime
from shoe.games.jsonout import KEY_ORDER, dumps

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.integers(-(10**9), 10**9).map(lambda n: n / 10000),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(values)
def test_dumps_is_valid_json_of_the_same_value(v):
    assert json.loads(dumps(v)) == v


@given(st.text())
def test_strings_are_ascii_only(s):
    out = dumps(s)
    assert out.isascii()
    assert json.loads(out) == s


def test_key_order_follows_the_interface():
    d = {k: 1 for k in reversed(KEY_ORDER)}
    d.update({"10": 0, "2": 0, "zz": 0})
    keys = list(json.loads(dumps(d)))
    assert keys[: len(KEY_ORDER)] == list(KEY_ORDER)
    assert keys[len(KEY_ORDER) :] == ["2", "10", "zz"]


def test_fractional_results_print_exactly():
    assert dumps([1.5, 0.1, 2.675, 1.2345, -0.5, 3.0]) == "[1.5, 0.1, 2.675, 1.2345, -0.5, 3.0]"


def test_eval_reports_a_missing_micropython_clearly():
    env = dict(os.environ, SHOE_MICROPYTHON="/nonexistent/micropython")
    p = subprocess.run(
        [sys.executable, "-m", "host_tools", "eval"],
        input="{}\n",
        env=env,
        capture_output=True,
        text=True,
        cwd=runtime.ROOT,
        timeout=60,
    )
    assert p.returncode == 1
    assert p.stderr.startswith("shoectl: ") and "SHOE_MICROPYTHON" in p.stderr
    assert "Traceback" not in p.stderr
