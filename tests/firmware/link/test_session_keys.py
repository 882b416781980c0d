"""One session key, one use of each sequence number (docs/protocol.md s.2 "Encryption", s.5).

An attacker on the cable who drops every HELLO keeps the renewal started at 0x7000 frames from
ever completing; the ends must stop at SEQ_LIMIT rather than let the 16-bit numbers come round
under the same key (a frame recorded 65,536 frames earlier would be taken at its number, and the
counter-mode keystream of that number would be used twice). And wherever a frame is sent again
(retransmission, fast retransmission, a message acknowledged while its fragments are in flight,
new sessions), its number carries byte for byte the same plaintext (watched at the encryption
seam: the `numbers` fixture, conftest.py; test_endpoint.py has the message acknowledged while its
fragments are in flight). And a handshake costs the shoe no flash write. Both ends run here
under CPython with a simulated clock; the firmware's own code, so the same rules hold on the
shoe.
"""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools.link.host import make_endpoint
from host_tools.sim.faultproxy import DATA, DOWN, HELLO, UP, Frame, FrameMitm
from host_tools.sim.memstore import MemoryStore
from shoe.link.sendqueue import SEQ_LIMIT
from tests.firmware.link.helpers import LossyChannel
from tests.firmware.link.test_endpoint import Pair

KEY = b"k" * 32


class Wire(Pair):
    """Shoe and host endpoints with an attacker between them (FrameMitm: no key, sees frames)
    and optional filters on each way (`lossy`: (down, up), bytes -> bytes)."""

    def __init__(self, rule=None, lossy=None, **opts):
        self.store = MemoryStore(limit=4096)
        self.shoe = make_endpoint("shoe", KEY, store=self.store, shoe_id="W1", **opts)
        self.host = make_endpoint("host", KEY, **opts)
        self.mitm = FrameMitm(rule, keep=0)
        self.lossy = lossy
        self.now = 0
        self.got = []  # what the host application was given: (kind, body, eseq)

    def step(self, dt=10):
        self.now += dt
        down = self.mitm.feed(DOWN, self.shoe.transmit(self.now))
        if self.lossy:
            down = self.lossy[0](down)
        for kind, body, eseq, _ in self.host.receive(down, self.now):
            self.got.append((kind, body, eseq))
        up = self.mitm.feed(UP, self.host.transmit(self.now))
        if self.lossy:
            up = self.lossy[1](up)
        for kind, _body, ctr, _ in self.shoe.receive(up, self.now):
            self.shoe.reply(ctr, {"ok": kind})


def _hello_dropper(state):
    """The attacker's filter for one direction: while state["block"], every HELLO is dropped
    (the frame type is byte 2 of a COBS-encoded frame: version and type are never 0); the first
    DATA frames of the session are kept for replaying (full parse only for those)."""

    def f(data):
        if not state["block"] or not data:
            return data
        out = []
        for part in bytes(data).split(b"\x00"):
            if len(part) < 3 or part[2] == HELLO:
                continue
            if part[2] == DATA and len(state["recorded"]) < 64:
                g = Frame.parse(part)
                state["recorded"].setdefault(g.seq, g.wire())
            out.append(part)
        return b"\x00" + b"\x00".join(out) + b"\x00" if out else b""

    return f


_SKIP = 0x8000  # where the numbering is moved on to once the first frames are recorded


def _skip_ahead(w, seq):
    """Both ends as if the shoe had numbered `seq - 1` frames in this session (idle: nothing in
    flight, nothing held): the run then sends only the frames from there to the limit and past
    the wrap (0x8000 instead of 0x10000: seconds of test time). The frame count moves with it,
    so the renewal due at 0x7000 frames starts at once."""
    assert not w.shoe._in_flight and not w.host._rxbuf and w.shoe._tx_base == w.host._rx_next
    w.shoe._frames += seq - w.shoe._tx_base
    w.host._frames += seq - w.host._rx_next
    w.shoe._tx_base = w.host._rx_next = seq


