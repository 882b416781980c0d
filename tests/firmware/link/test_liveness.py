"""Liveness of the link across renegotiations (issue 19: the README's `session --port` path
wedged the emulated Pico's link until a reset). What wedged it: the chip's random source returned
the same 8 bytes every time, so the shoe "renewed" its nonce to the one its live session already
used, told the host it was up, and kept the old session key while the host took a new one: every
frame failed its MAC on the other end, for good. Here: a shoe whose nonce source is stuck meets a
new host process, a host that renegotiates, a slow peer whose HELLOs cross; a shoe that hears
nothing authentic while frames wait starts a new session by itself; a reply partly sent in one
session reaches the host whole in the next. The CPython tests run the firmware's own link code;
the last test runs the shoe under MicroPython at a device heap, ten times slower than the host.
"""

import subprocess

from host_tools import runtime
from host_tools.link.host import make_endpoint
from tests.firmware.link.helpers import CODE_ROOM, DATA_HEAP_PRELUDE
from tests.firmware.link.test_endpoint import KEY, Pair
from tests.mpy import FAKES

STUCK = b"*" * 8  # what os.urandom(8) gave on the emulated RP2040, every call, every boot


def stuck():
    return STUCK


def status_answered(p, limit_ms):
    """-> (answered, ms from the host's handshake to the reply)."""
    if not p.run_until(lambda: p.host.up, limit_ms):
        return False, limit_ms
    c = p.host.send("status", {})
    t0 = p.now
    ok = p.run_until(lambda: c in p.replies, limit_ms)
    return ok, p.now - t0


def test_a_shoe_whose_nonce_source_repeats_makes_a_new_session_with_every_host():
    p = Pair(nonce_source=stuck)
    assert p.run_until(lambda: p.host.up and p.shoe.up, 2000)
    assert status_answered(p, 3000)[0]
    for i in range(3):  # new host processes, one after the other
        p.host = make_endpoint("host", KEY, sid=2000 + i)
        ok, waited = status_answered(p, 20_000)
        assert ok and waited <= 3000, "host process %d: no reply (%s)" % (i, p.host.errors())
        assert p.shoe.nonce != STUCK and p.shoe._sess[0] == p.shoe.nonce
    p.host.renegotiate()  # and the host starting a new session itself
    ok, waited = status_answered(p, 20_000)
    assert ok and waited <= 3000
    assert not p.host.errors().get("frame_mac") and not p.shoe.errors().get("frame_mac")
    assert p.shoe.errors()["nonce_repeat"] == 1
    nonces = set()
    for _ in range(50):  # the derived nonces never repeat either
        p.shoe.renegotiate()
        p.shoe._sess = (p.shoe.nonce, b"h" * 8)
        nonces.add(p.shoe.nonce)
    assert len(nonces) == 50 and STUCK not in nonces


def test_a_shoe_that_hears_nothing_authentic_while_frames_wait_starts_a_new_session():
    """The shoe's session key is not the host's (however it came about): the host, idle, only
    pings; the shoe's event waits for an ack that cannot come. Within stall_ms the shoe starts a
    new handshake by itself (fresh keys) and the event arrives."""
    p = Pair()
    assert p.run_until(lambda: p.host.up and p.shoe.up, 2000)
    p.shoe._skey = b"x" * 16
    p.shoe.send("card", {"n": 1})
    t0 = p.now
    assert p.run_until(lambda: p.events, 30_000), p.shoe.errors()
    assert p.now - t0 <= p.shoe.stall_ms + 1500
    assert p.shoe.errors().get("silent") == 1
    assert [b for k, b, e, m in p.events] == [{"n": 1}]


def test_a_reply_in_flight_across_a_renegotiation_reaches_the_host_whole():
    """A status-sized reply (several fragments) is half acknowledged when the session is
    renegotiated: the new session carries it whole and the command is answered."""
    p = Pair()
    assert p.run_until(lambda: p.host.up and p.shoe.up, 2000)
    c = p.host.send("status", {})
    p.run_until(lambda: p.commands, 2000)
    assert p.shoe._in_flight == 0 and c not in p.replies
    p.shoe._txq.clear()  # (the Pair's own short reply: not this test's)
    assert p.run_until(lambda: not p.host._in_flight, 1000)  # the command is acknowledged
    p.shoe.reply(c, {"pad": "s" * 500})  # 5 fragments
    p.shoe.transmit(p.now + 1)  # they leave and are lost, but the first two
    p.shoe._txq = p.shoe._txq[2:]  # were acknowledged meanwhile ...
    p.shoe._in_flight -= 2
    p.shoe._tx_base += 2
    p.host.renegotiate()  # ... when a new session begins
    assert p.run_until(lambda: c in p.replies, 5000)
    assert p.replies[c][1]["pad"] == "s" * 500


