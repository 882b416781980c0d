"""The firmware's data heap over a long session: the real App, a host Endpoint and the world in
one MicroPython process (tests/firmware/app/app_session.py), with the heap shaped like a device
with frozen firmware: exactly SHOE_HEAP (default 64 KB) of contiguous data heap.

    .venv/bin/python bench/bench_memory.py [--rounds 1000] [--seats 6]

Prints the live data after garbage collection at the start, after round 10 and at the end (flat
= no leak), the journal's writes, bytes and modelled sector erases per round (the flash budget
of issue 10: <= 8 KB and <= 2 erases per six-seat round), the app's time per card against the
old cost of encoding the whole snapshot, with a RP2040 estimate (unix port x 160, an estimate:
the emulator measures the chip), and the session's wall time.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host_tools import runtime  # noqa: E402
from host_tools.build import compile_firmware  # noqa: E402


def run(rounds, seats, heap):
    state = tempfile.mkdtemp(prefix="shoe-mem-")
    data = runtime.heap_bytes(heap)
    cmd = runtime.command(
        [ROOT / "tests/firmware/app/app_session.py", state, rounds, data, seats],
        str(int(runtime.ballasted_heap(data)) + 65536),
    )
    env = runtime.environment(compile_firmware(), runtime.BOARD / "sim", runtime.HOST_LINK)
    t0 = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    dt = time.monotonic() - t0
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    if out.returncode != 0:
        raise SystemExit("MicroPython failed:\n" + out.stdout[-2000:] + out.stderr[-2000:])
    return lines, dt, data, state


# The journal's cost per card in isolation, on the state the session left: the whole snapshot
# encoded (what every card cost before deltas) against a delta (diff + encode + CRC'd write).
CARD_COST = r"""
import sys, time, json, os
from shoe.journal.journal import Journal
from shoe.journal import delta
from shoe.link import codec
src = sys.argv[1]
log_bytes = os.stat(src + "/journal.log")[6]
boot_us = None
for _ in range(3):  # a boot's recovery: replay every record of the log and the round segments
    t0 = time.ticks_us()
    j = Journal(src, max_bytes=65536, outbox_bytes=8192, outbox_limit=96)
    dt = time.ticks_diff(time.ticks_us(), t0)
    boot_us = dt if boot_us is None or dt < boot_us else boot_us
    j.close()
st = j.state
tab = st["table"]
N = 10


def best(f):
    # the fastest of 9 batches: a shared machine preempts; the minimum is the code's own cost
    low = None
    for _ in range(9):
        t0 = time.ticks_us()
        for _ in range(N):
            f()
        dt = time.ticks_diff(time.ticks_us(), t0) // N
        low = dt if low is None or dt < low else low
    return low


enc = codec.encode(st)
full_us = best(lambda: codec.encode(st))
# a dealt card: the tracker grows by two hex digits, the clock moves, one bit of the ledger
new = delta.copy(st)
nt = new["table"]
if nt["tracker"] is None:
    nt["tracker"] = {"cards": "", "game": "four-card-frenzy", "proc": "manual-shoe", "a6": True,
                     "seats": [1, 2, 3, 4, 5, 6]}
    st = delta.copy(new)
    nt = new["table"]
nt["tracker"]["cards"] += "2b"
nt["t_last"] = 1796061097
seen = nt["ledger"]["seen"]
nt["ledger"]["seen"] = seen[:6] + ("0" if seen[6] != "0" else "8") + seen[7:]
ops = delta.diff(st, new)
rec = codec.encode(["P", 1, [bytes(78)], None, ops])
delta_us = best(lambda: codec.encode(["P", 1, [bytes(78)], None, delta.diff(st, new)]))
root = src + "/cardcost"
try:
    os.mkdir(root)
except OSError:
    pass
k = Journal(root, outbox_limit=48, outbox_bytes=8192)
items = [(k.eseq + 1, bytes(78), bytes(16))]
k.outbox_add(items, st)
flip = [0]


def add():
    flip[0] ^= 1
    k.outbox_add([(k.eseq + 1, bytes(78), bytes(16))], new if flip[0] else st)
    if k.eseq % 40 == 0:
        k.outbox_ack(k.eseq, k.eseq)


write_us = best(add)
print(json.dumps({"log_bytes": log_bytes, "boot_us": boot_us,
                  "snapshot_bytes": len(enc), "snapshot_us": full_us, "delta_bytes": len(rec),
                  "delta_us": delta_us, "record_us": write_us}))
