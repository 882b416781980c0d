"""The qstr pool rule that tests/emu/test_qstr_margin.py computes a margin with, checked on the
unix port (py/qstr.c is the same code on the rp2 port): n run-time pools hold 20 * (2**n - 1)
names, and a new pool appears exactly when one more name than that is interned."""

import re

from tests.mpy import run_code

CODE = r"""
import micropython
for i in range(3000):
    s = "zq%dxw" % i      # a name nobody interned before
    exec(s + " = 1")      # compiling interns the identifier
    micropython.qstr_info()
"""


def test_pools_hold_twenty_times_two_to_the_n_minus_one():
    out = run_code(CODE, heap="4m")
    rows = [tuple(int(x) for x in m) for m in re.findall(r"n_pool=(\d+), n_qstr=(\d+)", out)]
    assert len(rows) == 3000
    grew = 0
    for (p0, q0), (p1, q1) in zip(rows, rows[1:]):
        assert q1 >= q0
        assert q0 <= 20 * (2**p0 - 1)  # never more names than the pools hold
        if p1 > p0:  # a pool added: the ones before were full
            assert p1 == p0 + 1
            assert q0 == 20 * (2**p0 - 1), (p0, q0)
            grew += 1
    assert grew >= 2  # 3000 names: at least two new pools seen
