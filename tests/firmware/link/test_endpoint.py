"""Two Endpoints (shoe and host) talking through in-memory channels on a simulated clock."""

import pytest

from host_tools.link.host import chain_next, make_endpoint, seal_command
from host_tools.sim.memstore import MemoryStore
from shoe.link import codec, frame
from shoe.link.message import GENESIS, LinkError
from tests.firmware.link.helpers import LossyChannel

KEY = b"k" * 32
SUP = b"s" * 32


class Pair:
    """A shoe and a host endpoint, a trivial shoe application, and two channels."""

    def __init__(self, seed=1, lossy=False, store=None, host_key=KEY, **opts):
        self.store = store or MemoryStore()
        self.shoe = self.new_shoe(**opts)
        self.host = make_endpoint("host", host_key, sid=1000 + seed)
        mk = (lambda s: LossyChannel(s)) if lossy else (lambda s: LossyChannel(s, 0, 0, 0))
        self.up_ch, self.down_ch = mk(seed), mk(seed + 7)
        self.now = 0
        self.events = []
        self.replies = {}
        self.commands = []
        self.roles = {}  # ctr -> the role the shoe end delivered the command with

    def new_shoe(self, **opts):
        return make_endpoint(
            "shoe", KEY, store=self.store, shoe_id="3A7F", supervisor_key=SUP, **opts
        )

    def step(self, dt=10):
        self.now += dt
        d = self.shoe.transmit(self.now)
        for kind, body, ref, meta in self.host.receive(self.down_ch(d), self.now):
            if kind in ("reply", "error"):
                self.replies[body["re"]] = (kind, body)
            else:
                self.events.append((kind, body, ref, meta))
        d = self.host.transmit(self.now)
        for kind, body, ctr, role in self.shoe.receive(self.up_ch(d), self.now):
            self.commands.append((kind, body, ctr))
            self.roles[ctr] = role
            self.shoe.reply(ctr, {"ok": True, "kind": kind})

    def run_until(self, cond, limit_ms=600_000, dt=10):
        end = self.now + limit_ms
        while self.now < end:
            self.step(dt)
            if cond():
                return True
        return False


def test_handshake_then_command_and_events():
    p = Pair()
    assert p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    assert p.host.peer["id"] == "3A7F"
    ctr = p.host.send("status", {})
    assert ctr == 1
    p.shoe.send("card", {"card": "As"})
    assert p.run_until(lambda: 1 in p.replies and p.events, 1000)
    assert p.replies[1] == ("reply", {"re": 1, "ok": True, "kind": "status"})
    kind, body, eseq, meta = p.events[0]
    assert (kind, body, eseq) == ("card", {"card": "As"}, 1)
    assert meta["prev"] == GENESIS and meta["hash"] == chain_next(GENESIS, "card", body, 1)
    # the host acknowledges the stored event: the shoe's outbox empties
    assert p.run_until(lambda: not p.store.outbox(), 2000)


def test_commands_queued_before_the_handshake_are_sent_after_it():
    p = Pair()
    assert p.host.send("status", {}) == 0
    assert p.run_until(lambda: 1 in p.replies, 2000)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lossy_link_with_a_cut_delivers_everything_exactly_once_in_order(seed):
    p = Pair(seed=seed, lossy=True)
    n, sent, cmds = 2000, 0, 0
    while p.now < 3_000_000:
        if sent < n and p.shoe.backlog() < 16 and p.store.outbox_room() > 0:
            sent += 1
            p.shoe.send("card", {"n": sent, "pad": "x" * (sent % 40)})
        if p.now % 3000 == 0 and p.host.up:
            p.host.send("status", {"i": cmds})
            cmds += 1
        cut = 200_000 <= p.now < 205_000  # the cable pulled for 5 s of simulated time
        p.up_ch.cut = p.down_ch.cut = cut
        p.step(20)
        if sent == n and len(p.events) == n and not p.store.outbox():
            break
    got = [b["n"] for k, b, e, m in p.events]
    assert got == list(range(1, n + 1))
    assert [e for k, b, e, m in p.events] == got
    assert sorted(c[2] for c in p.commands) == [c[2] for c in p.commands]  # in order, once
    assert len({c[2] for c in p.commands}) == len(p.commands)
    err = p.host.errors()
    assert err.get("frame_crc", 0) + err.get("frame_cobs", 0) > 0  # the channel really was bad
    assert p.shoe.errors().get("retransmit", 0) > 0


