"""An attacker on the cable against the MicroPython shoe (issue 9 findings 1, 2 and 6; issue 18:
reading the traffic, REFUSE replays, flash wear by replayed HELLOs, a command for another shoe).

The firmware's link and journal run under MicroPython (64 KB data heap); the host Endpoint runs
here; between them a frame-aware man in the middle (host_tools.sim.faultproxy.FrameMitm) that holds
no key but decodes every frame and drops, injects, replays, reorders and alters frames with a
correct CRC. One test per attack. Each asserts: no event is lost for good (the host application
gets every event exactly once, in order, and the shoe's outbox empties), nothing changes on the
shoe that the host did not ask for, and the link recovers by itself once the attacker stops.
Time is simulated (20 ms steps), so a test takes about a second of real time.
"""

import json
import subprocess

from host_tools import runtime
from host_tools.link.host import make_endpoint
from host_tools.sim.faultproxy import (
    ACK,
    DATA,
    DOWN,
    HELLO,
    MORE,
    PING,
    REFUSE,
    UP,
    Frame,
    FrameMitm,
    forge,
)
from shoe.link import codec
from shoe.link.frame import VERSION
from tests.firmware.link.helpers import CODE_ROOM, DATA_HEAP_PRELUDE
from tests.mpy import FAKES

KEY = b"k" * 32

SHOE = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, gc, json
from binascii import hexlify, unhexlify
from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint
_ballast = _data_heap(64 * 1024)
j = Journal(sys.argv[1])
ep = Endpoint("shoe", b"k" * 32, store=j, shoe_id="ATK1")
got = []  # the command counters the application was given, in order
kinds = ("card", "round_void")
while True:
    line = sys.stdin.readline()
    if not line:
        break
    if line[0] == "?":
        s = ep._sess
        print(json.dumps({"ctr": j.ctr, "eseq": j.eseq, "first": j.outbox_first(), "got": got,
                          "errors": ep.errors(), "up": ep.up, "writes": j.writes,
                          "peer_nonce": hexlify(s[1]).decode() if s else ""}))
        continue
    t, _, data = line.strip().partition(" ")
    now = int(t)
    for kind, body, ctr, _ in ep.receive(unhexlify(data) if data else b"", now):
        got.append(ctr)
        if kind == "emit":
            for i in range(body["n"]):
                ep.send(kinds[(j.eseq + 1) % 2], {"n": j.eseq + 1})
        if kind == "raise":  # refused with the seat's allowed amounts, as the table does
            ep.error(ctr, "raise_amount", "seat 3 may raise 20 or 30")
            continue
        ep.reply(ctr, {"ok": True})
    sys.stdout.write(hexlify(ep.transmit(now)))
    sys.stdout.write("\n")
    gc.collect()
