"""Unshuffled-deck detector (firmware/shoe/deck/shuffle_check.py): false alarms and detection.

    .venv/bin/python bench/bench_shuffle.py [--shuffles 100000] [--seed 1]

False-alarm rate: fresh uniform shuffles (random.shuffle), judged on the full 52-card order
(dealt + stub, every round by default) and on dealt-only prefixes (stub not read that round:
15 cards = FCF 2 seats, 35 = FCF 6 seats, 49 = HCF 6 seats), with a repeat fingerprint of the
previous rounds in place. Detection rate on: new-deck order (after a random cut, as the cover
card cut does), one riffle (Gilbert-Shannon-Reeds) of new-deck order, and a repeat of an earlier
round's order (after a random cut, and after one riffle). Then the cost of one check on the
MicroPython unix port at a device heap.
"""

import argparse
import os
import random
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "firmware"), ROOT]

import host_tools  # noqa: E402,F401  (the CPython stand-in for `micropython`, before shoe)
from shoe.deck.shuffle_check import (  # noqa: E402
    _P_NEIGH,
    _P_SUCC,
    ALPHA,
    KEEP,
    ShuffleCheck,
    limit,
    run_limit,
    stats,
)

LENGTHS = (52, 15, 35, 49)
# a common new-deck order: As..Ks, Ad..Kd, Kc..Ac, Kh..Ah (id = rank*4 + suit, ace = rank 12)
_ORDER = [12] + list(range(12))
NEW_DECK = (
    [r * 4 + 3 for r in _ORDER]
    + [r * 4 + 1 for r in _ORDER]
    + [r * 4 + 0 for r in reversed(_ORDER)]
    + [r * 4 + 2 for r in reversed(_ORDER)]
)


def cut(deck, rng):
    k = rng.randrange(10, 43)
    return deck[k:] + deck[:k]


def riffle(deck, rng):
    k = sum(rng.random() < 0.5 for _ in range(len(deck)))
    a, b = list(deck[:k]), list(deck[k:])
    out = []
    while a or b:
        if rng.random() * (len(a) + len(b)) < len(a):
            out.append(a.pop(0))
        else:
            out.append(b.pop(0))
    return out


def false_alarms(n, rng):
    sc = ShuffleCheck()
    hits = dict((L, 0) for L in LENGTHS)
    which = dict((L, {}) for L in LENGTHS)
    worst = dict((L, [0, 0, 0, 0]) for L in LENGTHS)  # max A, W, run, repeat seen
    deck = list(range(52))
    for _i in range(n):
        rng.shuffle(deck)
        for L in LENGTHS:
            w = worst[L]
            for j, v in enumerate(stats(deck[:L]) + (sc.repeat(deck[:L]),)):
                if v > w[j]:
                    w[j] = v
            f = sc.check(deck[:L])
            if f is not None:
                hits[L] += 1
                which[L][f["stat"]] = which[L].get(f["stat"], 0) + 1
        sc.remember(deck)
    return hits, which, worst


def detection(n, rng):
    rows = []
    for name, make in (
        ("new-deck order, cut", lambda sc: cut(NEW_DECK, rng)),
        ("new-deck order, one riffle", lambda sc: riffle(NEW_DECK, rng)),
        ("new-deck order, cut + one riffle", lambda sc: riffle(cut(NEW_DECK, rng), rng)),
        ("repeat of an earlier round, cut", None),
        ("repeat of an earlier round, one riffle", None),
    ):
        hits = dict((L, 0) for L in LENGTHS)
        for _i in range(n):
            sc = ShuffleCheck()
            if make is None:
                old = list(range(52))
                rng.shuffle(old)
                sc.remember(old)
                for _ in range(rng.randrange(0, 4)):  # other rounds in between
                    other = list(range(52))
                    rng.shuffle(other)
                    sc.remember(other)
                seq = cut(old, rng) if "cut" in name else riffle(old, rng)
            else:
                seq = make(sc)
            for L in LENGTHS:
                if sc.check(seq[:L]) is not None:
                    hits[L] += 1
        rows.append((name, hits))
    return rows


def micropython_cost():
    from host_tools import runtime

    code = (
        "import time, random\n"
        "from shoe.deck.shuffle_check import ShuffleCheck\n"
        "sc = ShuffleCheck()\n"
        "d = bytearray(range(52))\n"
        "for i in range(4):\n"
        "    sc.remember(d)\n"
        "random.seed(1)\n"
        "for i in range(51, 0, -1):\n"
        "    j = random.getrandbits(16) % (i + 1)\n"
        "    d[i], d[j] = d[j], d[i]\n"
        "N = 300\n"
        "t0 = time.ticks_us()\n"
        "for i in range(N):\n"
        "    sc.check(d)\n"
        "t1 = time.ticks_us()\n"
        "print(time.ticks_diff(t1, t0) / N)\n"
    )
    cmd = runtime.command(["-c", code], runtime.heap())
    env = runtime.environment()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    if out.returncode != 0:
        return None, out.stderr.strip()[-200:]
    return float(out.stdout.strip()), None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shuffles", type=int, default=100000)
    ap.add_argument("--detect", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    t0 = time.time()
    hits, which, worst = false_alarms(a.shuffles, rng)
    t1 = time.time()
    print("unshuffled-deck detector (alpha per statistic 1e-7), seed %d" % a.seed)
    print("false alarms on %d uniform shuffles (%.1f s):" % (a.shuffles, t1 - t0))
    for L in LENGTHS:
        print(
            "  %2d cards: %d (%.5f%%) %s"
            % (L, hits[L], 100.0 * hits[L] / a.shuffles, which[L] or "")
        )
    print("largest statistic seen on those shuffles / the limit that flags:")
    for L in LENGTHS:
        lim = (
            limit(L - 1, _P_NEIGH),
            limit(3 * L - 6, _P_NEIGH),
            run_limit(L),
            limit(L - 1, _P_SUCC, ALPHA / KEEP),
        )
        print(
            "  %2d cards: adjacent %d/%d  window %d/%d  run %d/%d  repeat %d/%d"
            % (
                L,
                worst[L][0],
                lim[0],
                worst[L][1],
                lim[1],
                worst[L][2],
                lim[2],
                worst[L][3],
                lim[3],
            )
        )
    print(
        "detection on %d cases each (cards judged: %s):"
        % (a.detect, "/".join(str(L) for L in LENGTHS))
    )
    for name, h in detection(a.detect, rng):
        print(
            "  %-40s %s"
            % (name, "  ".join("%6.2f%%" % (100.0 * h[L] / a.detect) for L in LENGTHS))
        )
    us, err = micropython_cost()
    if us is None:
        print("MicroPython cost: not measured (%s)" % err)
    else:
        print(
            "one check of 52 cards with 4 fingerprints on the MicroPython unix port "
            "(heap %s): %.0f us (RP2040 ~x160: %.0f ms)" % (runtime_heap(), us, us * 160 / 1000)
        )
    return 0


def runtime_heap():
    from host_tools import runtime

    return runtime.heap()


if __name__ == "__main__":
    sys.exit(main())
