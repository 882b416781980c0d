"""ShoeLink (host_tools/link/) against a shoe on a real TCP socket (pyserial socket://), and the
SQLite audit store: commands, error replies, events stored exactly once with MAC and chain checked,
refusals, 64 KiB of garbage, a board restart (socket closed) and reconnection."""

import io
import json
import socket
import threading
import time
from pathlib import Path

import pytest

from host_tools.audit import AuditStore
from host_tools.errors import ShoeError
from host_tools.hoststate import parse_floor
from host_tools.link import ShoeLink
from shoe.link.endpoint import Endpoint
from tests.host_tools.link.fakeshoe import KEY, SUP, FakeShoe
from tests.support import wait_for


@pytest.fixture
def shoe(tmp_path):
    s = FakeShoe(tmp_path / "board")
    yield s
    s.close()


@pytest.fixture
def audit(tmp_path):
    a = AuditStore(tmp_path / "audit.sqlite")
    yield a
    a.close()


@pytest.mark.clause("rules:3-supervisor-ack")
def test_command_events_and_audit(shoe, audit):
    with ShoeLink(shoe.url, KEY, supervisor_key=SUP, audit=audit) as link:
        link.open(timeout=10)
        assert link.shoe_id == "T1"
        assert link.command("status")["eseq"] == 0
        link.command("emit", {"n": 30})
        got = [link.next_event(5) for _ in range(30)]
        assert [e[1]["n"] for e in got] == list(range(1, 31))
        assert [e[2] for e in got] == list(range(1, 31))
        with pytest.raises(ShoeError) as e:
            link.command("explode", {})
        assert e.value.reason == "unknown_command" and "unknown_command" in str(e.value)
        link.supervisor_key = b"w" * 32  # a key the shoe does not have: no role
        with pytest.raises(ShoeError) as e:
            link.command("ack_error", {"id": 4})
        assert e.value.reason == "bad_mac"
        link.supervisor_key = SUP
        before = link.ep.ctr
        rep = link.command("ack_error", {"id": 4}, supervisor=True)
        # the reply names the request's counter (later frames, e.g. acks, may follow it at once)
        assert rep["acked"] == 4 and before < rep["re"] <= link.ep.ctr, (rep, before, link.ep.ctr)
        assert wait_for(lambda: link.command("status")["outbox"] == 0)
    evs = audit.events("T1")
    assert [e["eseq"] for e in evs] == list(range(1, 32))
    assert all(e["chain"] == "ok" for e in evs)
    rep = audit.verify("T1", KEY)
    assert rep["events"] == 31 and not (rep["bad_mac"] or rep["broken"] or rep["gaps"])
    assert audit.verify("T1", b"w" * 32)["bad_mac"] == list(range(1, 32))


def test_a_reply_that_does_not_come_says_what_the_link_looked_like(shoe):
    """A time-out names the link's state (a loaded run's failure said only "no reply")."""
    with ShoeLink(shoe.url, KEY) as link:
        link.open(timeout=10)
        link.command("status")
        with pytest.raises(ShoeError) as e:
            link.command("no_reply", timeout=0.5)
        msg = str(e.value)
        assert msg.startswith("no_reply: no reply from the shoe within 0.5 s (link up, srtt ")
        assert "rto 300 ms, 0 new session(s) meanwhile, 0 retransmitted, 0 queued)" in msg, msg


def test_board_restart_reconnects_and_nothing_is_lost_or_doubled(shoe, audit):
    with ShoeLink(shoe.url, KEY, audit=audit) as link:
        link.open(timeout=10)
        link.command("emit", {"n": 10})
        assert wait_for(lambda: audit.last_eseq("T1") == 10)
        shoe.reboots.set()  # the board restarts: the socket closes, the journal is reopened
        assert wait_for(lambda: not shoe.reboots.is_set())
        link.command("emit", {"n": 10}, timeout=15)
        assert wait_for(lambda: audit.last_eseq("T1") == 20)
        assert link.reconnects >= 1
        assert link.command("status")["boot"] == 2
    assert [e["eseq"] for e in audit.events("T1")] == list(range(1, 21))
    assert [e["body"]["n"] for e in audit.events("T1")] == list(range(1, 21))