"""
)


class Rig:
    """The MicroPython shoe, a host Endpoint (a host 'process'), the attacker between them."""

    def __init__(self, tmp_path, fw_build, rule=None):
        script = tmp_path / "attack_shoe.py"
        script.write_text(SHOE)
        state = tmp_path / "state"
        state.mkdir()
        self.proc = subprocess.Popen(
            runtime.command([str(script), str(state)], CODE_ROOM),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(tmp_path / "err.txt", "w"),
            text=True,
            bufsize=1,
            env=runtime.environment(str(fw_build), FAKES),
            cwd=runtime.ROOT,
        )
        self.attacking = False
        self.rule = rule
        self.mitm = FrameMitm(self._rule)
        self.events = []  # (eseq, kind) the host application stored, in order
        self.replies = {}
        self.sent = []  # command counters the host sent
        self.now = 0
        self.new_host()

    def _rule(self, direction, f, mitm):
        if self.attacking and self.rule is not None:
            return self.rule(direction, f, mitm)
        return None

    def new_host(self):
        """A new host process: it knows what its audit store holds."""
        self.host = make_endpoint(
            "host", KEY, on_peer=lambda h: self.events[-1][0] if self.events else 0
        )
        return self.host

    def shoe(self, now, data):
        self.proc.stdin.write("%d %s\n" % (now, data.hex()))
        line = self.proc.stdout.readline()
        if not line or line[0] not in "0123456789abcdef\n":
            raise AssertionError("the MicroPython shoe died: " + line + self.proc.stdout.read())
        return bytes.fromhex(line.strip())

    def state(self):
        self.proc.stdin.write("?\n")
        return json.loads(self.proc.stdout.readline())

    def step(self, dt=20):
        self.now += dt
        up = self.mitm.feed(UP, self.host.transmit(self.now))
        down = self.mitm.feed(DOWN, self.shoe(self.now, up))
        for kind, body, ref, _meta in self.host.receive(down, self.now):
            if kind in ("reply", "error"):
                self.replies[body["re"]] = (kind, body)
            else:
                assert ref and body["n"] == ref
                self.events.append((ref, kind))

    def run_until(self, cond, limit_ms=20_000):
        end = self.now + limit_ms
        while self.now < end:
            self.step()
            if cond():
                return True
        return False

    def command(self, kind, body=None, limit_ms=20_000):
        """Send a command (once the link is up) and run until its reply; None if none came."""
        assert self.run_until(lambda: self.host.up, limit_ms), "the link did not come up"
        c = self.host.send(kind, body or {})
        self.sent.append(c)
        self.run_until(lambda: c in self.replies, limit_ms)
        return self.replies.get(c)

    def emit(self, n):
        return self.command("emit", {"n": n})

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def run_attack(rig, attack_ms=6000, emits=3):
    """Before, during and after the attack: events flow, then the attacker stops."""
    assert rig.emit(4)[0] == "reply"
    rig.attacking = True
    for _ in range(emits):  # commands and events while under attack (they may be slow)
        c = rig.host.send("emit", {"n": 3}) if rig.host.up else 0
        if c:
            rig.sent.append(c)
        rig.run_until(lambda: False, attack_ms // emits)
    rig.attacking = False
    stop = rig.now
    # recovery by itself: a command answered within bounded time, everything delivered
    assert rig.command("emit", {"n": 2}, limit_ms=15_000) is not None, "no recovery"
    st = rig.state()
    assert rig.run_until(lambda: rig.events and rig.events[-1][0] == st["eseq"], 15_000)
    assert rig.run_until(lambda: rig.state()["first"] == st["eseq"] + 1, 15_000), (
        "the outbox did not empty"
    )
    return stop


def assert_nothing_lost_or_changed(rig):
    st = rig.state()
    eseqs = [e for e, k in rig.events]
    assert eseqs == list(range(1, st["eseq"] + 1)), "an event lost or doubled"
    assert st["eseq"] >= 4 + 2
    # the shoe acted on exactly the commands the host sent (some sent during the attack may have
    # been re-sent in a new session: never executed twice, never one the host did not send)
    assert st["got"] == sorted(set(st["got"]))
    assert set(st["got"]) - {c for c in rig.sent} <= set(range(1, rig.host.ctr + 1))
    assert all(c in st["got"] for c in rig.sent[-1:])
    assert "event_gap" not in rig.host.errors()
    return st


def test_injected_data_frames_with_the_next_sequence_erase_no_event(tmp_path, fw_build):
    """Finding 1: a junk DATA frame carrying the shoe's next transport sequence number."""

    def rule(d, f, mitm):
        if d == DOWN and f.ftype == DATA:
            junk = Frame(VERSION, DATA, f.seq, f.ack, b"\x85junk-event" + bytes(20))
            nxt = junk.copy(seq=(f.seq + 1) & 0xFFFF)
            return [junk, nxt, f, nxt]  # before and after the real one
        return None

    rig = Rig(tmp_path, fw_build, rule)
    try:
        run_attack(rig)
        assert_nothing_lost_or_changed(rig)
        assert rig.host.errors()["frame_mac"] >= 10 and rig.mitm.stats["altered"] >= 10
    finally:
        rig.close()