SLOW_SHOE = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, gc
from binascii import hexlify, unhexlify
from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint
_ballast = _data_heap(64 * 1024)
j = Journal(sys.argv[1])
ep = Endpoint("shoe", b"k" * 32, store=j, shoe_id="MPY1", nonce_source=lambda: b"*" * 8)
while True:
    line = sys.stdin.readline()
    if not line:
        break
    t, _, data = line.strip().partition(" ")
    now = int(t)
    for kind, body, ctr, _ in ep.receive(unhexlify(data) if data else b"", now):
        ep.reply(ctr, {"pad": "s" * 300, "sessions": ep.stats.get("sessions", 0)})
    sys.stdout.write(hexlify(ep.transmit(now)))
    sys.stdout.write("\n")
    gc.collect()
"""
)


def test_micropython_shoe_ten_times_slower_than_its_hosts(tmp_path, fw_build):
    """The shoe under MicroPython, its clock and its turns ten times slower than the host's (the
    emulated chip on a loaded machine): host HELLOs pile up and cross the shoe's, retries come
    faster than answers. Three host processes in a row, the last renegotiating while its
    command waits: every command is answered, no frame fails its MAC."""
    script = tmp_path / "slow_shoe.py"
    script.write_text(SLOW_SHOE)
    state = tmp_path / "state"
    state.mkdir()
    proc = subprocess.Popen(
        runtime.command([str(script), str(state)], CODE_ROOM),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=runtime.environment(str(fw_build), FAKES),
        cwd=runtime.ROOT,
        bufsize=1,
    )
    now = 0
    to_shoe = []
    try:
        for i in range(3):
            host = make_endpoint("host", KEY, sid=3000 + i)
            ctr = None
            replies = {}
            start = now
            while now - start < 120_000 and ctr not in replies:
                now += 10
                if host.up and ctr is None:
                    ctr = host.send("status", {})
                    if i == 2:
                        host.renegotiate()  # while the command waits: HELLOs cross
                to_shoe.append(host.transmit(now))
                if now % 100:
                    continue  # the shoe takes its turn every 10th host step
                proc.stdin.write("%d %s\n" % (now // 10, b"".join(to_shoe).hex()))
                to_shoe = []
                line = proc.stdout.readline()
                if not line or line[0] not in "0123456789abcdef\n":
                    raise AssertionError("the MicroPython shoe died: " + line + proc.stdout.read())
                for kind, body, _ref, _meta in host.receive(bytes.fromhex(line.strip()), now):
                    if kind == "reply":
                        replies[body["re"]] = body
            assert ctr in replies, "host process %d: no reply (%s)" % (i, host.errors())
            assert replies[ctr]["pad"] == "s" * 300
            assert not host.errors().get("frame_mac"), host.errors()
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    assert proc.returncode == 0


def test_renegotiations_that_bring_nothing_back_off():
    """The shoe's data frames never reach the host (HELLOs, ACKs and PINGs do): every stall
    renegotiation completes and changes nothing. Each waits twice as long as the one before (up
    to 8 x stall_ms), so a peer slower than our timers is not buried under handshakes."""
    from shoe.link import cobs

    p = Pair()
    assert p.run_until(lambda: p.host.up and p.shoe.up, 2000)

    def no_data(data):
        keep = [
            part
            for part in bytes(data).split(b"\x00")
            if part and cobs.decode(part)[1] not in (1, 6)
        ]  # DATA, MORE dropped
        return b"\x00" + b"\x00".join(keep) + b"\x00" if keep else b""

    p.down_ch = no_data
    p.shoe.send("card", {"n": 1})
    times = []
    while p.now < 200_000:
        n = p.shoe.errors().get("stall", 0)
        p.step()
        if p.shoe.errors().get("stall", 0) > n:
            times.append(p.now)
    gaps = [b - a for a, b in zip(times, times[1:])]
    stall = p.shoe.stall_ms
    assert len(times) >= 4 and gaps[0] >= 2 * stall, times
    assert all(b >= a for a, b in zip(gaps, gaps[1:])) and max(gaps) <= 8 * stall + 3000, gaps