"""


def card_cost(state):
    script = Path(state) / "cardcost.py"
    script.write_text(CARD_COST)
    cmd = runtime.command([script, state], "1m")
    env = runtime.environment(compile_firmware(), runtime.BOARD / "sim")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit("MicroPython failed:\n" + out.stdout[-2000:] + out.stderr[-2000:])
    return json.loads(out.stdout.splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--seats", type=int, default=6)
    ap.add_argument("--heap", default=runtime.heap())
    a = ap.parse_args(argv)
    lines, dt, data, state = run(a.rounds, a.seats, a.heap)
    rounds = [x for x in lines if "round" in x]
    done = lines[-1]
    boot = lines[0]["boot_free"]
    first, tenth, last = rounds[0], rounds[min(9, len(rounds) - 1)], rounds[-1]
    print("data heap %d bytes (contiguous, as on a device with frozen firmware)" % data)
    print(
        "%d six-seat FCF rounds: %d results, 0 MemoryError, %.1f s (%.1f ms/round incl. host)"
        % (
            len(rounds),
            sum(1 for r in rounds if r["outcome"] == "round_result"),
            dt,
            1000 * dt / len(rounds),
        )
    )
    print(
        "free after gc: boot %d, round 1 %d, round 10 %d, round %d %d (lowest seen %d)"
        % (
            boot,
            first["free"],
            tenth["free"],
            len(rounds),
            last["free"],
            min(r["min_free"] for r in rounds),
        )
    )
    print(
        "growth from round 10 to round %d: %d bytes" % (len(rounds), tenth["free"] - last["free"])
    )
    n = len(rounds)
    print(
        "journal: %.1f writes, %d bytes (%.2f KiB) and %.2f sector erases per round (target: "
        "<= 8 KB, <= 2 erases; erase model: 4 KiB sectors entered by append-only writes, "
        "docs/journal.md)"
        % (
            done["journal_writes"] / n,
            done["journal_bytes"] // n,
            done["journal_bytes"] / 1024 / n,
            done["journal_erases"] / n,
        )
    )
    print(
        "  (littlefs as the rp2 port uses it rewrites a file's last block after every sync: "
        "there each flushed record costs a block erase, ~%.0f per round; not in the model, "
        "see docs/journal.md)" % (done["journal_writes"] / n)
    )
    cm, cx = done["card_us_mean"], done["card_us_max"]
    print(
        "per card, the whole app (table, seal, journal, link; wall time on a shared machine), "
        "unix port: mean %.2f ms, max %.2f ms" % (cm / 1000, cx / 1000)
    )
    c = card_cost(state)
    est = lambda us: us * 160 / 1000  # noqa: E731  (RP2040 ~ 160x the unix port: an estimate)
    print(
        "journal per card, unix port (RP2040 estimate x160, not measured): whole snapshot "
        "%d B encoded %.3f ms (~%.1f ms); delta record %d B, diff + encode %.3f ms (~%.1f ms), "
        "the whole outbox_add with its CRC'd write and flush %.3f ms (a file write on the host: "
        "x160 means little) (~%.1f ms); the delta is %.1fx cheaper than the snapshot alone"
        % (
            c["snapshot_bytes"],
            c["snapshot_us"] / 1000,
            est(c["snapshot_us"]),
            c["delta_bytes"],
            c["delta_us"] / 1000,
            est(c["delta_us"]),
            c["record_us"] / 1000,
            est(c["record_us"]),
            c["snapshot_us"] / max(1, c["delta_us"]),
        )
    )
    print(
        "boot: recovering a %d-byte journal (and the round segments) %.1f ms unix, ~%.1f s "
        "RP2040 estimate (the log is compacted at 48-64 KiB; the watchdog starts after boot)"
        % (c["log_bytes"], c["boot_us"] / 1000, est(c["boot_us"]) / 1000)
    )
    print(
        "a 53-card deck-check burst: journal CPU ~%.0f ms on the RP2040 (estimate; before: "
        "~%.0f ms for the snapshots alone; flash program time not included: the emulator "
        "measures it), in 53 slices: the reader task yields to the loop after every card, so "
        "the host task (2000 ms watchdog limit) runs between them"
        % (53 * est(c["delta_us"]), 53 * est(c["snapshot_us"]))
    )


if __name__ == "__main__":
    main()