def test_a_flipped_mac_bit_makes_no_chosen_event_disappear(tmp_path, fw_build):
    """Finding 1: the attacker picks the event kind (kinds are encrypted, but a round_void
    frame is 6 bytes longer than a card frame) and flips one bit of its frame MAC or of its
    ciphertext; the genuine frame never arrives (until it stops)."""

    def rule(d, f, mitm):
        # a card event is 45..47 bytes, a reply 35..36, a round_void 51..53
        if d == DOWN and f.ftype == DATA and 50 <= len(f.payload) <= 56:
            if f.seq % 2:
                return [f.copy(mac=bytes([f.mac[0] ^ 1]) + f.mac[1:])]
            p = bytearray(f.payload)
            p[-1] ^= 0x80  # the ciphertext of the message MAC's last byte
            return [f.copy(payload=bytes(p))]
        return None

    rig = Rig(tmp_path, fw_build, rule)
    try:
        run_attack(rig)
        st = assert_nothing_lost_or_changed(rig)
        assert ("round_void" in [k for e, k in rig.events]) and rig.host.errors()["frame_mac"] > 3
        assert st["errors"].get("retransmit", 0) > 0
    finally:
        rig.close()


def test_a_replayed_hello_from_an_earlier_host_cannot_name_the_session(tmp_path, fw_build):
    """Finding 2: HELLOs recorded from an earlier host process (and from the shoe then),
    replayed into a live session, again and again."""
    rig = Rig(tmp_path, fw_build)
    try:
        assert rig.emit(2)[0] == "reply"
        old_host = rig.host
        old_hellos = [f for f in rig.mitm.seen[UP] if f.ftype == HELLO]
        old_shoe_hellos = [f for f in rig.mitm.seen[DOWN] if f.ftype == HELLO]
        assert old_hellos and old_shoe_hellos
        rig.new_host()  # the host process restarts
        assert rig.emit(2)[0] == "reply"
        n = [0]

        def rule(d, f, mitm):
            n[0] += 1
            if n[0] % 10 == 0:  # every tenth frame: all the recorded HELLOs, both ways
                mitm.inject[UP] += [h.wire() for h in old_hellos]
                mitm.inject[DOWN] += [h.wire() for h in old_shoe_hellos]
            return None

        rig.rule = rule
        peers = set()
        orig_step = rig.step

        def step(dt=20):
            orig_step(dt)
            if rig.now % 400 == 0:
                peers.add(rig.state()["peer_nonce"])

        rig.step = step
        run_attack(rig)
        assert old_host.nonce.hex() not in peers  # the old host's session never came back
        assert rig.mitm.stats["injected"] >= 10
        assert_nothing_lost_or_changed(rig)
    finally:
        rig.close()


def test_forged_transport_acks_drop_nothing_from_the_send_queue(tmp_path, fw_build):
    """Finding 2: forged ACK frames (ahead of what the host holds) and replayed genuine ones."""
    acks = []

    def rule(d, f, mitm):
        if d == UP and f.ftype in (ACK, PING):
            acks.append(f)
        if d == DOWN and f.ftype == DATA:
            mitm.inject[UP] += [forge(ACK, 0, (f.seq + k) & 0xFFFF) for k in (0, 1, 5)]
            if acks:
                mitm.inject[UP].append(acks[0].wire())  # a genuine, old ACK
            return [] if f.seq % 3 == 0 else None  # and some real frames lost
        return None

    rig = Rig(tmp_path, fw_build, rule)
    try:
        run_attack(rig)
        st = assert_nothing_lost_or_changed(rig)
        assert st["errors"]["frame_mac"] >= 20
    finally:
        rig.close()


def test_junk_data_frames_cannot_push_the_shoes_expected_sequence(tmp_path, fw_build):
    """Finding 2: nine junk DATA frames toward the shoe, numbered from its next expected one."""

    def rule(d, f, mitm):
        if d == UP and f.ftype in (DATA, ACK, PING):
            base = f.seq + 1 if f.ftype == DATA else 1
            return [f] + [
                Frame(VERSION, DATA, (base + i) & 0xFFFF, f.ack, b"\x84junk" + bytes(20))
                for i in range(9)
            ]
        return None

    rig = Rig(tmp_path, fw_build, rule)
    try:
        run_attack(rig)
        st = assert_nothing_lost_or_changed(rig)
        assert st["errors"]["frame_mac"] >= 50
    finally:
        rig.close()