def test_dropping_every_hello_never_lets_a_sequence_number_come_round_under_one_key(numbers):
    """The attacker drops every HELLO from the moment the session is up (so the renewal
    started at 0x7000 frames never completes), records the session's first DATA frames, and
    offers the host each recorded frame again whenever the host expects that frame's number.
    The shoe offers more frames than the numbering has left before it wraps. No number may carry
    two plaintexts under the session's key, none may pass SEQ_LIMIT, no recorded frame may be
    taken: the session stops (the link goes down) instead of wrapping, and once HELLOs pass again
    every message arrives, in order."""
    state = {"block": False, "recorded": {}}
    drop = _hello_dropper(state)
    w = Wire(lossy=(drop, drop))
    assert w.run_until(lambda: w.host.up and w.shoe.up, 2000)
    state["block"] = True
    first_msgs = 64  # the attacker records the DATA frame (the first of 9) of each
    n_msgs = first_msgs + (0x10000 - _SKIP) // 9 + 40  # 950-byte messages: 9 frames each
    for sent in range(1, first_msgs + 1):
        w.shoe.send("m", [sent, b"x" * 950], durable=False)
    assert w.run_until(lambda: not w.shoe.backlog() and len(w.got) == first_msgs, 3000, dt=1)
    assert len(state["recorded"]) == 64
    _skip_ahead(w, _SKIP)
    sent = first_msgs
    replays = 0
    while w.now < 2_000_000 and (w.shoe.up or w.host.up):
        while sent < n_msgs and w.shoe.backlog() < 40:
            sent += 1
            w.shoe.send("m", [sent, b"x" * 950], durable=False)
        nxt = w.host._rx_next
        if nxt in state["recorded"]:  # a recorded frame with the number the host expects next
            w.mitm.inject[DOWN].append(state["recorded"][nxt])
            replays += 1
        elif w.now % 200 == 0:  # and now and then all of them
            w.mitm.inject[DOWN] += list(state["recorded"].values())
            replays += len(state["recorded"])
        w.step(1)
    while sent < n_msgs:  # the application goes on while the link is down
        sent += 1
        w.shoe.send("m", [sent, b"x" * 950], durable=False)
    w.run_until(lambda: False, 10_000)
    first = [b[0] for k, b, e in w.got]
    sess = {k[0] for k in numbers["uses"]}
    assert len(sess) == 1  # one session key all along (numbers checked it: one plaintext each)
    assert max(k[3] for k in numbers["uses"]) == SEQ_LIMIT
    assert not w.shoe.up and not w.host.up and w.shoe.errors()["seq_limit"] == 1
    assert numbers["again"] == 0 and w.shoe.backlog() * 9 > 0x10000 - SEQ_LIMIT
    assert first == list(range(1, len(first) + 1)), "a replayed frame was taken"
    e = w.host.errors()
    assert replays >= 640 and e.get("dup", 0) + e.get("ooo_drop", 0) >= replays
    # the attacker stops dropping HELLOs: a new session, every message delivered
    state["block"] = False
    assert w.run_until(lambda: w.host.up and w.shoe.up, 5000)
    assert w.run_until(lambda: not w.shoe.backlog(), 600_000, dt=1)
    got = [b[0] for k, b, e in w.got]
    # what was in flight when the session stopped is sent again (at most one message twice),
    # then the rest once, in order; a volatile message whose first fragments were acknowledged
    # in the old session is not sent again (sendqueue.whole_messages: durable ones come back
    # from the store): at most the one that straddled SEQ_LIMIT
    missing = set(range(1, n_msgs + 1)) - set(got)
    assert set(got) <= set(range(1, n_msgs + 1)) and len(missing) <= 1
    assert len(got) - len(set(got)) <= 1 and got == sorted(got)


