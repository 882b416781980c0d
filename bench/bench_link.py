"""Link and journal figures (not a test): frame overhead, bytes per typical event, the size of a
six-seat round-result frame, bytes on the wire per delivered event over a clean and a 1 %-corrupted
link, journal writes per event and per round, CPU per event (CPython, and MicroPython at a
device-sized heap), and the heap the link and journal take under MicroPython. Issue 9: the bytes
and the shoe time the frame MAC adds per frame (MicroPython unix port in a 64 KB data heap, and
CPython), and the time the link takes to recover from a stall. Issue 18: the bytes encryption
adds per frame (none: counter mode) and its time per frame, on both.

    .venv/bin/python bench/bench_link.py
    .venv/bin/python bench/bench_link.py --pico    # only: the frame MAC and the encryption on
                                                   # the emulated RP2040 (needs SHOE_PICO_UF2)
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "firmware"))

import host_tools  # noqa: E402,F401  (the CPython stand-in for `micropython`, before shoe)
from host_tools import runtime  # noqa: E402
from host_tools.link.host import make_endpoint  # noqa: E402
from shoe.journal.journal import Journal  # noqa: E402
from shoe.link import (  # noqa: E402
    cobs,  # noqa: E402
    codec,
    frame,
)
from shoe.link.cipher import Ctr  # noqa: E402
from shoe.link.crc import crc32  # noqa: E402
from shoe.link.message import seal_message  # noqa: E402
from tests.firmware.link.helpers import CODE_ROOM, DATA_HEAP_PRELUDE, LossyChannel, mpy_build  # noqa: E402

KEY = b"k" * 32
CARD = ("card", {"round": 1234, "card": "Qh", "target": "seat3", "position": 7, "deck": "3A7F"})
CARDS = ["As", "Ks", "Qs", "Js", "2d"]


def six_seat_result():
    """A six-seat Four Card Frenzy round_result in the shape of interfaces.md s.4 (unpacked)."""
    w = {
        "ante": {"amount": 10, "result": 1, "payout": 10},
        "odds": {"amount": 10, "result": 15, "payout": 150},
        "raise": {"amount": 30, "result": 1, "payout": 30},
        "four_card_bonus": {"amount": 5, "category": "royal_flush", "result": 50, "payout": 250},
        "prime": {"amount": 5, "result": 5, "payout": 25},
        "all_six": {"amount": 5, "category": "flush", "result": 20, "payout": 100},
    }
    seats = {
        str(i): {
            "cards": CARDS,
            "best": CARDS[:4],
            "category": "straight_flush",
            "wagers": w,
            "net": 565,
            "capped": False,
        }
        for i in range(1, 7)
    }
    return (
        "round_result",
        {
            "round": 1234,
            "game": "four-card-frenzy",
            "dealer": {"cards": CARDS, "best": CARDS[:4], "category": "pair", "opens": True},
            "all_six_card": "9h",
            "seats": seats,
        },
    )


def wire_size(kind, body, eseq=1):
    payload, _ = seal_message(KEY, kind, body, eseq, bytes(16))
    if len(payload) > frame.MAX_PAYLOAD:
        return len(payload), None
    return len(payload), len(frame.build(frame.DATA, 1, 0, payload))


def run_link(p_byte, p_drop, n=2000, seed=1, event=CARD):
    with tempfile.TemporaryDirectory() as d:
        j = Journal(d)
        shoe_ep = make_endpoint("shoe", KEY, store=j, shoe_id="B")
        host = make_endpoint("host", KEY)
        up, down = LossyChannel(seed, p_byte, p_drop, 0), LossyChannel(seed + 1, p_byte, p_drop, 0)
        sent = got = wire = 0
        now = 0
        t0 = time.perf_counter()
        while got < n and now < 10_000_000:
            now += 10
            if sent < n and shoe_ep.store.outbox_room() > 1:
                sent += 1
                shoe_ep.send_many([event], state={"n": sent})
            out = shoe_ep.transmit(now)
            wire += len(out)
            got += sum(1 for m in host.receive(down(out), now) if m[2])
            shoe_ep.receive(up(host.transmit(now)), now)
        dt = time.perf_counter() - t0
        return {
            "events": got,
            "wire_bytes_per_event": round(wire / got, 1),
            "sim_seconds": now / 1000,
            "cpython_us_per_event": round(dt / got * 1e6, 1),
            "journal_writes": j.writes,
            "journal_writes_per_event": round(j.writes / got, 3),
            "retransmits": shoe_ep.errors().get("retransmit", 0),
        }


def round_writes():
    """One FCF round as the app journals it: open command, 6x5 + 5 cards (+ the all-six card) in
    one table step each, decisions, the result; the host acknowledging as ShoeLink does."""
    with tempfile.TemporaryDirectory() as d:
        j = Journal(d)
        ep = make_endpoint("shoe", KEY, store=j, shoe_id="B")
        host = make_endpoint("host", KEY)
        now = 0

        def pump(ms=300):
            nonlocal now
            for _ in range(ms // 10):
                now += 10
                host.receive(ep.transmit(now), now)
                for _kind, _body, ctr, _ in ep.receive(host.transmit(now), now):
                    ep.reply(ctr, {"ok": True})

        pump()
        w0 = j.writes
        host.send("open_round", {"seats": {str(i): {"ante": 10} for i in range(1, 7)}})
        pump()
        ep.send_many([("phase", {"phase": "deal"})], state={"p": 0})
        for c in range(36):
            ep.send_many([CARD], state={"p": c})
            pump(100)
        host.send("decisions", {"raise": {str(i): 30 for i in range(1, 7)}})
        pump()
        ep.send_many(
            [("round_result", {"round": 1234, "packed": bytes(300)})], state={"p": "done"}
        )
        j.add_round(1234, "round_result", six_seat_result()[1])
        pump(1000)
        return j.writes - w0, j.bytes_written


MPY = r"""
import gc, time, json
def free():
    gc.collect()
    return gc.mem_free()