def test_shoe_reset_resends_unacknowledged_events_with_their_sequence():
    store = MemoryStore()
    p = Pair(store=store)
    p.run_until(lambda: p.host.up, 1000)
    for i in range(5):
        p.shoe.send("card", {"n": i})
    p.run_until(lambda: len(p.events) == 5, 2000)
    # the host got all five but the shoe dies before any acknowledgement reaches it
    for i in range(5, 8):
        p.shoe.send("card", {"n": i})  # journalled, never transmitted: the power fails now
    p.shoe = p.new_shoe()  # reboot on the same store
    p.run_until(lambda: len(p.events) >= 8 and not store.outbox(), 5000)
    assert [b["n"] for k, b, e, m in p.events] == list(range(8))
    assert [e for k, b, e, m in p.events] == list(range(1, 9))
    assert p.host.errors().get("dup_event", 0) >= 5  # the five it had were re-sent and dropped


def test_host_restart_with_known_last_event_drops_what_it_has():
    store = MemoryStore()
    p = Pair(store=store)
    p.run_until(lambda: p.host.up, 1000)
    for i in range(4):
        p.shoe.send("card", {"n": i})
    p.run_until(lambda: len(p.events) == 4, 2000)
    # a new host process that already stored events 1..2 (its audit store says so)
    p.host = make_endpoint("host", KEY, on_peer=lambda hello: 2, auto_ack=False)
    p.events.clear()
    p.run_until(lambda: len(p.events) >= 2, 3000)
    p.run_until(lambda: False, 500)
    assert [e for k, b, e, m in p.events] == [3, 4]


@pytest.mark.clause("rules:3-supervisor-ack")
def test_bad_mac_replay_and_out_of_order_commands_are_refused_with_a_reason():
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    c1 = p.host.send("open_round", {"seats": {"1": 10}})
    p.run_until(lambda: c1 in p.replies, 1000)
    assert p.store.ctr == c1
    before = (p.store.ctr, list(p.commands))
    # an attacker replays the captured command frame, forges one, sends an older counter
    forged = seal_command(b"x" * 32, "open_round", {}, 50, "3A7F")
    replay = seal_command(KEY, "open_round", {"seats": {"1": 10}}, c1, "3A7F")
    p.host._queue(replay)
    p.host._queue(forged)
    p.run_until(lambda: 50 in p.replies and c1 in p.replies and p.replies[c1][0] == "error", 2000)
    assert p.replies[50] == ("error", {"re": 50, "reason": "bad_mac"})
    assert p.replies[c1] == ("error", {"re": c1, "reason": "replay"})
    assert (p.store.ctr, p.commands) == before
    # the link delivers whose key MAC'd a command (what the role may do is the app's:
    # shoe.roles): the shoe key -> "table", the supervisor key -> "supervisor"
    c2 = p.host.command("ack_error", {"id": 1})
    p.run_until(lambda: c2 in p.replies, 1000)
    assert p.commands[-1] == ("ack_error", {"id": 1}, c2) and p.roles[c2] == "table"
    c3 = p.host.command("ack_error", {"id": 1}, key=SUP)
    p.run_until(lambda: c3 in p.replies, 1000)
    assert p.commands[-1] == ("ack_error", {"id": 1}, c3) and p.roles[c3] == "supervisor"


def test_forged_ack_cannot_prune_the_outbox():
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    p.host.auto_ack = False
    for i in range(3):
        p.shoe.send("card", {"n": i})
    p.run_until(lambda: len(p.events) == 3, 1000)
    p.host._queue(seal_command(b"x" * 32, "_ack", {"upto": 3}, 99, "3A7F"))
    p.run_until(lambda: 99 in p.replies, 1000)
    assert len(p.store.outbox()) == 3
    p.host.ack_events()
    p.run_until(lambda: not p.store.outbox(), 1000)