def test_a_number_always_carries_the_same_plaintext(numbers):
    """Retransmissions (timeouts and fast ones), fragments, new sessions (a new host process, a
    shoe reset), over a lossy line that drops, duplicates and corrupts: every (session,
    direction, type, seq) is only ever given one plaintext."""
    rng = random.Random(3)
    w = Wire(lossy=(LossyChannel(5, 0.003, 0.05, 0.02), LossyChannel(6, 0.003, 0.05, 0.02)))
    sent = 0
    for i in range(6000):
        if sent < 300 and w.store.outbox_room() > 0 and w.shoe.backlog() < 30:
            sent += 1
            w.shoe.send("ev", {"i": sent, "pad": "x" * rng.choice([5, 130, 600])})
        if w.host.up and i % 40 == 0:
            w.host.send("cmd", {"pad": "y" * rng.choice([3, 300])})
        if i % 50 == 0:
            w.shoe.send("note", {"pad": "z" * rng.choice([10, 250])}, durable=False)
        if i == 2000:  # a new host process that knows what it stored
            held = max([e for k, b, e in w.got if e] or [0])
            w.host = make_endpoint("host", KEY, on_peer=lambda h, held=held: held)
        if i == 4000:  # the shoe resets
            w.shoe = make_endpoint("shoe", KEY, store=w.store, shoe_id="W1")
        w.step(20)
    sessions = {k[0] for k in numbers["uses"]}
    assert len(sessions) >= 3
    errs = w.shoe.errors()
    assert errs.get("retransmit", 0) + errs.get("fast_retransmit", 0) > 20
    assert numbers["again"] > 100  # numbers really were sent again
    assert sorted({b["i"] for k, b, e in w.got if k == "ev"}) == list(range(1, sent + 1))


class CountingStore:
    """The store seam (docs/protocol.md s.7) around a real Journal: every call that writes."""

    def __init__(self, journal):
        self.j = journal
        self.calls = {"set_ctr": 0, "outbox_add": 0, "outbox_ack": 0}

    def __getattr__(self, name):
        f = getattr(self.j, name)
        if name in self.calls:

            def counted(*a, **kw):
                self.calls[name] += 1
                return f(*a, **kw)

            return counted
        return f

    def writes(self):
        return sum(self.calls.values())


def test_a_thousand_replayed_hellos_cost_the_shoe_no_flash_write(tmp_path):
    """The attacker replays old HELLOs of the host (from the sessions before) 1,000 times. Each
    makes the live ends run a fresh handshake (a new session: the shoe re-sends its outbox, the
    host acknowledges again); none may cost the shoe a journal write (a slow flash-wear attack
    otherwise: one write per handshake)."""
    from shoe.journal.journal import Journal

    hellos = []

    def rule(d, f, mitm):
        if d == UP and f.ftype == HELLO:
            hellos.append(f.wire())
        return None

    store = CountingStore(Journal(str(tmp_path)))
    w = Wire(rule)
    w.shoe = make_endpoint("shoe", KEY, store=store, shoe_id="W1")
    w.store = store
    assert w.run_until(lambda: w.host.up and w.shoe.up, 2000)
    for i in range(20):  # events, acknowledged: the shoe's journal holds what a shoe's does
        w.shoe.send_many([("card", {"n": i})], state={"n": i})
    w.host.send("status", {})
    assert w.run_until(lambda: len(w.got) == 21 and store.outbox_first() == 21, 3000)
    w.shoe.renegotiate()  # one more session: more recorded HELLOs
    assert w.run_until(lambda: w.shoe.errors()["sessions"] == 2 and w.host.up, 3000)
    w.run_until(lambda: False, 1000)
    old = list(hellos)
    before, jwrites, sessions = store.writes(), store.j.writes, w.shoe.errors()["sessions"]
    for i in range(1000):
        n = w.shoe.errors()["sessions"]
        w.mitm.inject[UP].append(old[i % len(old)])
        w.run_until(
            lambda n=n: (
                w.shoe.errors()["sessions"] > n
                and w.host.up
                and not w.host.pending()
                and not w.host.backlog()
            ),
            3000,
        )  # (injected with the host's next frame)
    w.run_until(lambda: False, 2000)
    assert w.shoe.errors()["sessions"] - sessions == 1000  # each replay forced a handshake
    assert store.writes() == before and store.j.writes == jwrites  # and none wrote the flash
    assert w.shoe.errors().get("ack_noop", 0) >= 900  # the host's repeated acks changed nothing
    assert [b for k, b, e in w.got if k == "card"] == [{"n": i} for i in range(20)]
    # the link still works, and a real change is still journalled
    w.shoe.send_many([("card", {"n": 20})], state={"n": 20})
    assert w.run_until(lambda: store.outbox_first() == 22, 3000) and store.writes() == before + 2


