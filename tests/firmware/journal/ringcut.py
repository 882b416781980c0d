"""Power cuts at every flash operation of a small journal on the raw flash ring (fake NOR
flash), on CPython (test_ring.py imports this) and the MicroPython unix port (run as a script:
prints one JSON line). A run: open, events with state deltas (records crossing sectors), acks,
a command counter, round records (a rounds segment cleared), compactions; `truths` after each
step."""

try:
    from tests.fakes.flash import FakeFlash, PowerCut
except ImportError:
    from flash import FakeFlash, PowerCut

from shoe.journal.ringstore import RingStore
from shoe.journal.journal import Journal

LAYOUT = (("journal.log", 5, 2), ("rounds.0", 3, 1), ("rounds.1", 3, 1), ("marks", 2, 1))
NONCE = b"\x11\x22\x33\x44"
HEAD = b"h" * 16


def store(dev):
    return RingStore(dev, NONCE, list(range(13)), LAYOUT)


def journal(root, dev):
    return Journal(root, max_bytes=2600, outbox_limit=16, outbox_bytes=2048, store=store(dev))


def snap(j):
    return [j.state, j.eseq, [[e, bytes(p)] for e, p in j.outbox()], j.round_numbers()]


def steps(j, truths, n=10):
    truths.append(snap(j))
    for i in range(n):
        e = j.eseq + 1
        j.outbox_add(
            [(e, bytes([65 + i % 26]) * (90 + 37 * i), HEAD)], state={"n": i, "cards": "2c" * i}
        )
        truths.append(snap(j))
        if i % 3 == 2:
            j.outbox_ack(j.eseq - 1, 10 + i)
            truths.append(snap(j))
        if i == 4:
            j.set_ctr(20)
            truths.append(snap(j))
        if i % 2 == 1:
            j.add_round(i, "round_result", {"round": i, "net": "x" * 2200})
            truths.append(snap(j))
    j.compact()
    truths.append(snap(j))


def full_run(root):
    dev = FakeFlash(16)
    truths = []
    j = journal(root, dev)
    steps(j, truths)
    return dev.ops, truths


def same(a, b):
    return a[0] == b[0] and a[1] == b[1] and a[2] == b[2] and a[3] == b[3]


def cut_at(root, k, truths):
    """Cut the power during the k-th flash operation; -> None if recovery is right, else why."""
    dev = FakeFlash(16)
    dev.cut_at = k
    got = []
    try:
        j = journal(root, dev)
        steps(j, got)
        return "no cut"
    except PowerCut:
        pass
    dev.revive()
    r = journal(root, dev)
    now = snap(r)
    done = len(got)  # steps completed (truths[done - 1] is durable; truths[done] may be)
    ok = (done == 0 and now[1] == 0 and now[0] is None) or (done and same(now, truths[done - 1]))
    ok = ok or (done < len(truths) and same(now, truths[done]))
    if not ok:
        return "after %d steps: %r" % (done, now)
    if r.recovery is not None:
        return "a power cut reported as corruption: %r" % (r.recovery,)
    # the journal goes on: a record after the recovery is kept (never programmed over a tear)
    e = r.eseq + 1
    r.outbox_add([(e, b"after" * 20, HEAD)], state={"n": "after"})
    r.add_round(99, "round_result", {"round": 99})
    want = snap(r)
    r2 = journal(root, dev)
    if not same(snap(r2), want) or r2.recovery is not None:
        return "the record after recovery: %r" % (snap(r2),)
    return None


def run_all(root, stride=1):
    n, truths = full_run(root)
    bad = []
    for k in range(1, n + 1, stride):
        why = cut_at(root, k, truths)
        if why:
            bad.append([k, why])
    return n, bad


if __name__ == "__main__":
    import json
    import sys

    n, bad = run_all(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    print(json.dumps({"ops": n, "bad": bad[:5], "nbad": len(bad)}))