def test_a_new_host_process_does_not_store_events_twice(shoe, audit):
    with ShoeLink(shoe.url, KEY, audit=audit) as link:
        link.open(timeout=10)
        link.ep.auto_ack = False  # it stores events but dies before acknowledging them
        link.command("emit", {"n": 5})
        assert wait_for(lambda: audit.last_eseq("T1") == 5)
    with ShoeLink(shoe.url, KEY, audit=audit) as link:
        link.open(timeout=10)
        assert link.next_event(0.5) is None  # the re-sent 1..5 were dropped: the store had them
        assert wait_for(lambda: link.command("status")["outbox"] == 0)
    assert [e["eseq"] for e in audit.events("T1")] == [1, 2, 3, 4, 5]


def test_64k_of_garbage_then_a_normal_status_request(shoe):
    s = socket.create_connection(("127.0.0.1", int(shoe.url.rsplit(":", 1)[1])))
    import random

    rng = random.Random(3)
    s.sendall(bytes(rng.randrange(256) for _ in range(65536)))
    time.sleep(0.2)  # let the board swallow it before this connection goes
    s.close()
    with ShoeLink(shoe.url, KEY) as link:
        link.open(timeout=10)
        assert link.command("status")["eseq"] == 0
    assert shoe.ep.errors().get("frame_crc", 0) + shoe.ep.errors().get("frame_cobs", 0) > 0


def test_wrong_key_and_wrong_peer_are_clear_errors(shoe):
    with ShoeLink(shoe.url, b"w" * 32) as link:
        with pytest.raises(ShoeError) as e:
            link.open(timeout=2)  # a refusal only counts at the deadline (it is not authenticated)
        assert "key does not match" in str(e.value)
    with ShoeLink("loop://", KEY) as link:  # talking to ourselves: a host, not a shoe
        with pytest.raises(ShoeError) as e:
            link.open(timeout=1.5)
        assert "not a shoe" in str(e.value)


def test_no_board_is_a_clear_error():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with ShoeLink("socket://127.0.0.1:%d" % port, KEY) as link:
        with pytest.raises(ShoeError) as e:
            link.open(timeout=1)
        assert "no answer" in str(e.value)


def test_audit_store_once_tamper_detection_and_export(tmp_path):
    from host_tools.link.host import HostEndpoint
    from host_tools.sim.memstore import MemoryStore

    st = MemoryStore()
    shoe_ep = Endpoint("shoe", KEY, store=st, shoe_id="A1")
    host = HostEndpoint(KEY)
    got = []
    for i in range(4):
        shoe_ep.send("round_result" if i % 2 else "card", {"i": i, "raw": b"\x01\x02"})
    for t in range(0, 400, 10):
        got += host.receive(shoe_ep.transmit(t), t)
        shoe_ep.receive(host.transmit(t), t)
    a = AuditStore(tmp_path / "a.sqlite")
    assert [a.store("A1", e, k, b, m) for k, b, e, m in got] == ["new"] * 4
    assert a.store("A1", got[0][2], got[0][0], got[0][1], got[0][3]) == "duplicate"
    assert [r["eseq"] for r in a.rounds("A1")] == [2, 4]
    out = io.StringIO()
    assert a.export(out, "jsonl", "A1") == 4
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert lines[0]["body"] == {"i": 0, "raw": "0102"} and lines[0]["chain"] == "ok"
    out = io.StringIO()
    a.export(out, "csv", "A1", kinds=["card"])
    assert out.getvalue().splitlines()[0].startswith("shoe,eseq,kind")
    assert len(out.getvalue().splitlines()) == 3
    # someone deletes event 2 and edits event 3 in the database: verify says so
    a._db.execute("DELETE FROM events WHERE eseq=2")
    a._db.execute(
        "UPDATE events SET payload=? WHERE eseq=3", (got[2][3]["payload"][:-1] + b"\x00",)
    )
    a._db.commit()
    rep = a.verify("A1", KEY)
    assert rep["gaps"] == [3] and rep["bad_mac"] == [3]
    # an event arriving after a gap is marked as such on arrival
    b = AuditStore(tmp_path / "b.sqlite")
    assert b.store("A1", got[1][2], got[1][0], got[1][1], got[1][3]) == "new"
    assert b.events("A1")[0]["chain"] == "gap"
    b.store("A1", got[2][2], got[2][0], got[2][1], dict(got[2][3], prev=b"\x00" * 16))
    assert b.events("A1")[1]["chain"] == "broken"