def test_the_receiver_takes_no_number_past_the_limit_and_ends_the_session_there():
    """Should a peer (a faulty one) number past SEQ_LIMIT, the receiving end does not follow:
    a frame numbered beyond it is dropped, and taking the last number ends the session."""
    from shoe.link import frame
    from shoe.link.cipher import Ctr
    from shoe.link.message import bound, mac, seal

    st = MemoryStore()
    shoe = make_endpoint("shoe", KEY, store=st, shoe_id="R1", nonce=b"S" * 8)
    host = make_endpoint("host", KEY, nonce=b"H" * 8)
    for t in range(0, 200, 10):
        host.receive(shoe.transmit(t), t)
        shoe.receive(host.transmit(t), t)
    assert shoe.up and host.up
    both = b"S" * 8 + b"H" * 8
    skey, ekey = mac(KEY, b"SHOE3sess", both), mac(KEY, b"SHOE3enc", both)

    def cmd(seq, ctr):
        p = seal(KEY, bound(b"SHOE3cmd", "R1"), ["status", {}, ctr])[0]
        return frame.build(
            frame.DATA, seq, 0, Ctr(ekey).crypt(2, frame.DATA, seq, p), key=skey, tag=b"SHOE3h"
        )

    assert shoe.receive(cmd(1, 1), 300)  # the keys are right: taken
    shoe._rx_next = SEQ_LIMIT  # (as if the host had sent that many)
    assert shoe.receive(cmd(SEQ_LIMIT + 1, 2), 310) == []
    assert shoe.errors()["seq_limit_rx"] == 1 and shoe.up
    assert shoe.receive(cmd(SEQ_LIMIT, 3), 320)  # the last number: taken, and the session ends
    assert not shoe.up and shoe.errors()["seq_limit"] == 1 and shoe.pending()
    out = shoe.transmit(330)
    assert out and all(p[2] == frame.HELLO for p in bytes(out).split(b"\x00") if p)


@settings(deadline=None, max_examples=200)
@given(
    st.binary(min_size=16, max_size=16),
    st.integers(1, 2),
    st.sampled_from([1, 6]),
    st.integers(1, SEQ_LIMIT),
    st.binary(max_size=300),
)
def test_the_keystream_is_aes_ctr_from_a_counter_block_unique_per_number(key, d, ftype, seq, pt):
    """Counter block i of a frame is direction|type|seq|0^10|i: standard AES-CTR (checked here
    against the cryptography package's own CTR mode) from a block no other (direction, type,
    seq) starts from or runs into (i < 2**16: at most 63 blocks a frame)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    from shoe.link.cipher import Ctr

    iv = bytes([d, ftype, seq >> 8, seq & 0xFF]) + bytes(12)
    e = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    assert Ctr(key).crypt(d, ftype, seq, pt) == e.update(pt) + e.finalize()
    assert Ctr(key).crypt(d, ftype, seq, Ctr(key).crypt(d, ftype, seq, pt)) == pt
