"""Engine benchmarks (issue 3): MicroPython speed and RAM, CPython exhaustive speed vs treys.

    .venv/bin/python bench/bench_engine.py        (or `make bench`, which runs bench/run.py)

Figures, each measured in this run:
- MicroPython unix port at -X heapsize=192k: one FCF hand (best four of five) with the engine
  and with the naive all-subsets evaluator (tests/oracle/naive.py) on the same hands, and the
  ratio;
  a six-seat FCF round with every side wager: settlement alone, and validate + settle
  (engine.evaluate_round).
- MicroPython at -X heapsize=64k: gc.mem_alloc() growth from importing the engine and from
  settling 1,000 rounds (after 100 and after 1,000: growth over time), and the heap_lock check.
- CPython: all C(52,5) hands classified, seconds; per-hand time against treys on the same hands.
"""

import json
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import host_tools  # noqa: E402,F401  (the CPython stand-in for `micropython`, before shoe)

_DEAL = r"""
def deal(n, seed):
    # n random five-card hands as a bytes table (an LCG: the same hands on every run)
    out = bytearray(5 * n)
    x = seed
    for i in range(n):
        used = 0
        k = 0
        while k < 5:
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            c = (x >> 8) % 52
            if not used >> c & 1:
                used |= 1 << c
                out[5 * i + k] = c
                k += 1
    return bytes(out)
"""

_MPY_SPEED = (
    _DEAL
    + r"""
import time, json, gc, micropython
import naive  # tests/oracle/naive.py (on the path below)
from shoe.games import fcf, engine, fcfround, paytable
N = 4000
H = deal(N, 12345)
v5 = fcf.value5
def run_fast(h):
    for i in range(0, len(h), 5):
        v5(h[i], h[i + 1], h[i + 2], h[i + 3], h[i + 4])
def run_naive(h):
    nv = naive.value
    for i in range(0, len(h), 5):
        nv(h[i:i + 5])
def nop(a, b, c, d, e):
    return a
def run_empty(h):
    for i in range(0, len(h), 5):
        nop(h[i], h[i + 1], h[i + 2], h[i + 3], h[i + 4])
def slice_only(h):
    for i in range(0, len(h), 5):
        h[i:i + 5]
def best(f, arg, reps):
    t = None
    for _ in range(reps):
        gc.collect()
        t0 = time.ticks_us()
        f(arg)
        dt = time.ticks_diff(time.ticks_us(), t0)
        t = dt if t is None or dt < t else t
    return t
fast = best(run_fast, H, 7)
empty = best(run_empty, H, 7)
slow = best(run_naive, H, 2) - best(slice_only, H, 3)
import sys
rnd = json.loads(sys.stdin.readline())
t = paytable.load("fcf-public-1", "four-card-frenzy")
def settle_only(n):
    seats = [(k, [engine.parse_card(c, "x") for c in s["cards"]], s)
             for k, s in sorted(rnd["seats"].items())]
    dealer = [engine.parse_card(c, "x") for c in rnd["dealer"]]
    six = engine.parse_card(rnd["all_six_card"], "x")
    raises = [s["raise"] for k, i, s in seats]
    values = [fcf.value(i) for k, i, s in seats]
    rules = {"ties": "player", "raise_when_dealer_not_open": "compare"}
    t0 = time.ticks_us()
    for _ in range(n):
        fcfround.settle({"type": "round_result", "game": "four-card-frenzy"}, t, rules,
                        dealer, six, seats, raises, values, rnd["dealer"], rnd["all_six_card"])
    return time.ticks_diff(time.ticks_us(), t0) / n
def full(n):
    t0 = time.ticks_us()
    for _ in range(n):
        engine.evaluate_round(rnd)
    return time.ticks_diff(time.ticks_us(), t0) / n
settle_us = min(settle_only(200) for _ in range(9))
full_us = min(full(200) for _ in range(9))
hrnd = json.loads(sys.stdin.readline())
def hcf_full(n):
    t0 = time.ticks_us()
    for _ in range(n):
        engine.evaluate_round(hrnd)
    return time.ticks_diff(time.ticks_us(), t0) / n
hcf_us = min(hcf_full(200) for _ in range(9))
print(json.dumps({"hands": N, "raw_us": fast / N, "fast_us": (fast - empty) / N,
                  "loop_us": empty / N,
                  "naive_us": slow / N, "settle_us": settle_us, "round_us": full_us,
                  "hcf_round_us": hcf_us}))
"""
)