def test_an_audit_store_failure_stops_the_link_before_acknowledging(shoe, audit):
    with ShoeLink(shoe.url, KEY, audit=audit) as link:
        link.open(timeout=10)
        link.command("emit", {"n": 3})
        assert wait_for(lambda: audit.last_eseq("T1") == 3)
        assert wait_for(lambda: link.command("status")["outbox"] == 0)  # acknowledged
        audit._db.close()  # the disk is gone
        with pytest.raises(ShoeError) as e:
            link.command("emit", {"n": 2})  # its events come first: they cannot be stored
        assert "audit store failed" in str(e.value) and link.fatal
        with pytest.raises(ShoeError):
            link.command("status", timeout=2)
    time.sleep(0.5)
    assert [e for e, _ in shoe.j.outbox()] == [4, 5]  # unstored, so never acknowledged
    audit._db = __import__("sqlite3").connect(str(audit.path), check_same_thread=False)


def test_a_shoe_whose_counter_went_back_is_refused_by_a_later_host_process(tmp_path, audit):
    """The counter floor outlives the host process: it is kept beside the audit store."""
    first = FakeShoe(tmp_path / "board")
    try:
        with ShoeLink(first.url, KEY, audit=audit) as link:
            link.open(timeout=10)
            for _ in range(3):
                link.command("status")
            floor = Path(str(audit.path) + ".counters.json")
            assert wait_for(
                lambda: parse_floor(floor.read_bytes())["shoes"]["T1"]["ctr"] == link.ep.ctr
            )
    finally:
        first.close()
    wiped = FakeShoe(tmp_path / "wiped")  # the same shoe id, its journal gone: counter 0
    try:
        with ShoeLink(wiped.url, KEY, audit=audit) as link:
            with pytest.raises(ShoeError) as e:
                link.open(timeout=10)
            assert "command counter went back" in str(e.value)
        assert wiped.j.ctr == 0  # and nothing was sent to it
    finally:
        wiped.close()


def _events(shoe_id, n, key=KEY):
    """n events of a shoe (its own Endpoint) as the host delivers them (kind, body, eseq, meta)"""
    from host_tools.link.host import HostEndpoint
    from host_tools.sim.memstore import MemoryStore

    shoe_ep = Endpoint("shoe", key, store=MemoryStore(), shoe_id=shoe_id)
    host = HostEndpoint(key)
    got = []
    for i in range(n):
        shoe_ep.send("card", {"i": i})
    for t in range(0, 600, 10):
        got += host.receive(shoe_ep.transmit(t), t)
        shoe_ep.receive(host.transmit(t), t)
    assert [e for k, b, e, m in got] == list(range(1, n + 1))
    return got


def test_verify_catches_one_shoes_history_relabelled_as_anothers_with_shared_keys(tmp_path):
    """Issue 18: two shoes provisioned with the same key. Someone copies shoe A1's stored
    events into the audit store under shoe B2 (or a gateway publishes them so): every event's
    MAC names A1, so `verify --shoe B2` reports them all."""
    a = AuditStore(tmp_path / "a.sqlite")
    for k, b, e, m in _events("A1", 5):
        a.store("A1", e, k, b, m)
    a._db.execute(
        "INSERT INTO events SELECT 'B2', eseq, kind, body, prev, hash, mac, payload, "
        "chain, received FROM events WHERE shoe='A1'"
    )
    a._db.commit()
    assert a.verify("A1", KEY)["bad_mac"] == []
    rep = a.verify("B2", KEY)
    assert rep["bad_mac"] == [1, 2, 3, 4, 5] and rep["unbound"] == []


