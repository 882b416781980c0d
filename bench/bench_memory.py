"""The firmware's data heap over a long session: the real App, a host Endpoint and the world in
one MicroPython process (tests/firmware/app_session.py), with the heap shaped like a device with
frozen firmware: exactly SHOE_HEAP (default 64 KB) of contiguous data heap.

    .venv/bin/python bench/bench_memory.py [--rounds 1000] [--seats 6]

Prints the live data after garbage collection at the start, after round 10 and at the end (flat
= no leak), the journal writes per round (flash wear), and the session's wall time.
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
from host_tools.simboard import heap_bytes, CODE_ALLOWANCE  # noqa: E402


def run(rounds, seats, heap):
    state = tempfile.mkdtemp(prefix="shoe-mem-")
    data = heap_bytes(heap)
    cmd = runtime.command([ROOT / "tests/firmware/app_session.py", state, rounds, data, seats],
                          str(data + CODE_ALLOWANCE + 65536))
    env = runtime.environment(compile_firmware(), runtime.BOARD / "sim")
    t0 = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    dt = time.monotonic() - t0
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]
    if out.returncode != 0:
        raise SystemExit("MicroPython failed:\n" + out.stdout[-2000:] + out.stderr[-2000:])
    return lines, dt, data


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--seats", type=int, default=6)
    ap.add_argument("--heap", default=runtime.heap())
    a = ap.parse_args(argv)
    lines, dt, data = run(a.rounds, a.seats, a.heap)
    rounds = [x for x in lines if "round" in x]
    done = lines[-1]
    boot = lines[0]["boot_free"]
    first, tenth, last = rounds[0], rounds[min(9, len(rounds) - 1)], rounds[-1]
    used = lambda r: data - r["free"] if r["free"] < data else 0  # noqa: E731
    print("data heap %d bytes (contiguous, as on a device with frozen firmware)" % data)
    print("%d six-seat FCF rounds: %d results, 0 MemoryError, %.1f s (%.1f ms/round incl. host)" % (
        len(rounds), sum(1 for r in rounds if r["outcome"] == "round_result"), dt,
        1000 * dt / len(rounds)))
    print("free after gc: boot %d, round 1 %d, round 10 %d, round %d %d (lowest seen %d)" % (
        boot, first["free"], tenth["free"], len(rounds), last["free"],
        min(r["min_free"] for r in rounds)))
    print("growth from round 10 to round %d: %d bytes" % (len(rounds), tenth["free"] - last["free"]))
    print("journal: %.1f writes and %.1f KB per round (flash wear)" % (
        done["journal_writes"] / len(rounds), done["journal_bytes"] / 1024 / len(rounds)))


if __name__ == "__main__":
    main()