def test_frames_arrive_but_nothing_is_delivered_then_both_ends_rehandshake(tmp_path, fw_build):
    """Liveness: the attacker passes heartbeats and handshakes but drops every DATA frame; both
    ends notice that nothing moves, start a new handshake by themselves, and once the attacker
    stops the link works within a bounded time."""

    def rule(d, f, mitm):
        return [] if f.ftype == DATA else None

    rig = Rig(tmp_path, fw_build, rule)
    try:
        stop = run_attack(rig, attack_ms=15_000)
        assert rig.now - stop < 15_000
        st = assert_nothing_lost_or_changed(rig)
        assert rig.host.errors().get("stall", 0) + st["errors"].get("stall", 0) >= 1
    finally:
        rig.close()


def test_a_refuse_or_bad_hello_during_the_handshake_does_not_end_it(tmp_path, fw_build):
    """Finding 6 at the Endpoint level: REFUSE frames (which no one without the key can
    authenticate; these answer the very nonce each HELLO offers, read off the cable) and HELLOs
    with a bad MAC, injected toward both ends while they connect, only get remembered; the
    handshake succeeds and nothing else changes."""

    def rule(d, f, mitm):
        if f.ftype == HELLO:
            bad = f.copy(mac=bytes(8))
            n = codec.decode(f.payload)["n"]
            refuse = Frame(VERSION, REFUSE, 0, 0, codec.encode({"reason": "bad_key", "pn": n}))
            mitm.inject[DOWN if d == UP else UP].append(refuse.wire())  # back to its sender
            return [bad, f]
        return None

    rig = Rig(tmp_path, fw_build, rule)
    rig.attacking = True
    try:
        assert rig.run_until(lambda: rig.host.up, 5000)
        assert rig.host.errors()["refused"] >= 1 and rig.host.errors()["bad_key"] >= 1
        assert rig.state()["errors"]["bad_key"] >= 1
        rig.attacking = False
        assert rig.emit(3)[0] == "reply"
        assert rig.run_until(lambda: len(rig.events) == 3, 5000)
    finally:
        rig.close()


def _plain(f):
    return bytes(f.payload)


def test_a_listener_reads_no_message_on_the_cable(tmp_path, fw_build):
    """Issue 18: the cable carries wagers, decisions, error replies that name a seat's allowed
    raise amounts, status and the reveal. A listener who records every frame both ways finds
    none of the plaintext in any DATA or MORE frame: no kind, no body, no counter, no chain
    head, no MAC of a message (the payload is AES-CTR ciphertext); only sizes and timing."""
    rig = Rig(tmp_path, fw_build)
    try:
        assert rig.emit(4)[0] == "reply"
        c = rig.host.send("raise", {"seat": 3, "amount": 17, "wager": "odds"})
        rig.sent.append(c)
        assert rig.run_until(lambda: c in rig.replies, 5000)
        assert rig.replies[c] == (
            "error",
            {"re": c, "reason": "raise_amount", "detail": "seat 3 may raise 20 or 30"},
        )
        assert rig.emit(2)[0] == "reply"
        frames = rig.mitm.seen[UP] + rig.mitm.seen[DOWN]
        data = [f for f in frames if f.ftype in (DATA, MORE)]
        assert len(data) >= 12
        wire = b"".join(_plain(f) for f in data)
        for secret in (
            b"raise",
            b"seat",
            b"wager",
            b"odds",
            b"raise_amount",
            b"may raise",
            b"20 or 30",
            b"card",
            b"round_void",
            b"emit",
            b"reply",
            b"error",
            b"_ack",
            b"upto",
        ):
            assert secret not in wire, secret
        # nor the structure: a message is a CBOR array of 4 or 5 items, a MAC'd chain head
        # follows 0x50; ciphertext starts with anything
        assert len({f.payload[0] for f in data}) > 4
        assert sum(1 for f in data if f.payload[:1] in (b"\x84", b"\x85")) < len(data) // 4
    finally:
        rig.close()