_MPY_RAM = (
    _DEAL
    + r"""
import gc, json, micropython, sys
gc.collect()
m0 = gc.mem_alloc()
from shoe.games import engine, fcf, fcfround, allsix, settle, paytable
paytable.load("fcf-public-1")
gc.collect()
m1 = gc.mem_alloc()
rounds = [sys.stdin.readline() for _ in range(6)]  # JSON text: parsed per round
gc.collect()
m2 = gc.mem_alloc()
marks = {}
for i in range(1000):
    engine.evaluate_round(json.loads(rounds[i % len(rounds)]))
    if i + 1 in (100, 1000):
        gc.collect()
        marks[i + 1] = gc.mem_alloc() - m2
def locked(h):
    v5 = fcf.value5
    for i in range(0, len(h), 5):
        v5(h[i], h[i + 1], h[i + 2], h[i + 3], h[i + 4])
H = deal(300, 777)
locked(H)
micropython.heap_lock()
try:
    locked(H)
    lock_ok = True
except MemoryError:
    lock_ok = False
micropython.heap_unlock()
gc.collect()
print(json.dumps({"import_bytes": m1 - m0, "after_100": marks[100], "after_1000": marks[1000],
                  "heap_lock_ok": lock_ok, "free_after_import": gc.mem_free()}))
"""
)


