"""The engine under the MicroPython unix port: same bytes as CPython, no allocation per hand,
no RAM growth over many rounds, and `shoectl eval` end to end."""

import json
import subprocess
import sys

import pytest

from host_tools import runtime
from host_tools.engine.evaluate import Evaluator, compiled_firmware
from tests.firmware.games.rounds import stream
from tests.mpy import json_lines, run_code


@pytest.fixture(scope="module")
def mpy_path():
    cache = compiled_firmware()
    return (cache,) if cache is not None else ()


def both(lines):
    with Evaluator("micropython") as ev:
        m = list(ev.results(lines))
    with Evaluator("cpython") as ev:
        c = list(ev.results(lines))
    return m, c


def test_micropython_and_cpython_agree_on_thousands_of_rounds():
    lines = stream(seed=20261129, count=2500, bad_every=6)
    m, c = both(lines)
    assert len(m) == len(c) == 2500
    assert sum('"type": "error"' in x for x in m) >= 2500 // 6
    assert sum('"round_result"' in x for x in m) >= 2000
    for i, (a, b) in enumerate(zip(m, c), 1):
        assert a == b, "line %d differs:\n%s\n%s" % (i, a, b)
    assert not any('"memory"' in x for x in m)


def test_fuzzed_rounds_agree():
    from tests.firmware.games.test_fuzz import fuzz_lines

    lines = fuzz_lines(31, 600)
    m, c = both(lines)
    assert len(m) == len(c) == 600
    for i, (a, b) in enumerate(zip(m, c), 1):
        assert a == b, "line %d differs:\n%s\n%s\n%s" % (i, lines[i - 1], a, b)


def test_stream_edge_lines_agree():
    lines = [
        "",
        "   ",
        "not json",
        "[1, 2]",
        "{}",
        '{"game": 5}',
        "null",
        '"text"',
        '{"game": "four-card-frenzy",}',
        '{"round": NaN}',
        "[" * 5000 + "]" * 5000,
        '{"game": "four-card-frenzy", "paytable": "fcf-public-1", "dealer": ["Ah", '
        '"Kd", "7c", "7s", "2h"], "seats": {"1": {"cards": ["As", "Ks", "Qs", "Js", "2d"],'
        ' "wagers": {"ante": 10, "odds": 10}, "raise": 10}}}',
        '{"game": "high-card-flush", "paytable": "hcf-public-2", "dealer": ["9h", "5h",'
        ' "2h", "Kc", "Qd", "7s", "3\u00e9"], "seats": {}}',
        "x" * 20000,
    ]
    m, c = both(lines)
    assert m == c
    assert len(m) == len(lines) - 2  # blank lines give no output
    assert json.loads(m[-1])["reason"] == "too_long" and json.loads(m[-1])["line"] == 14
    assert [json.loads(x)["reason"] for x in m[6:9]] == ["json", "json", "json"]
    assert json.loads(m[0]) == {
        "type": "error",
        "line": 3,
        "message": "not valid JSON",
        "reason": "json",
    }


def test_value_and_hcf_evaluation_allocate_nothing(mpy_path):
    code = """
import micropython, json
from shoe.games import fcf, hcf, allsix
hands = [(0, 5, 10, 15, 20), (48, 49, 50, 51, 0), (51, 47, 43, 39, 1), (0, 4, 8, 12, 49),
         (3, 7, 11, 15, 51), (8, 9, 20, 21, 30), (8, 9, 10, 21, 30), (8, 9, 10, 11, 30)]
sevens = [(0, 4, 8, 12, 16, 20, 24), (51, 47, 43, 39, 35, 2, 1), (1, 2, 3, 5, 6, 7, 9)]
six = [h[:6] for h in sevens]


def run(hands, sevens, six):
    # locals only: module-level names would grow the globals dict
    for h in hands:
        a, b, c, d, e = h
        v = fcf.value5(a, b, c, d, e)
        o = fcf.dealer_opens(v)
        r = fcf.is_royal(v)
    for h in sevens:
        v = hcf.flush_value(h)
        q = hcf.qualifies(v)
        n = hcf.straight_flush(h)
    for h in six:
        c = allsix.category(h)
    return True


run(hands, sevens, six)  # warm up (first calls may intern names)
micropython.heap_lock()
try:
    locked = run(hands, sevens, six)
finally:
    micropython.heap_unlock()
print(json.dumps([locked, [fcf.value5(*h) for h in hands]]))
"""
    out = json_lines(run_code(code, extra_path=mpy_path, heap="64k"))[0]
    from shoe.games import fcf

    assert out[0] is True
    assert out[1] == [
        fcf.value5(*h)
        for h in [
            (0, 5, 10, 15, 20),
            (48, 49, 50, 51, 0),
            (51, 47, 43, 39, 1),
            (0, 4, 8, 12, 49),
            (3, 7, 11, 15, 51),
            (8, 9, 20, 21, 30),
            (8, 9, 10, 21, 30),
            (8, 9, 10, 11, 30),
        ]
    ]