def test_events_stored_under_protocol_2_keep_verifying(tmp_path):
    """An audit store written before protocol 3 holds events whose MAC names no shoe id (and a
    shoe's outbox may still hold such events when its firmware is updated): they verify, and
    are listed as `unbound`; after a protocol 3 event, one of them cannot be genuine."""
    from host_tools.link.host import MSG_TAG_V2, HostEndpoint
    from shoe.link.message import GENESIS, seal

    a = AuditStore(tmp_path / "a.sqlite")
    prev = GENESIS
    for e in (1, 2, 3):  # what a protocol 2 shoe sealed, stored by a protocol 2 host
        p, h = seal(KEY, MSG_TAG_V2, ["card", {"i": e}, e, prev], True)
        a.store(
            "OLD", e, "card", {"i": e}, {"prev": prev, "hash": h, "mac": p[-16:], "payload": p}
        )
        prev = h
    rep = a.verify("OLD", KEY)
    assert rep["bad_mac"] == [] and rep["unbound"] == [1, 2, 3] and rep["broken"] == []
    # the same shoe, updated: its outbox still holds a protocol 2 event (4), then new ones
    from host_tools.sim.memstore import MemoryStore

    st = MemoryStore()
    p4, h4 = seal(KEY, MSG_TAG_V2, ["card", {"i": 4}, 4, prev], True)
    st.outbox_add([(4, p4, h4)])
    shoe_ep = Endpoint("shoe", KEY, store=st, shoe_id="OLD")
    shoe_ep.send("card", {"i": 5})
    host = HostEndpoint(KEY, on_peer=lambda h: 3)
    got = []
    for t in range(0, 600, 10):
        got += host.receive(shoe_ep.transmit(t), t)
        shoe_ep.receive(host.transmit(t), t)
    assert [e for k, b, e, m in got] == [4, 5] and host.errors()["legacy_event"] == 1
    for k, b, e, m in got:
        a.store("OLD", e, k, b, m)
    rep = a.verify("OLD", KEY)
    assert rep["bad_mac"] == [] and rep["unbound"] == [1, 2, 3, 4] and rep["broken"] == []
    # a protocol 2 event after a protocol 3 one: not something a shoe ever sends
    p6, h6 = seal(KEY, MSG_TAG_V2, ["card", {"i": 6}, 6, got[-1][3]["hash"]], True)
    a.store(
        "OLD",
        6,
        "card",
        {"i": 6},
        {"prev": got[-1][3]["hash"], "hash": h6, "mac": p6[-16:], "payload": p6},
    )
    assert a.verify("OLD", KEY)["bad_mac"] == [6]


def test_a_protocol_2_shoe_is_refused_as_another_version():
    """A shoe still running protocol 2 cannot read our frames (their version byte is 3), nor we
    its REFUSE; its frames' version byte says what it is, and open() says so."""
    from shoe.link import codec, frame

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    stop = threading.Event()

    def v2_shoe():
        conn, _ = srv.accept()
        conn.settimeout(0.05)
        hello = {
            "v": 2,
            "role": "shoe",
            "sid": 1,
            "n": b"n" * 8,
            "pn": b"",
            "up": False,
            "id": "OLD1",
            "ctr": 0,
            "eseq": 0,
        }
        while not stop.is_set():
            try:
                conn.recv(4096)
            except TimeoutError:
                pass
            except OSError:
                break
            try:
                conn.sendall(frame.build(frame.HELLO, 0, 0, codec.encode(hello), version=2))
            except OSError:
                break
        conn.close()

    th = threading.Thread(target=v2_shoe, daemon=True)
    th.start()
    try:
        with ShoeLink("socket://127.0.0.1:%d" % srv.getsockname()[1], KEY) as link:
            with pytest.raises(ShoeError) as e:
                link.open(timeout=1.5)
        assert "incompatible protocol version" in str(e.value) and "protocol 2" in str(e.value)
    finally:
        stop.set()
        th.join(2)
        srv.close()


def test_events_and_the_counter_floor_are_kept_together(shoe, audit):
    """Every batch of events and the floor go into the store's host record in one commit, and
    the floor file follows it: both name the store's last event and the counters seen."""
    with ShoeLink(shoe.url, KEY, supervisor_key=SUP, audit=audit) as link:
        link.open(timeout=10)
        link.command("emit", {"n": 12})
        assert wait_for(lambda: audit.last_eseq("T1") == 12)
        link.command("status")
        ctr = link.ep.ctr_seen["T1"]
        assert wait_for(lambda: audit.host_record("T1")["ctr"] == ctr)
        rec = audit.host_record("T1")
        assert rec["eseq"] == 12 and rec["head"] == audit.hash_at("T1", 12)
        floor = Path(str(audit.path) + ".counters.json")
        assert wait_for(lambda: parse_floor(floor.read_bytes())["shoes"]["T1"] == rec)