def _mpy(code, heap, stdin):
    import tempfile

    from host_tools import runtime
    from host_tools.engine.evaluate import compiled_firmware

    cache = compiled_firmware()
    extra = ([cache] if cache is not None else []) + [ROOT / "tests" / "oracle"]
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
    try:
        p = subprocess.run(
            runtime.command([f.name], heap),
            env=runtime.environment(*extra),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            input=stdin,
        )
    finally:
        Path(f.name).unlink()
    if p.returncode:
        raise RuntimeError("MicroPython failed:\n" + p.stdout[-2000:] + p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def _six_seat_round():
    from tests.firmware.games.rounds import fcf_round

    rng = random.Random(11)
    while True:
        obj = fcf_round(rng, 6, "fcf-public-1")
        if obj["all_six_card"] is None:
            continue
        for s in obj["seats"].values():
            a = s["wagers"]["ante"]
            s["wagers"].update(prime=a, four_card_bonus=a, all_six=a)
        return obj


def micropython_figures():
    from tests.firmware.games.rounds import hcf_round

    hcf = hcf_round(random.Random(12), 6, "hcf-public-1")
    for st in hcf["seats"].values():
        a = st["wagers"]["ante"]
        st["wagers"].update(flush_bonus=a, straight_flush_bonus=a, progressive=a)
    speed = _mpy(_MPY_SPEED, "192k", json.dumps(_six_seat_round()) + "\n" + json.dumps(hcf) + "\n")
    from tests.firmware.games.rounds import stream

    rounds = [x for x in stream(seed=8, count=80) if '"paytable": "fcf-public-1"' in x][:6]
    ram = _mpy(_MPY_RAM, "64k", "\n".join(rounds) + "\n")
    return speed, ram


def cpython_figures():
    import itertools

    from shoe.games import fcf

    v5 = fcf.value5
    t0 = time.perf_counter()
    n = 0
    for a, b, c, d, e in itertools.combinations(range(52), 5):
        v5(a, b, c, d, e)
        n += 1
    all_s = time.perf_counter() - t0
    rng = random.Random(9)
    hands = [rng.sample(range(52), 5) for _ in range(200000)]
    t0 = time.perf_counter()
    for a, b, c, d, e in hands:
        v5(a, b, c, d, e)
    ours = (time.perf_counter() - t0) / len(hands)
    treys_us = None
    try:
        from treys import Card, Evaluator

        ev = Evaluator()
        names = [[Card.new(("23456789TJQKA"[c >> 2]) + "cdhs"[c & 3]) for c in h] for h in hands]
        split = [(h[:2], h[2:]) for h in names]  # treys takes (hand, board): split beforehand
        evaluate = ev.evaluate
        t0 = time.perf_counter()
        for a, b in split:
            evaluate(a, b)
        treys_us = (time.perf_counter() - t0) / len(hands) * 1e6
    except ImportError:
        pass
    return n, all_s, ours * 1e6, treys_us


def eval_throughput(count=2000):
    from host_tools.engine.evaluate import Evaluator
    from tests.firmware.games.rounds import stream

    lines = stream(seed=3, count=count, bad_every=10)
    out = {}
    for rt in ("micropython", "cpython"):
        t0 = time.perf_counter()
        with Evaluator(rt) as ev:
            res = list(ev.results(lines))
        out[rt] = (time.perf_counter() - t0, res)
    same = out["micropython"][1] == out["cpython"][1]
    return count, out["micropython"][0], out["cpython"][0], same


def main():
    print("== engine (issue 3) ==")
    speed, ram = micropython_figures()
    print("MicroPython -X heapsize=192k, %d random hands:" % speed["hands"])
    print(
        "  FCF hand, best four of five  %.2f us/hand measured in a loop; %.2f us of that is "
        "the loop fetching five cards and calling an empty function, so %.2f us evaluating"
        % (speed["raw_us"], speed["loop_us"], speed["fast_us"])
    )
    print(
        "  naive all-subsets evaluator  %.2f us/hand  -> engine is %.1fx faster per call"
        % (speed["naive_us"], speed["naive_us"] / speed["raw_us"])
    )
    print(
        "  six-seat FCF round, every side wager: settle %.1f us, validate+settle "
        "(evaluate_round) %.1f us" % (speed["settle_us"], speed["round_us"])
    )
    print(
        "  six-seat HCF round, every side wager: validate+settle %.1f us" % speed["hcf_round_us"]
    )
    print("MicroPython -X heapsize=64k:")
    print(
        "  import engine + FCF modules + preset table: %d bytes (gc.mem_alloc growth)"
        % ram["import_bytes"]
    )
    print(
        "  growth after settling 100 / 1000 rounds: %d / %d bytes; free after: %d"
        % (ram["after_100"], ram["after_1000"], ram["free_after_import"])
    )
    print(
        "  value5 under micropython.heap_lock(): %s"
        % ("no allocation" if ram["heap_lock_ok"] else "ALLOCATES")
    )
    n, t_mpy, t_cpy, same = eval_throughput()
    print(
        "shoectl eval, %d mixed rounds (1 in 10 invalid): MicroPython at the default heap "
        "%.2f s (%.0f rounds/s, one process), CPython %.2f s; outputs %s"
        % (n, t_mpy, n / t_mpy, t_cpy, "byte-identical" if same else "DIFFER")
    )
    n, all_s, ours, treys_us = cpython_figures()
    print("CPython %s:" % sys.version.split()[0])
    print("  all C(52,5) = %d hands classified in %.2f s" % (n, all_s))
    if treys_us is None:
        print("  treys not installed: no comparison")
    else:
        print(
            "  per hand: engine %.3f us, treys %.3f us -> engine is %.2fx faster"
            % (ours, treys_us, treys_us / ours)
        )


if __name__ == "__main__":
    main()