def test_category_counts_on_a_sub_deck_match_cpython(mpy_path):
    # every five-card hand from 22 cards (26,334 hands) counted on both runtimes
    code = """
import json
from shoe.games import fcf
cards = [c for c in range(52) if c % 5 != 1][:22]
cnt = [0] * 8
n = len(cards)
for i in range(n):
    for j in range(i + 1, n):
        for k in range(j + 1, n):
            for l in range(k + 1, n):
                for m in range(l + 1, n):
                    cnt[fcf.value5(cards[i], cards[j], cards[k], cards[l], cards[m]) >> 26] += 1
print(json.dumps(cnt))
"""
    got = json_lines(run_code(code, extra_path=mpy_path, heap="64k"))[0]
    from shoe.games import fcf

    cards = [c for c in range(52) if c % 5 != 1][:22]
    import itertools

    want = [0] * 8
    for h in itertools.combinations(cards, 5):
        want[fcf.value(h) >> 26] += 1
    assert got == want


def test_no_ram_growth_over_a_thousand_rounds(mpy_path):
    # rounds with preset tables (what the lifecycle passes), parsed from text each time
    lines = [x for x in stream(seed=5, count=40) if '"paytable": "' in x][:8]
    code = """
import gc, json, sys
from shoe.games import engine
rounds = [sys.stdin.readline() for _ in range(%d)]
gc.collect()
base = gc.mem_alloc()
marks = []
for i in range(1000):
    r = engine.evaluate_round(json.loads(rounds[i %% len(rounds)]))
    r = None
    if i in (99, 999):
        gc.collect()
        marks.append(gc.mem_alloc() - base)
print(json.dumps(marks))
""" % len(lines)
    out = run_code(code, extra_path=mpy_path, heap="64k", stdin="\n".join(lines) + "\n")
    first, last = json_lines(out)[0]
    assert last - first <= 1024, (first, last)


def shoectl(args, stdin):
    return subprocess.run(
        [sys.executable, "-m", "host_tools", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=runtime.ROOT,
        timeout=120,
    )


@pytest.mark.parametrize("rt", ["micropython", "cpython"])
def test_shoectl_eval_end_to_end(rt):
    lines = stream(seed=9, count=30)
    p = shoectl(["eval", "--runtime", rt], "\n".join(lines) + "\n")
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    assert len(out) == 30 and all(json.loads(x)["type"] == "round_result" for x in out)
    p = shoectl(["eval", "--runtime", rt], lines[0] + "\n{bad\n" + lines[1] + "\n")
    assert p.returncode == 1
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert [o["type"] for o in out] == ["round_result", "error", "round_result"]
    assert out[1]["line"] == 2


def test_one_persistent_process_serves_the_whole_stream(monkeypatch):
    import host_tools.engine.evaluate as ev_mod

    started = []
    real = ev_mod.subprocess.Popen

    def counting(*a, **kw):
        started.append(a[0])
        return real(*a, **kw)

    monkeypatch.setattr(ev_mod.subprocess, "Popen", counting)
    lines = stream(seed=77, count=400)
    with Evaluator("micropython") as ev:
        out = list(ev.results(lines))
    assert len(out) == 400
    serving = [cmd for cmd in started if "-m" in cmd]  # (the other one is the .mpy probe)
    assert len(serving) == 1 and "evalrun" in serving[0]


def test_a_too_small_heap_degrades_to_error_lines_not_a_crash():
    lines = stream(seed=41, count=120, bad_every=5)
    with Evaluator("micropython", heap="44k") as ev:
        out = [json.loads(x) for x in ev.results(lines)]
    assert len(out) == 120
    assert all(o["type"] in ("round_result", "error") for o in out)
    assert [o["line"] for o in out if o["type"] == "error"] == sorted(
        o["line"] for o in out if o["type"] == "error"
    )


def test_fast_paths_equal_the_general_code_under_micropython(mpy_path):
    # fcfround.best_names (grouped hands by one sort) and allsix.category with the All-Six card
    # apart, against best_cards + pick and the six-card form, on seeded hands under MicroPython
    code = """
import json, random
from shoe.games import allsix, fcf, fcfround
from shoe.games.settle import pick
random.seed(12)
bad = 0
cats = set()
for n in range(3000):
    ids = []
    while len(ids) < 6:
        c = random.getrandbits(6)
        if c < 52 and c not in ids:
            ids.append(c)
    h = ids[:5]
    names = ["%d" % c for c in h]
    v = fcf.value(h)
    cats.add(v >> 26)
    if fcfround.best_names(names, h, v) != pick(names, h, fcf.best_cards(h, v)):
        bad += 1
    if allsix.category(h, ids[5]) != allsix.category(ids):
        bad += 1
print(json.dumps([bad, sorted(cats)]))
"""
    bad, cats = json_lines(run_code(code, extra_path=mpy_path, heap="64k"))[0]
    assert bad == 0
    assert len(cats) >= 7  # (four of a kind is rare in 3000 hands)