def test_a_damaged_host_state_refuses_at_once_and_sends_nothing(shoe, audit):
    with ShoeLink(shoe.url, KEY, audit=audit) as link:
        link.open(timeout=10)
        link.command("emit", {"n": 2})
        assert wait_for(lambda: audit.host_record("T1") and audit.host_record("T1")["eseq"] == 2)
    ctr = shoe.j.ctr
    audit._db.execute("UPDATE host_record SET ctr = 0")  # someone lowers the floor
    audit._db.commit()
    t0 = time.monotonic()
    with ShoeLink(shoe.url, KEY, audit=audit) as link:
        with pytest.raises(ShoeError) as e:
            link.open(timeout=20)
    assert time.monotonic() - t0 < 10  # refused at the handshake
    assert e.value.host_state.reason == "store_record" and str(audit.path) in str(e.value)
    assert e.value.reason is None  # the host's own refusal
    assert shoe.j.ctr == ctr  # no command reached the shoe


def test_a_floor_file_that_cannot_be_written_stops_the_link_before_acknowledging(shoe, audit):
    with ShoeLink(shoe.url, KEY, audit=audit) as link:
        link.open(timeout=10)
        link.command("emit", {"n": 3})
        assert wait_for(lambda: link.command("status")["outbox"] == 0)  # stored, acknowledged
        Path(str(audit.path) + ".counters.json.tmp").mkdir()  # the next write cannot happen
        with pytest.raises(ShoeError) as e:
            link.command("emit", {"n": 2})
        assert "[floor_write]" in str(e.value) and link.fatal
    assert wait_for(lambda: [e for e, _ in shoe.j.outbox()] == [4, 5])  # never acknowledged
    # the store committed that batch with its record; the file stayed one write behind
    rec = audit.host_record("T1")
    floor = Path(str(audit.path) + ".counters.json")
    assert rec["eseq"] == audit.last_eseq("T1") >= 4
    assert parse_floor(floor.read_bytes())["shoes"]["T1"]["gen"] == rec["gen"] - 1
    with ShoeLink(shoe.url, KEY, audit=audit) as link:  # still unwritable: refused
        with pytest.raises(ShoeError) as e:
            link.open(timeout=10)
        assert e.value.host_state.reason == "floor_write"
    Path(str(audit.path) + ".counters.json.tmp").rmdir()
    with ShoeLink(shoe.url, KEY, audit=audit) as link:  # writable again: caught up
        link.open(timeout=10)
        assert wait_for(lambda: not shoe.j.outbox() and audit.last_eseq("T1") == 5)
    assert parse_floor(floor.read_bytes())["shoes"]["T1"] == audit.host_record("T1")


def test_a_durable_reply_raises_the_counter_floor_at_once(shoe, audit):
    """A reply journalled as an event (eseq > 0) says the shoe accepted its counter just as a
    volatile reply does: the floor follows it without waiting for the next handshake."""
    with ShoeLink(shoe.url, KEY, supervisor_key=SUP, audit=audit) as link:
        link.open(timeout=10)
        rep = link.command("ack_error", {"ids": []}, supervisor=True)
        assert rep["re"] > 0
        assert wait_for(lambda: audit.host_record("T1")["ctr"] == rep["re"])


def test_the_first_answer_to_a_command_wins():
    """A command re-sent in a new session draws `replay` after the shoe's own reply (carried over
    from the old session, docs/protocol.md section 3): the caller gets the reply."""
    link = ShoeLink("loop://", KEY)
    ev = threading.Event()
    link._waiting[7] = ev
    link._dispatch(
        [
            ("reply", {"re": 7, "ok": True, "n": 1}, 0, None),
            ("error", {"re": 7, "reason": "replay"}, 0, None),
        ]
    )
    assert ev.is_set() and link._replies[7] == ("reply", {"re": 7, "ok": True, "n": 1})