def test_version_mismatch_is_refused_clearly_on_both_sides():
    p = Pair()
    h = {"v": 9, "role": "host", "sid": 5, "n": p.host.nonce, "pn": b"", "up": False}
    p.shoe.receive(frame.build(frame.HELLO, 0, 0, codec.encode(h), key=KEY, tag=b"SHOE3hello"), 0)
    out = p.shoe.transmit(0)
    assert p.shoe.refused == "version"
    p.host.receive(out, 0)
    assert p.host.refused == "version" and p.host.refused_info["supported"] == [3]
    # a frame whose version byte is not ours is counted, noted and answered (the REFUSE names
    # the nonce of the HELLO it answers, if the frame was one: a v2 HELLO)
    p2 = Pair()
    v2 = {"v": 2, "role": "host", "sid": 5, "n": p2.host.nonce, "pn": b"", "up": False}
    p2.shoe.receive(frame.build(frame.HELLO, 0, 0, codec.encode(v2), version=2), 0)
    assert p2.shoe.errors()["frame_version"] == 1 and p2.shoe.peer_version == 2
    p2.host.receive(p2.shoe.transmit(0), 0)
    assert p2.host.refused == "version" and p2.host.refused_info["pn"] == p2.host.nonce
    # a v2 shoe cannot read our frames (nor we its REFUSE): its frames' version byte says it
    p3 = Pair()
    p3.host.receive(frame.build(frame.HELLO, 0, 0, codec.encode(v2), version=2), 0)
    assert p3.host.peer_version == 2 and p3.host.refused is None


def test_wrong_key_is_refused_and_nothing_is_delivered():
    p = Pair(host_key=b"w" * 32)
    p.shoe.send("card", {"n": 1})
    p.run_until(lambda: False, 2000)
    assert not p.host.up and not p.events
    assert p.host.refused == "bad_key" and p.shoe.refused == "bad_key"


def test_64k_of_garbage_then_a_normal_exchange():
    import random

    rng = random.Random(5)
    p = Pair()
    garbage = bytes(rng.randrange(256) for _ in range(65536))
    assert p.shoe.receive(garbage, 0) == []
    assert p.host.receive(garbage, 0) == []
    c = p.host.send("status", {})
    assert p.run_until(lambda: p.replies, 2000)
    assert p.replies[max(p.replies)][0] == "reply" and c == 0


def test_heartbeats_and_link_loss_detection():
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    p.run_until(lambda: False, 10_000)  # idle: pings keep both ends up
    assert p.shoe.link_up(p.now) and p.host.link_up(p.now)
    p.up_ch.cut = p.down_ch.cut = True
    p.run_until(lambda: False, 4000)
    assert not p.shoe.link_up(p.now) and not p.host.link_up(p.now)
    p.up_ch.cut = p.down_ch.cut = False
    assert p.run_until(lambda: p.shoe.link_up(p.now) and p.host.link_up(p.now), 3000)


def test_outbox_full_and_too_big_are_reasoned_errors():
    p = Pair(store=MemoryStore(limit=3))
    for i in range(3):
        p.shoe.send("card", {"n": i})
    with pytest.raises(LinkError) as e:
        p.shoe.send("card", {"n": 9})
    assert e.value.reason == "outbox_full"
    p2 = Pair()
    with pytest.raises(LinkError) as e:
        p2.shoe.send("blob", {"b": b"x" * 2000})
    assert e.value.reason == "too_big"
    assert p2.store.outbox() == []


def test_malformed_command_payloads_get_error_replies_and_change_nothing():
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    for junk in [
        b"",
        b"\x84",
        codec.encode([1, 2, 3, b"x" * 16]),
        codec.encode("hello"),
        codec.encode(["k", {}, -1, b"x" * 16]),
        codec.encode(["k", {}, True, b"x" * 16]),
    ]:
        p.host._queue(junk)
    p.run_until(lambda: False, 1000)
    assert p.commands == [] and p.store.ctr == 0
    assert p.shoe.errors()["malformed"] >= 5


