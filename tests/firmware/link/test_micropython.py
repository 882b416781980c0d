"""The firmware's link under MicroPython at a device heap: a MicroPython shoe (with its journal on
a real directory) against the CPython host Endpoint over a lossy channel, driven line by line,
in a 64 KB data heap (bytecode aside, as on a board)."""

import subprocess

from host_tools import runtime
from host_tools.link.host import make_endpoint
from tests.firmware.link.helpers import CODE_ROOM, DATA_HEAP_PRELUDE, LossyChannel, run_fw
from tests.mpy import FAKES

KEY = b"k" * 32

SHOE = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, gc
from binascii import hexlify, unhexlify
from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint
_ballast = _data_heap(64 * 1024)  # a device's 64 KB data heap from here on
j = Journal(sys.argv[1])
ep = Endpoint("shoe", b"k" * 32, store=j, shoe_id="MPY1")
n = 0
while True:
    line = sys.stdin.readline()
    if not line:
        break
    t, _, data = line.strip().partition(" ")
    now = int(t)
    for kind, body, ctr, _ in ep.receive(unhexlify(data) if data else b"", now):
        if kind == "echo":  # big messages both ways: fragmented, reassembled in place
            ep.send("blob", {"pad": "b" * body["n"]}, durable=False)
            ep.reply(ctr, {"got": len(body["pad"])})
            continue
        if kind == "emit":
            if j.outbox_room() < body["n"]:
                ep.error(ctr, "outbox_full")
                continue
            for i in range(body["n"]):
                n += 1
                ep.send("card", {"n": n})
                j.outbox_add([], state={"n": n})
        gc.collect()
        ep.reply(ctr, {"ok": True, "free": gc.mem_free()})
    out = ep.transmit(now)
    if now % 2000 == 0:
        sys.stderr.write("%d free=%d outbox=%d txq=%d\n" % (now, gc.mem_free(), j._out.count,
                                                          len(ep._txq)))
    try:
        sys.stdout.write(hexlify(out))
    except MemoryError:
        import micropython
        micropython.mem_info(1)
        print(len(out))
        raise
    sys.stdout.write("\n")
    gc.collect()  # as the app's main loop does, to keep the heap unfragmented
"""
)


def test_micropython_shoe_with_cpython_host_over_a_lossy_link(tmp_path, fw_build):
    script = tmp_path / "mpy_shoe_main.py"
    script.write_text(SHOE)
    state = tmp_path / "state"
    state.mkdir()
    cmd = runtime.command([str(script), str(state)], CODE_ROOM)
    env = runtime.environment(str(fw_build), FAKES)
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        stderr=open(tmp_path / "err.txt", "w"),
        cwd=runtime.ROOT,
        bufsize=1,
    )
    host = make_endpoint("host", KEY)
    up_ch, down_ch = LossyChannel(3), LossyChannel(4)
    events, frees = [], []
    pending = 0
    try:
        now = 0
        while now < 600_000 and (len(events) < 300 or pending):
            now += 20
            if host.up and now % 400 == 0 and len(events) + 10 * pending < 300:
                host.send("emit", {"n": 10})
                pending += 1
            up = up_ch(host.transmit(now))
            proc.stdin.write("%d %s\n" % (now, up.hex()))
            line = proc.stdout.readline()
            if not line or line[0] not in "0123456789abcdef\n":
                raise AssertionError("the MicroPython shoe died: " + line + proc.stdout.read())
            down = bytes.fromhex(line.strip())
            for kind, body, _ref, _meta in host.receive(down_ch(down), now):
                if kind in ("reply", "error"):
                    pending -= 1
                    frees.append(body.get("free", 99999))
                else:
                    events.append(body["n"])
        assert events == list(range(1, len(events) + 1)) and len(events) >= 300
        assert host.peer["id"] == "MPY1"
        assert min(frees) > 4000  # the heap never ran short
        # big messages both ways over the same lossy channel
        host.send("echo", {"pad": "a" * 900, "n": 850})
        echoed = blob = None
        for _ in range(3000):
            now += 20
            proc.stdin.write("%d %s\n" % (now, up_ch(host.transmit(now)).hex()))
            line = proc.stdout.readline()
            for kind, body, _ref, _meta in host.receive(down_ch(bytes.fromhex(line.strip())), now):
                if kind == "reply" and "got" in body:
                    echoed = body["got"]
                elif kind == "blob":
                    blob = len(body["pad"])
            if echoed and blob:
                break
        assert (echoed, blob) == (900, 850)
        # hostile commands against the MicroPython shoe: a replay of command 1, a forged MAC,
        # a command for another shoe (same key), a malformed envelope: each gets its reasoned
        # error, none emits anything
        from host_tools.link.host import seal_command

        host._queue(seal_command(KEY, "emit", {"n": 10}, 1, "MPY1"))
        host._queue(seal_command(b"w" * 32, "emit", {"n": 10}, 10_000, "MPY1"))
        host._queue(seal_command(KEY, "emit", {"n": 10}, 10_001, "MPY2"))  # for another shoe
        host._queue(b"\x84junk")
        errors = []
        n_before = len(events)
        for _ in range(1000):
            now += 20
            proc.stdin.write("%d %s\n" % (now, host.transmit(now).hex()))
            line = proc.stdout.readline()
            for kind, body, _ref, _meta in host.receive(bytes.fromhex(line.strip()), now):
                if kind == "error":
                    errors.append((body["re"], body["reason"]))
                elif kind == "card":
                    events.append(body["n"])
            if len(errors) == 4:
                break
        assert sorted(errors, key=str) == sorted(
            [(1, "replay"), (10_000, "bad_mac"), (10_001, "bad_mac"), (None, "malformed")], key=str
        )
        assert len(events) == n_before
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    assert proc.returncode == 0


def test_deframer_allocation_does_not_grow_with_the_bytes(fw_build):
    """The receive path copies whole runs between delimiters (bytes.find + one slice copy into the
    preallocated buffer): a handful of small allocations per chunk, none per byte."""
    out = run_fw(
        fw_build,
        r"""
import gc
from shoe.link import frame
df = frame.Deframer()
def cost(n):
    data = bytes((i * 7 + 1) % 255 + 1 for i in range(n))
    gc.collect(); gc.disable()
    a = gc.mem_alloc()
    for i in range(10):
        df.feed(data, None)
        df.reset()
    b = gc.mem_alloc()
    gc.enable()
    return (b - a) // 10
print(cost(50), cost(1000))
""",
    )
    small, big = map(int, out.split())
    assert big <= small + 16 and big < 200