@pytest.mark.parametrize("after_ack", [False, True], ids=["before-ack", "after-ack"])
def test_a_command_whose_reply_a_restart_lost_ends_at_once_and_costs_no_resync(shoe, after_ack):
    """Issue 19 (liveness): the shoe accepts and executes a command, its volatile reply is lost
    to a power cut (before or after the command's frame was acknowledged: after, the host does
    not send it again), and the board comes back. The host learns of the restart from the new
    session's HELLO (its boot count) and ends that command with reason `restarted` within a few
    seconds, not after its whole timeout, and it does not count toward a resync. A durable reply
    still comes back from the journal and answers its command."""
    with ShoeLink(shoe.url, KEY, reconnect_s=0.05) as link:
        link.open(timeout=10)
        t0 = time.monotonic()
        with pytest.raises(ShoeError) as e:
            link.command("reply_then_crash", {"after_ack": after_ack}, timeout=60)
        assert e.value.reason == "restarted" and "restarted (boot 2)" in str(e.value)
        assert time.monotonic() - t0 < 15  # not the 60 s timeout
        assert link._timeouts == 0 and link.resyncs == 0
        assert link.command("status")["boot"] == 2
        ans = link.command(
            "reply_then_crash", {"durable": True, "after_ack": after_ack}, timeout=60
        )
        assert ans["done"] > 0  # the journalled reply, not a `restarted` error
        assert link.command("status")["boot"] == 3


@pytest.mark.parametrize("reason", ["replay", "restarted"])
def test_a_question_whose_answer_a_restart_took_is_asked_again(monkeypatch, reason):
    """A read-only command (status, recall, attest) refused as a `replay` in the new session, or
    ended as `restarted`, is sent again with a new counter while its time lasts (a loaded run's
    `shoectl table status` through the gateway failed so); a command that acts is not: its
    outcome is in the shoe's events."""
    link = ShoeLink("loop://", KEY)
    sent = []

    def queue_command(kind, deadline, make):
        sent.append(kind)
        return len(sent), threading.Event(), 0

    def await_reply(kind, ctr, ev, sessions, deadline, timeout):
        if ctr == 1:
            raise ShoeError("%s refused by the shoe: ..." % kind, reason)
        return {"re": ctr, "ok": True}

    monkeypatch.setattr(link, "_queue_command", queue_command)
    monkeypatch.setattr(link, "_await_reply", await_reply)
    assert link.command("status", timeout=5) == {"re": 2, "ok": True} and sent == ["status"] * 2
    del sent[:]
    with pytest.raises(ShoeError) as e:
        link.command("open_round", {"seats": {}}, timeout=5)
    assert e.value.reason == reason and sent == ["open_round"]
    del sent[:]
    with pytest.raises(ShoeError):  # no time left: the refusal itself
        link.command("status", timeout=0)
    assert sent == ["status"]


def test_rtscts_opens_a_serial_device_with_hardware_flow_control(monkeypatch):
    """`--rtscts` (ShoeLink(rtscts=True)): a serial device is opened with RTS/CTS so the host
    waits while the shoe's RTS says its receive FIFO is full (the Pico's wiring, GP3); without
    it the port opens as before. The commands that open a port themselves take the option."""
    from host_tools import cli
    from host_tools.link import shoelink

    opened = []
    monkeypatch.setattr(
        shoelink.serial, "serial_for_url", lambda url, **kw: opened.append((url, kw))
    )
    for rtscts in (True, False):
        link = shoelink.ShoeLink("/dev/ttyUSB7", b"k" * 16, rtscts=rtscts)
        link._open_port("/dev/ttyUSB7")
    assert opened[0][1]["rtscts"] is True and opened[0][1]["exclusive"] is True
    assert "rtscts" not in opened[1][1]
    parser = cli.build_parser()
    for argv in (
        ["status", "--port", "/dev/ttyUSB7", "--demo-keys", "--rtscts"],
        ["gateway", "--port", "/dev/ttyUSB7", "--demo-keys", "--rtscts"],
        ["monitor", "--port", "/dev/ttyUSB7", "--demo-keys", "--rtscts"],
        ["verify", "--port", "/dev/ttyUSB7", "--demo-keys", "--rtscts"],
        ["trust", "--port", "/dev/ttyUSB7", "--demo-keys", "--rtscts"],
    ):
        assert parser.parse_args(argv).rtscts is True, argv