def test_the_millisecond_counter_wrapping_does_not_stall_the_link():
    """time.ticks_ms() wraps at 2**30 on MicroPython: the endpoints keep their own clock."""
    p = Pair(seed=4, lossy=True)
    period = 1 << 30
    p.now = period - 2000
    for i in range(4000):  # 40 s across the wrap, an event every 40 ms for the first 10 s
        if i % 4 == 0 and i < 1000:
            p.shoe.send("card", {"n": i // 4})
        p.step(10)
        p.now %= period  # what ticks_ms does
    assert p.now < 50_000  # it did wrap
    assert [b["n"] for k, b, e, m in p.events] == list(range(250))
    assert p.shoe.link_up(p.now) and p.host.link_up(p.now)


def test_a_reply_too_big_for_a_frame_becomes_an_error_reply():
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    c = p.host.send("recall", {"round": 1})
    p.run_until(lambda: p.commands, 1000)
    p.shoe.reply(c, {"record": "x" * 3000})
    p.run_until(lambda: c in p.replies and p.replies[c][1].get("reason") == "reply_too_big", 1000)
    assert p.replies[c] == ("error", {"re": c, "reason": "reply_too_big"})


@pytest.mark.clause("rules:3-supervisor-ack")
def test_without_a_supervisor_key_nothing_is_delivered_as_the_supervisors():
    """A shoe provisioned without a supervisor key: a command MAC'd with any other key than the
    shoe key is refused (bad_mac), never checked against a default; the shoe key's commands
    arrive as the table's (and the app refuses what the table may not do)."""
    store = MemoryStore()
    p = Pair(store=store)
    p.shoe = make_endpoint("shoe", KEY, store=store, shoe_id="3A7F")
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    for key in (bytes(32), SUP, bytes(16)):
        c = p.host.command("ack_error", {"all": True}, key=key)
        p.run_until(lambda c=c: c in p.replies, 1000)
        assert p.replies[c] == ("error", {"re": c, "reason": "bad_mac"})
    assert p.commands == []
    c = p.host.command("ack_error", {"all": True})
    p.run_until(lambda: c in p.replies, 1000)
    assert p.commands == [("ack_error", {"all": True}, c)] and p.roles[c] == "table"


def test_a_shoe_whose_sequence_went_back_is_refused_by_the_host():
    p = Pair()
    p.host = make_endpoint("host", KEY, on_peer=lambda hello: 10)  # the host stored up to eseq 10
    p.shoe.send("card", {"n": 1})  # a wiped shoe starts again at eseq 1
    p.run_until(lambda: False, 2000)
    assert p.host.refused == "sequence_reset" and not p.host.up and p.events == []
    assert p.host.reset_info == {"shoe_eseq": 1, "host_delivered": 10}


@pytest.mark.parametrize("seed", [1, 2])
def test_big_messages_travel_in_fragments_exactly_once_over_a_lossy_link(seed):
    import random

    rng = random.Random(seed)
    p = Pair(seed=seed, lossy=True)
    sizes = [rng.choice([10, 119, 120, 121, 300, 700, 930]) for _ in range(120)]
    sent = 0
    cmd_sizes = []
    while p.now < 2_000_000 and (len(p.events) < len(sizes) or p.store.outbox()):
        if sent < len(sizes) and p.shoe.backlog() < 30 and p.store.outbox_room() > 0:
            p.shoe.send("blob", {"i": sent, "pad": "x" * sizes[sent]})
            sent += 1
        if p.host.up and p.now % 2000 == 0 and len(cmd_sizes) < 20:
            n = rng.choice([50, 400, 900])
            cmd_sizes.append(n)
            p.host.send("config", {"pad": "y" * n})
        p.step(20)
    got = [(b["i"], len(b["pad"])) for k, b, e, m in p.events]
    assert got == list(enumerate(sizes))
    assert [len(b["pad"]) for k, b, c in p.commands] == cmd_sizes[: len(p.commands)]
    assert len(p.commands) >= len(cmd_sizes) - 2  # the last may still be on its way
    assert "too_long" not in p.host.errors() and "bad_mac" not in p.host.errors()
    assert "malformed" not in p.shoe.errors() and "bad_mac" not in p.shoe.errors()


def test_a_partly_sent_volatile_message_is_sent_again_whole_in_the_next_session():
    """Liveness (issue 19: a `status` reply whose first fragments went out in one session was
    never sent again, and the host waited its whole timeout): the next session carries the
    message again from its first fragment, whole, once, and glued to nothing."""
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    p.shoe.send("status_reply", {"pad": "z" * 600}, durable=False)
    p.shoe.transmit(p.now + 1)  # its fragments leave ... and are lost
    p.shoe._txq = p.shoe._txq[2:]  # (the first two fragments got acknowledged meanwhile)
    p.shoe._in_flight -= 2
    p.shoe._tx_base += 2
    p.host = make_endpoint("host", KEY)  # a new host process: a new session
    p.shoe.send("card", {"n": 1})
    p.run_until(lambda: len(p.events) >= 2, 3000)
    p.run_until(lambda: False, 500)
    assert sorted(k for k, b, e, m in p.events) == ["card", "status_reply"]
    assert [b for k, b, e, m in p.events if k == "status_reply"] == [{"pad": "z" * 600}]
    assert not p.host.errors().get("malformed") and not p.host.errors().get("bad_mac")


def test_acknowledging_a_message_in_flight_finishes_it_with_the_same_bytes(numbers):
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    p.host.auto_ack = False
    p.shoe.send("big", {"pad": "q" * 800})  # 8 fragments, delivered in this session
    p.run_until(lambda: p.events, 1000)
    # a new host process that has it already: the shoe re-sends it, the frames are lost, and
    # the host's _ack arrives while all 8 fragments are in flight
    h = make_endpoint("host", KEY, on_peer=lambda hello: 1, auto_ack=False)
    t = p.now
    for _ in range(20):
        t += 10
        p.shoe.receive(h.transmit(t), t)
        if p.shoe.up and h.up:
            break
        h.receive(p.shoe.transmit(t), t)
    assert h.up and p.shoe.up
    lost = p.shoe.transmit(t + 10)
    assert len(p.shoe._txq) == 8 and p.shoe._in_flight == 8 and lost
    h.ack_events()
    p.shoe.receive(h.transmit(t + 20), t + 20)
    assert p.store.outbox() == [] and all(isinstance(x, tuple) for x in p.shoe._txq)
    before = numbers["again"]
    again = h.receive(p.shoe.transmit(t + 2000), t + 2000)  # the timeout: from the copies
    assert numbers["again"] - before == 8  # each number again, with the plaintext it carried
    assert again == [] and h.errors().get("dup_event") == 1
    assert not h.errors().get("bad_mac") and not h.errors().get("malformed")


def test_an_endless_fragment_chain_is_dropped_with_a_reason():
    from shoe.link import frame as fr

    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    seq = p.shoe._rx_next
    data = b""
    k = dict(key=p.host._skey, tag=b"SHOE3h")  # as the host would send them
    for i in range(12):  # 12 x 100 bytes > the largest message
        data += fr.build(fr.MORE, (seq + i) & 0xFFFF, 0, b"m" * 100, **k)
    data += fr.build(fr.DATA, (seq + 12) & 0xFFFF, 0, b"e" * 10, **k)
    assert p.shoe.receive(data, p.now) == []
    assert p.shoe.errors()["too_long"] == 1 and p.shoe._asm_n == 0  # ready for the next one


def _event_payload(eseq, n):
    from shoe.link.message import seal_message

    return seal_message(KEY, "card", {"n": n}, eseq, GENESIS, "3A7F")[0]


def test_the_host_never_delivers_past_a_gap_and_asks_for_a_new_session():
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    p.shoe.send("card", {"n": 1})
    p.run_until(lambda: len(p.events) == 1, 1000)
    # event 3 arrives before 2 (as a frame whose MAC failed once would have let it)
    p.host._now, p.host._out = p.now, []
    p.host._on_data(_event_payload(3, 3))
    assert p.host._out == [] and p.host.delivered == 1
    assert p.host.errors()["gap_resync"] == 1 and p.host.pending()
    p.shoe.send("card", {"n": 2})
    p.shoe.send("card", {"n": 3})
    assert p.run_until(lambda: len(p.events) == 3 and not p.store.outbox(), 3000)
    assert [e for k, b, e, m in p.events] == [1, 2, 3] and "event_gap" not in p.host.errors()
    assert p.host.errors()["sessions"] == 2  # the new session it asked for


def test_a_fresh_session_past_the_gap_is_delivered_and_counted():
    """The shoe no longer holds the missing events (another host acknowledged them): after one
    new session the host takes what there is, counted event_gap (the audit store marks it)."""
    p = Pair()
    for i in range(1, 4):
        p.shoe.send("card", {"n": i})
    p.run_until(lambda: len(p.events) == 3 and not p.store.outbox(), 3000)
    p.host = make_endpoint("host", KEY, on_peer=lambda hello: 1)  # its store holds only event 1
    p.events.clear()
    p.shoe.send("card", {"n": 4})
    assert p.run_until(lambda: p.events, 3000)
    assert [e for k, b, e, m in p.events] == [4] and p.host.errors()["event_gap"] == 1


def test_the_shoe_refuses_an_ack_above_what_it_has_sent():
    from shoe.link.message import seal_message

    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    p.host.auto_ack = False
    payload, head = seal_message(KEY, "card", {"n": 1}, 1, GENESIS, "3A7F")
    p.store.outbox_add([(1, payload, head)])  # journalled, not sent yet
    c = p.host.command("_ack", {"upto": 1})
    p.host._ack_ctrs.append(c)
    p.run_until(lambda: p.shoe.errors().get("ack_ahead"), 1000)
    assert p.store.outbox_first() == 1 and p.store.ctr == 0  # nothing changed
    assert p.run_until(lambda: p.host.errors().get("ack_refused"), 1000)


def test_a_shoe_whose_command_counter_went_back_is_refused_by_the_host():
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    for _ in range(3):
        c = p.host.send("status", {})
        p.run_until(lambda c=c: c in p.replies, 1000)
    assert p.store.ctr == 3
    p.store = MemoryStore()  # the shoe's journal is wiped (or rolled back): ctr 0 again
    p.shoe = p.new_shoe()
    p.run_until(lambda: False, 2000)
    assert p.host.refused == "counter_reset" and not p.host.up
    assert p.host.reset_info == {"shoe_ctr": 0, "host_seen": 3}


def test_a_desynchronised_session_is_renegotiated_within_the_stall_time():
    """Liveness: the shoe's expected sequence pushed 9 ahead (what nine accepted junk frames did
    in protocol 1): frames still arrive both ways, nothing is delivered; within stall_ms the
    ends start a new handshake by themselves and the command gets through."""
    p = Pair()
    p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    p.shoe._rx_next = (p.shoe._rx_next + 9) & 0xFFFF
    c = p.host.send("status", {})
    t0 = p.now
    assert p.run_until(lambda: c in p.replies, 20_000)
    assert p.now - t0 <= 6000 + 500
    assert p.host.errors().get("stall", 0) + p.shoe.errors().get("stall", 0) >= 1


def test_quiet_only_when_nothing_waits_on_the_links_timers():
    """Endpoint.quiet() (the shoe's ticker slows down on it, App.next_tick): False while a
    HELLO is owed, a message waits for its ack or the receiver holds a gap; True once
    everything sent is acknowledged, heartbeats or not."""
    p = Pair()
    assert not p.shoe.quiet()  # a new end owes its first HELLO
    assert p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    assert p.run_until(p.shoe.quiet, 1000)
    p.shoe.send("card", {"card": "As"})
    assert not p.shoe.quiet()  # queued, then in flight until the host acknowledges it
    assert p.shoe.transmit(p.now + 1)  # sent, the ack not back yet
    assert not p.shoe.quiet()
    assert p.run_until(lambda: p.events and p.shoe.quiet(), 2000)
    p.run_until(lambda: False, 5000)  # heartbeats both ways
    assert p.shoe.quiet()
    # a gap: the host's command 2 arrives, its command 1 was lost on the way
    lost = Pair()
    assert lost.run_until(lambda: lost.host.up and lost.shoe.up and lost.shoe.quiet(), 2000)
    lost.host.send("status", {})
    lost.host.transmit(lost.now + 1)  # frame 1 never reaches the shoe
    lost.host.send("status", {})
    lost.shoe.receive(lost.host.transmit(lost.now + 2), lost.now + 2)
    assert not lost.shoe.quiet()


@pytest.mark.parametrize("busy", [False, True])
def test_the_retransmission_timer_does_not_run_out_while_the_wire_is_still_busy(busy):
    """A frame queued behind others is on the wire only once they have gone (a 6-frame reply
    is ~65 ms at 115200 baud): while the shoe's transmitter still holds bytes (wire_busy()
    before transmit()), the timeout counts from now, so nothing goes out twice before the peer
    could have acknowledged it; once the wire is free the timer runs out as before."""
    p = Pair()
    assert p.run_until(lambda: p.host.up and p.shoe.up, 1000)
    assert p.run_until(lambda: not p.shoe._in_flight, 1000)
    rto = p.shoe.rto_ms
    p.shoe.send("card", {"n": 1})
    t0 = p.now
    assert p.shoe.transmit(t0) and p.shoe._in_flight == 1  # sent, never delivered

    def resent(t, wire_busy=False):
        before = p.shoe.errors().get("retransmit", 0)
        if wire_busy:
            p.shoe.wire_busy(t)
        p.shoe.transmit(t)
        return p.shoe.errors().get("retransmit", 0) > before

    if not busy:
        assert resent(t0 + rto + 1)
        return
    assert not resent(t0 + rto - 5, wire_busy=True)  # the wire's last busy moment
    assert not resent(t0 + rto + 1)  # no timeout yet: it counts from t0 + rto - 5
    assert not resent(t0 + 2 * rto - 10)
    assert resent(t0 + 2 * rto - 4)  # rto after the wire's last busy moment: resent
