"""One bad bit and a damaged end on the flash ring under MicroPython (test_ring.py runs it as a
script: prints one JSON line): a journal on the fake NOR flash, a bit flipped at every `stride`th
position of its live sectors (repaired: the journal recovers exactly), then its log's tail zeroed
at every `stride`th length (the event sequence and counter never go back, the end is reported
damaged when events were lost, and the outbox keeps what was written before the damage)."""

try:
    from tests.fakes.flash import FakeFlash
except ImportError:
    from flash import FakeFlash

from shoe.journal.journal import Journal
from shoe.journal.ringstore import RingStore

LAYOUT = (("journal.log", 5, 2), ("rounds.0", 3, 1), ("rounds.1", 3, 1), ("marks", 2, 1))
NONCE = b"\x55\x66\x77\x88"
HEAD = b"h" * 16


def journal(root, dev):
    return Journal(
        root,
        max_bytes=1 << 20,
        outbox_limit=32,
        outbox_bytes=4096,
        store=RingStore(dev, NONCE, list(range(13)), LAYOUT),
        keep=(("n",),),
    )


def snap(j):
    return [j.state, j.eseq, j.chain, [[e, bytes(p)] for e, p in j.outbox()], j.round_numbers()]


def run(root, stride):
    dev = FakeFlash(16)
    j = journal(root, dev)
    for i in range(14):
        j.outbox_add(
            [(j.eseq + 1, bytes([65 + i]) * (60 + 29 * i), HEAD)],
            state={"n": i, "cards": "2c" * i},
        )
        if i % 5 == 4:
            j.set_ctr(j.ctr + 3)
            j.outbox_ack(j.eseq - 2, j.ctr + 1)
            j.add_round(i, "round_result", {"round": i})
    before = [j.eseq, j.ctr]
    spans = []
    for name, _, _ in LAYOUT:
        ring = j._store.rings[name]
        out = []
        for s in ring._live:
            base = ring.blocks[s] * 4096
            out.extend(range(base, base + (ring._off if s == ring._cur else 4096)))
        spans.append(out)
    j.close()
    image = bytes(dev.mem)
    truth = snap(journal(root, dev))
    dev.mem[:] = image
    where = [a for out in spans for a in out]
    flips = bad = 0
    for k in range(0, len(where) * 8, stride):
        dev.mem[where[k // 8]] ^= 1 << (k % 8)
        r = journal(root, dev)
        flips += 1
        if snap(r) != truth or r.recovery is not None or r.ctr < before[1]:
            bad += 1
        dev.mem[:] = image
    log = spans[0]
    tails = tbad = 0
    for n in range(1, len(log) + 1, stride):
        for a in log[len(log) - n :]:
            dev.mem[a] = 0
        r = journal(root, dev)
        tails += 1
        rec = r.recovery
        lost = r.eseq != before[0] or snap(r)[3] != truth[3]
        if r.eseq < before[0] or r.ctr < before[1] or (lost and (rec is None or not rec["tail"])):
            tbad += 1
        dev.mem[:] = image
    return {"flips": flips, "bad": bad, "tails": tails, "tails_bad": tbad}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7)))