def test_a_replayed_genuine_refuse_does_not_make_the_host_blame_its_key(tmp_path, fw_build):
    """Issue 18: a host with the wrong key once connected, and the shoe refused it (bad_key, a
    genuine REFUSE). The attacker recorded it; now the right host connects while the attacker
    drops every HELLO and replays the recording again and again. The host must not report that
    its (right) key is wrong: the REFUSE names a nonce this host never offered."""
    rig = Rig(tmp_path, fw_build)
    try:
        rig.host = make_endpoint("host", b"w" * 32)  # the wrong key
        assert not rig.run_until(lambda: rig.host.up, 2000)
        assert rig.host.refused == "bad_key"
        recorded = [f for f in rig.mitm.seen[DOWN] if f.ftype == REFUSE]
        assert recorded

        def rule(d, f, mitm):
            if f.ftype == HELLO:
                mitm.inject[DOWN] += [r.wire() for r in recorded]
                return []
            return None

        rig.rule = rule
        rig.attacking = True
        rig.new_host()  # the right key
        assert not rig.run_until(lambda: rig.host.up, 3000)
        assert rig.host.refused is None and rig.host.errors()["refuse_stale"] >= 10
        assert "refused" not in rig.host.errors()
        rig.attacking = False  # the attacker leaves: the session comes up
        assert rig.run_until(lambda: rig.host.up, 3000)
    finally:
        rig.close()


def test_replayed_hellos_wear_no_flash(tmp_path, fw_build):
    """Issue 18: each replayed HELLO made the live ends run a new handshake, after which the host
    acknowledged the shoe's events again and the shoe journalled that acknowledgement: a flash
    write per replay (42 writes in 3 s). 100 replays here: each forces a new session, none
    writes the MicroPython shoe's journal."""
    rig = Rig(tmp_path, fw_build)
    try:
        assert rig.emit(12)[0] == "reply"
        assert rig.run_until(lambda: len(rig.events) == 12 and rig.state()["first"] == 13)
        old = [f.wire() for f in rig.mitm.seen[UP] if f.ftype == HELLO]
        rig.new_host()  # a new host process: the HELLOs of the first one are old now
        assert rig.emit(1)[0] == "reply"
        assert rig.run_until(lambda: rig.state()["first"] == 14)
        st = rig.state()
        for i in range(100):
            n = rig.host.errors().get("sessions", 0)
            rig.mitm.inject[UP].append(old[i % len(old)])
            assert rig.run_until(
                lambda n=n: rig.host.errors().get("sessions", 0) > n and not rig.host.pending(),
                3000,
            )
        rig.run_until(lambda: False, 1000)
        after = rig.state()
        assert after["errors"]["sessions"] - st["errors"]["sessions"] == 100
        assert after["writes"] == st["writes"]  # not one journal write
        assert after["errors"].get("ack_noop", 0) >= 90
        assert rig.emit(1)[0] == "reply" and rig.run_until(lambda: rig.state()["first"] == 15)
        assert rig.state()["writes"] > st["writes"]  # real changes are still journalled
    finally:
        rig.close()


def test_a_command_for_another_shoe_is_not_executed_after_a_cable_swap(tmp_path, fw_build):
    """Issue 18: two shoes share keys. The host queues commands for shoe ATK0; the attacker moves
    the cable to shoe ATK1 before they are delivered. The host's queued commands go out in the
    new session, but their MACs name ATK0: ATK1 refuses them (bad_mac) and executes none."""
    from host_tools.sim.memstore import MemoryStore
    from shoe.link.endpoint import Endpoint as ShoeEndpoint

    rig = Rig(tmp_path, fw_build)
    try:
        other = ShoeEndpoint("shoe", KEY, store=MemoryStore(), shoe_id="ATK0")
        host = rig.host
        for t in range(0, 400, 20):  # the host talks to ATK0 first
            for _kind, _body, ctr, _ in other.receive(host.transmit(t), t):
                other.reply(ctr, {"ok": True})
            host.receive(other.transmit(t), t)
        assert host.up and host.peer["id"] == "ATK0"
        sent = [host.send("emit", {"n": 2}) for _ in range(3)]  # queued, never delivered
        rig.now = 400
        assert rig.run_until(lambda: host.up and host.peer["id"] == "ATK1", 5000)
        assert rig.run_until(lambda: all(c in rig.replies for c in sent), 5000)
        assert [rig.replies[c] for c in sent] == [
            ("error", {"re": c, "reason": "bad_mac"}) for c in sent
        ]
        st = rig.state()
        assert st["got"] == [] and st["eseq"] == 0 and st["errors"]["bad_mac"] == 3
        c = host.send("emit", {"n": 1})  # sealed for ATK1 now: executed
        assert rig.run_until(lambda: c in rig.replies) and rig.replies[c][0] == "reply"
    finally:
        rig.close()