f0 = free()
from shoe.journal import journal
f1 = free()
from shoe.link import endpoint
import host as hostmod
f2 = free()
j = journal.Journal(ROOT)
f3 = free()
ep = endpoint.Endpoint("shoe", b"k" * 32, store=j, shoe_id="B")
f4 = free()
h = hostmod.HostEndpoint(b"k" * 32)
now = 0
for i in range(40):
    now += 10
    h.receive(ep.transmit(now), now)
    ep.receive(h.transmit(now), now)
N = 300
from shoe.link import message, frame
raw = bytearray(1024)
ev = ("card", {"round": 1234, "card": "Qh", "target": "seat3", "position": 7, "deck": "3A7F"})
t0 = time.ticks_us()
for i in range(N):
    now += 10
    ev = ("card", {"round": 1234, "card": "Qh", "target": "seat3", "position": 7, "deck": "3A7F"})
    ep.send_many([ev], state={"n": i})
    out = ep.transmit(now)
    h.receive(out, now)
    ep.receive(h.transmit(now), now)
dt = time.ticks_diff(time.ticks_us(), t0)
shoe_us = 0
fsync_free = 0
for i in range(N):
    now += 10
    t1 = time.ticks_us()
    ep.send_many([ev], state={"n": i})
    out = ep.transmit(now)
    shoe_us += time.ticks_diff(time.ticks_us(), t1)
    h.receive(out, now)
    ep.receive(h.transmit(now), now)
t1 = time.ticks_us()
for i in range(N):
    p, hd = message.seal_message(b"k" * 32, "card", ev[1], i + 1, bytes(16))
    fb = bytearray()
    frame.build_into(fb, raw, 1, 1, 0, p)
fsync_free = time.ticks_diff(time.ticks_us(), t1)
print(json.dumps({"us_per_event_shoe_only": shoe_us // N,
                  "us_per_event_seal_and_frame_no_journal": fsync_free // N,
                  "heap_journal_modules": f0 - f1, "heap_endpoint_modules_incl_host_half": f1 - f2,
                  "heap_journal_instance": f2 - f3, "heap_endpoint_instance": f3 - f4,
                  "us_per_event_shoe_and_host": dt // N, "free_after": free()}))
"""


def unmac_wire(ftype, seq, ack, payload):
    """What the same frame cost on the wire in protocol 1 (no MAC): for the per-frame delta."""
    import struct

    raw = bytes([1, ftype, seq >> 8, seq & 0xFF, ack >> 8, ack & 0xFF]) + payload
    return len(cobs.encode(raw + struct.pack(">I", crc32(raw)))) + 1


FRAME_SETUP = r"""
import time, json, gc
from shoe.link import frame
from shoe.link.message import seal_message
from shoe.link.cipher import Ctr
from shoe.crypto import equal
K = b"s" * 16
C = Ctr(b"e" * 16)
card, _ = seal_message(b"k" * 32, "card", {"round": 1234, "card": "Qh", "target": "seat3",
                                           "position": 7, "deck": "3A7F"}, 1, bytes(16))
raw = bytearray(frame.MAX_FRAME)
"""
FRAME_COST = (
    FRAME_SETUP
    + r"""
_ballast = _data_heap(64 * 1024)  # a device's 64 KB data heap from here on
N = 1000
res = {}
def h(*a):
    pass
for name, ftype, payload in (("ack", frame.ACK, b""), ("card", frame.DATA, card),
                             ("fragment_120", frame.MORE, bytes(range(120)))):
    t = {}
    for rep in range(3):  # best of three, alternating, against the unix port's timer noise
        for mac in (False, True):
            key = K if mac else None
            t0 = time.ticks_us()
            for i in range(N):
                out = bytearray()
                frame.build_into(out, raw, ftype, i, 0, payload, frame.VERSION, key, b"SHOE3s")
            k = "build_mac" if mac else "build_nomac"
            t[k] = min(t.get(k, 1e9), time.ticks_diff(time.ticks_us(), t0) / N)
            w = bytes(out)
            df = frame.Deframer((lambda f, s, m: equal(frame.frame_mac(K, b"SHOE3s", s), m))
                                if mac else None)
            t0 = time.ticks_us()
            for i in range(N):
                df.feed(w, h)
            k = "check_mac" if mac else "check_nomac"
            t[k] = min(t.get(k, 1e9), time.ticks_diff(time.ticks_us(), t0) / N)
        signed = memoryview(bytes(6) + payload)
        t0 = time.ticks_us()
        for i in range(N):
            equal(frame.frame_mac(K, b"SHOE3s", signed), b"12345678")
        t["mac"] = min(t.get("mac", 1e9), time.ticks_diff(time.ticks_us(), t0) / N)
        t0 = time.ticks_us()
        for i in range(N):
            C.crypt(1, ftype, i + 1, payload)
        t["enc"] = min(t.get("enc", 1e9), time.ticks_diff(time.ticks_us(), t0) / N)
    res[name] = {"wire": len(w), "us_build_no_mac": round(t["build_nomac"], 1),
                 "us_build_with_mac": round(t["build_mac"], 1),
                 "us_receive_no_mac": round(t["check_nomac"], 1),
                 "us_receive_with_mac": round(t["check_mac"], 1),
                 "us_one_frame_mac_and_compare": round(t["mac"], 1),
                 "us_encrypt_or_decrypt_payload": round(t["enc"], 1)}
gc.collect()
res["free_heap"] = gc.mem_free()
print(json.dumps(res))
"""
)


def frame_cost_micropython():
    build = mpy_build(tempfile.mkdtemp())
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench_frame.py"
        path.write_text(DATA_HEAP_PRELUDE + FRAME_COST)
        out = subprocess.run(
            runtime.command([str(path)], CODE_ROOM),
            capture_output=True,
            text=True,
            env=runtime.environment(str(build), runtime.HOST_LINK),
            timeout=300,
        )
        if out.returncode:
            return {"error": out.stdout[-500:] + out.stderr[-500:]}
        return json.loads(out.stdout.strip().splitlines()[-1])


def frame_cost_cpython():
    K = b"s" * 16
    card, _ = seal_message(KEY, *CARD, 1, bytes(16))
    res = {}
    for name, ftype, payload in (
        ("ack", frame.ACK, b""),
        ("card", frame.DATA, card),
        ("fragment_120", frame.MORE, bytes(range(120))),
    ):
        ct = Ctr(b"e" * 16).crypt(1, ftype, 1, payload)
        r = {
            "wire": len(frame.build(ftype, 1, 0, ct, key=K, tag=b"SHOE3s")),
            "wire_clear_payload": len(frame.build(ftype, 1, 0, payload, key=K, tag=b"SHOE3s")),
            "wire_protocol_1": unmac_wire(ftype, 1, 0, payload),
        }
        c = Ctr(b"e" * 16)
        t0 = time.perf_counter()
        for i in range(2000):
            c.crypt(1, ftype, i + 1, payload)
        r["us_encrypt_or_decrypt_payload"] = round((time.perf_counter() - t0) / 2000 * 1e6, 1)
        for mac in (False, True):
            key = K if mac else None
            n = 2000
            t0 = time.perf_counter()
            for i in range(n):
                w = frame.build(ftype, i, 0, payload, key=key, tag=b"SHOE3s")
            r["us_build_%s" % ("with_mac" if mac else "no_mac")] = round(
                (time.perf_counter() - t0) / n * 1e6, 1
            )
            df = frame.Deframer(
                (lambda f, s, m: frame.frame_mac(K, b"SHOE3s", s) == m) if mac else None
            )
            t0 = time.perf_counter()
            for _ in range(n):
                df.feed(w, lambda *a: None)
            r["us_receive_%s" % ("with_mac" if mac else "no_mac")] = round(
                (time.perf_counter() - t0) / n * 1e6, 1
            )
        res[name] = r
    return res


def stall_recovery():
    """Simulated time (default rto 300 / hb 1000 / stall 6000 ms) to recover: (a) after an
    attacker who let heartbeats through but dropped every DATA frame for 10 s stops, until a
    command is answered; (b) from a desynchronised session (the shoe's expected sequence pushed
    9 ahead, as junk frames did in protocol 1) until a command is answered."""
    from host_tools.sim.memstore import MemoryStore

    out = {}
    for case in ("black_hole_10s", "desync"):
        st = MemoryStore()
        shoe_ep = make_endpoint("shoe", KEY, store=st, shoe_id="B")
        host = make_endpoint("host", KEY)
        now = 0
        replies = set()

        def step(drop_data=False, shoe_ep=shoe_ep, host=host, replies=replies):
            nonlocal now
            now += 10
            d = shoe_ep.transmit(now)
            for k, b, _e, _m in host.receive(d, now):
                if k == "reply":
                    replies.add(b["re"])
            u = host.transmit(now)
            if drop_data:
                u = b""  # what passes is decided per frame below
            for _kind, _body, ctr, _ in shoe_ep.receive(u, now):
                shoe_ep.reply(ctr, {"ok": True})

        while not (host.up and shoe_ep.up):
            step()
        if case == "black_hole_10s":
            from host_tools.sim.faultproxy import DATA as D
            from host_tools.sim.faultproxy import UP, FrameMitm

            mitm = FrameMitm(lambda d, f, m: [] if f.ftype == D else None)
            c = host.send("status", {})
            end = now + 10_000
            while now < end:
                now += 10
                host.receive(shoe_ep.transmit(now), now)
                up = mitm.feed(UP, host.transmit(now))
                for _kind, _body, ctr, _ in shoe_ep.receive(up, now):
                    shoe_ep.reply(ctr, {"ok": True})
        else:
            shoe_ep._rx_next = (shoe_ep._rx_next + 9) & 0xFFFF
            c = host.send("status", {})
        t0 = now
        while c not in replies and now - t0 < 60_000:
            step()
        out[case] = {
            "ms_to_answer": now - t0,
            "rehandshakes": host.errors().get("stall", 0) + shoe_ep.errors().get("stall", 0),
        }
    return out


CHIP_FRAME = (
    FRAME_SETUP
    + r"""
N = 200
res = {}
for name, ftype, payload in (("card", frame.DATA, card), ("fragment_120", frame.MORE,
                                                           bytes(range(120)))):
    r = {"payload": len(payload)}
    signed = memoryview(bytes(6) + payload)
    gc.collect()
    t0 = time.ticks_us()
    for i in range(N):
        equal(frame.frame_mac(K, b"SHOE3s", signed), b"12345678")
    r["us_frame_mac_and_compare"] = time.ticks_diff(time.ticks_us(), t0) / N
    gc.collect()
    t0 = time.ticks_us()
    for i in range(N):
        C.crypt(1, ftype, i + 1, payload)
    r["us_encrypt_or_decrypt"] = time.ticks_diff(time.ticks_us(), t0) / N
    gc.collect()
    t0 = time.ticks_us()
    for i in range(N):
        out = bytearray(b"\x00")
        frame.build_into(out, raw, ftype, i + 1, 0, payload, frame.VERSION, K, b"SHOE3s")
    r["us_build_mac_crc_cobs"] = time.ticks_diff(time.ticks_us(), t0) / N
    gc.collect()
    a = gc.mem_alloc()
    gc.disable()
    C.crypt(1, ftype, 1, payload)
    r["bytes_allocated_by_one_encryption"] = gc.mem_alloc() - a
    gc.enable()
    res[name] = r
t0 = time.ticks_us()
for i in range(20):
    Ctr(b"e" * 16)
res["us_new_session_cipher"] = time.ticks_diff(time.ticks_us(), t0) / 20
print(json.dumps(res))
"""
)


def chip_figures():
    """The frame MAC and the payload encryption on the emulated RP2040 (125 MHz, emulated time),
    with the firmware's own compiled link modules written to the chip's flash (no app)."""
    from host_tools import deploy as _deploy
    from host_tools.sim import emu as _emu

    why = _emu.missing()
    if why:
        return {"skipped": "emulated Pico unavailable: " + why}
    files = _deploy.compile_firmware("pico")
    want = [
        p
        for p in files
        if p in ("shoe/__init__.mpy", "shoe/crypto.mpy", "shoe/errors.mpy")
        or p.startswith("shoe/link/")
    ]
    with tempfile.TemporaryDirectory() as d, _emu.Emulator(Path(d) / "state") as e:
        with _deploy.Device(e.urls["repl"], op_timeout=900.0) as dev:
            dev.mkdirs(["bench", "bench/shoe", "bench/shoe/link"])
            for p in want:
                dev.write_file("bench/" + p, files[p])
            dev.run("import sys\nsys.path.insert(0, 'bench')")
            dev._guard.deadline = time.monotonic() + 900
            out, err = dev.t.exec_raw(CHIP_FRAME, timeout=900)
            if err:
                return {"error": err.decode()[-1000:]}
    r = json.loads(out.decode().strip().splitlines()[-1])
    for k in ("card", "fragment_120"):
        r[k] = {a: round(b, 1) for a, b in r[k].items()}
    return r


def micropython_figures():
    build = mpy_build(tempfile.mkdtemp())
    with tempfile.TemporaryDirectory() as d:
        code = "ROOT = %r\n" % d + MPY
        path = Path(d) / "bench_mpy.py"
        path.write_text(code)
        heap = "128k"
        out = subprocess.run(
            runtime.command([str(path)], heap),
            capture_output=True,
            text=True,
            env=runtime.environment(str(build), runtime.HOST_LINK),
            timeout=300,
        )
        if out.returncode:
            return {"error": out.stdout[-500:] + out.stderr[-500:]}
        res = json.loads(out.stdout.strip().splitlines()[-1])
        res["heap"] = heap
        return res


def main(argv=None):
    if "--pico" in (argv or []):
        print(
            "frame MAC and encryption on the emulated RP2040 (125 MHz), microseconds per frame "
            "payload: %s" % json.dumps(chip_figures())
        )
        return
    empty = len(frame.build(frame.ACK, 0, 0))
    card_payload, card_wire = wire_size(*CARD)
    body_only = len(codec.encode(CARD[1]))
    rr_payload, rr_wire = wire_size(*six_seat_result())
    print(
        "frame overhead (header 6 + CRC 4 + COBS + delimiter): %d bytes on the wire for an "
        "empty frame" % empty
    )
    print(
        "typical card event: body %d bytes, message %d bytes (envelope+MAC+chain %d), frame on "
        "the wire %d bytes (%.1f ms at 115200 baud)"
        % (body_only, card_payload, card_payload - body_only, card_wire, card_wire * 10 / 115.2)
    )
    print(
        "six-seat FCF round_result as an unpacked dict (interfaces.md shape): message %d bytes, "
        "%s (target <= 512 bytes: the app sends results packed by shoe.games.packing)"
        % (rr_payload, "frame %d bytes" % rr_wire if rr_wire else "too big for one frame")
    )
    for name, pb, pd in (
        ("clean link", 0.0, 0.0),
        ("1% bytes corrupted + 1% frames dropped", 0.01, 0.01),
    ):
        r = run_link(pb, pd)
        print("%s: %s" % (name, json.dumps(r)))
    big = ("round_result", {"round": 1234, "packed": bytes(range(256)) + bytes(200)})
    r = run_link(0.01, 0.01, n=200, event=big)
    print(
        "a 500-byte (packed round result) message, 1%% corrupted + 1%% dropped: %s"
        % json.dumps(
            {
                "message_bytes": wire_size(*big)[0],
                "wire_bytes_per_message": r["wire_bytes_per_event"],
                "sim_seconds_for_200": r["sim_seconds"],
            }
        )
    )
    w, b = round_writes()
    print(
        "journal writes for one six-seat round (38 table steps, 2 commands, acks, recall): "
        "%d writes" % w
    )
    print("MicroPython (unix port, .mpy): %s" % json.dumps(micropython_figures()))
    cp = frame_cost_cpython()
    print(
        "frame MAC (issue 9) and encryption (issue 18), bytes per frame on the wire: %s"
        % json.dumps(
            {
                k: {
                    "protocol_3": v["wire"],
                    "same_payload_in_clear": v["wire_clear_payload"],
                    "protocol_1_no_mac": v["wire_protocol_1"],
                    "added_by_mac": v["wire_clear_payload"] - v["wire_protocol_1"],
                    "added_by_encryption": v["wire"] - v["wire_clear_payload"],
                }
                for k, v in cp.items()
            }
        )
    )
    print(
        "frame MAC, CPython microseconds per frame (build / receive, without and with MAC): %s"
        % json.dumps(cp)
    )
    mp = frame_cost_micropython()
    print(
        "frame MAC, MicroPython unix port, 64 KB data heap, microseconds per frame: %s"
        % json.dumps(mp)
    )
    for k in ("ack", "card", "fragment_120"):
        if k in mp:
            print(
                "  %s frame (%d bytes): one frame MAC (HMAC-SHA256 + compare) costs %.1f us, "
                "encrypting (or decrypting) its payload %.1f us on the shoe, once to send and "
                "once to receive (unix port on this machine; the chip: bench/bench_pico.py)"
                % (
                    k,
                    mp[k]["wire"],
                    mp[k]["us_one_frame_mac_and_compare"],
                    mp[k]["us_encrypt_or_decrypt_payload"],
                )
            )
    print("time to recover from a stall (simulated ms): %s" % json.dumps(stall_recovery()))


if __name__ == "__main__":
    main(sys.argv[1:])
