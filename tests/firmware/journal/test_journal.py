"""The journal: recovery from a torn write at every byte of its last record, compaction, the
outbox ring, round recall, provisioning, and exactly-once delivery across simulated power cuts."""

import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools.link.host import make_endpoint
from shoe.journal import log
from shoe.journal.journal import Journal, JournalError
from shoe.journal.outbox import Outbox
from shoe.link.message import GENESIS

KEY = b"k" * 32


def snapshot(j):
    return {"state": j.state, "ctr": j.ctr, "eseq": j.eseq, "chain": j.chain, "outbox": j.outbox()}


def fill(root):
    j = Journal(str(root))
    ep = make_endpoint("shoe", KEY, store=j, shoe_id="T")
    for i in range(6):
        ep.send_many([("card", {"n": i}), ("pos", {"n": i, "to": "seat1"})], state={"n": i})
    j.set_ctr(2)
    j.outbox_ack(4, 3)
    j.outbox_add([], state={"n": 6, "phase": "settle"})  # a state change alone
    return j


@pytest.mark.parametrize("mode", ["truncate", "corrupt"])
def test_torn_write_at_every_byte_of_the_last_record_recovers_the_previous_state(tmp_path, mode):
    root = tmp_path / "a"
    root.mkdir()
    j = fill(root)
    j.close()
    path = root / "journal.log"
    before = path.read_bytes()
    # the last operation: one more atomic event + state record
    j = Journal(str(root))
    want = snapshot(j)
    size0 = path.stat().st_size
    ep = make_endpoint("shoe", KEY, store=j, shoe_id="T")
    ep.send_many([("round_result", {"round": 1, "net": 40})], state={"n": 7})
    j.close()
    marks = (root / "marks").read_bytes()
    full = path.read_bytes()
    last = full[size0:]
    assert len(last) > 40 and full.startswith(before)
    for k in range(len(last)):
        if mode == "truncate":
            torn = full[: size0 + k]
        else:  # the record is all there but one byte of it is wrong
            b = bytearray(full)
            b[size0 + k] ^= 0x5A
            torn = bytes(b)
        path.write_bytes(torn)
        (root / "marks").write_bytes(marks)
        r = Journal(str(root))
        got = snapshot(r)
        torn = mode == "corrupt" or k > 0
        # after any discard the command counter floor rises to the marks' ceiling (a command
        # captured before the damage is never accepted again)
        assert got["ctr"] > want["ctr"] if torn else got["ctr"] == want["ctr"], k
        assert r.boot == j.boot + 1
        # a record that is all there but does not check is damage, not a tear (its events may
        # have been sent): reported, and the event sequence goes on above every number it may
        # have used; a wrong length that claims more than the file holds reads as a cut write
        rec = r.recovery
        if mode == "corrupt" and (k != 2 or rec is not None):
            assert rec["tail"] and rec["jump"] == [want["eseq"], got["eseq"]], k
            assert got["eseq"] > want["eseq"] + 1 and rec["state"] == "stale", k
            assert got["state"] == want["state"] and got["outbox"] == want["outbox"], k
        else:
            assert rec is None  # a torn tail is not corruption
            assert got == dict(want, ctr=got["ctr"]), k
        if k > 0:
            assert r.recovered_torn == 1
        # the torn tail is gone: a new record appended now is found after another reset
        r.outbox_add([], state={"after": k})
        r.close()
        again = Journal(str(root))
        assert again.state == {"after": k} and again.outbox() == want["outbox"]
        again.close()


def test_an_intact_last_record_is_kept(tmp_path):
    j = fill(tmp_path)
    want = snapshot(j)
    j.close()
    assert snapshot(Journal(str(tmp_path))) == want


def test_compaction_keeps_the_log_bounded_and_loses_nothing(tmp_path):
    j = Journal(str(tmp_path), max_bytes=4096)
    ep = make_endpoint("shoe", KEY, store=j, shoe_id="T")
    sizes = []
    for i in range(600):
        ep.send_many(
            [("card", {"n": i, "pad": "x" * 30})], state={"n": i, "hist": list(range(i % 20))}
        )
        if i % 3 == 0:
            j.outbox_ack(j.eseq - 5, i + 1)  # the host keeps up, 5 behind
        sizes.append(os.path.getsize(tmp_path / "journal.log"))
    assert j.compactions >= 5
    assert max(sizes) <= 4096 + 200
    want = snapshot(j)
    j.close()
    r = Journal(str(tmp_path), max_bytes=4096)
    assert snapshot(r) == want
    assert [e for e, p in r.outbox()] == list(
        range(want["eseq"] - len(want["outbox"]) + 1, want["eseq"] + 1)
    )


def test_interrupted_compaction_is_resolved_at_boot(tmp_path):
    j = fill(tmp_path)
    want = snapshot(j)
    j.close()
    path = str(tmp_path / "journal.log")
    # a complete .new (ends with the Z marker) whose rename did not happen: adopted
    log.rewrite(path + ".x", Journal.__new__(Journal)._snapshot.__func__(_Snap(want)))
    os.rename(path + ".x", path + ".new")
    r = Journal(str(tmp_path))
    assert snapshot(r) == want and not os.path.exists(path + ".new")
    r.close()
    # an incomplete .new (power cut while writing it): removed, the log is intact
    with open(path + ".new", "wb") as f:
        f.write(log.pack(b"\x82aX\xa0")[:5])
    r = Journal(str(tmp_path))
    assert snapshot(r) == want and not os.path.exists(path + ".new")


class _Snap:
    """Quacks like a Journal for _snapshot()."""

    def __init__(self, s):
        self.ctr, self.eseq, self.chain = s["ctr"], s["eseq"], s["chain"]
        self.boot, self._st = 1, s["state"]
        ob = Outbox()
        for e, p in s["outbox"]:
            ob.add(e, p)
        self._out = ob

    def outbox_first(self):
        return Journal.outbox_first(self)


def test_outbox_full_writes_nothing(tmp_path):
    j = Journal(str(tmp_path), outbox_limit=4, outbox_bytes=2048)
    ep = make_endpoint("shoe", KEY, store=j, shoe_id="T")
    ep.send_many([("card", {"n": i}) for i in range(4)])
    w = j.writes
    with pytest.raises(Exception) as e:
        ep.send("card", {"n": 9})
    assert e.value.reason == "outbox_full" and j.writes == w and j.eseq == 4
    with pytest.raises(JournalError):
        j.outbox_add([(5, b"x" * 3000, GENESIS)])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(1, 700), st.integers(-4, -1), st.just(0)), max_size=80))
def test_outbox_ring_matches_a_plain_list(ops):
    """... with the jump after a damaged journal (0: the next number skips ahead; one hole at
    most in the outbox, a second one while it is held is refused)."""
    ob = Outbox(2048, 8)
    model, eseq = [], 0
    for op in ops:
        if op == 0:
            held = [e for e, _ in model]
            gaps = sum(1 for a, b in zip(held, held[1:]) if b != a + 1)
            if gaps and eseq == model[-1][0]:
                with pytest.raises(ValueError):
                    ob.add(eseq + 5, b"j")
            else:
                eseq += 5
        elif op > 0:
            p = bytes([eseq % 251 + 1]) * op
            if ob.fits_all([op]):
                assert ob.fits(op)
                eseq += 1
                ob.add(eseq, p)
                model.append((eseq, p))
            else:
                assert not ob.fits(op)
                with pytest.raises(ValueError):
                    ob.add(eseq + 1, p)
        elif model:
            upto = model[min(-op, len(model)) - 1][0]
            ob.prune(upto)
            model = [m for m in model if m[0] > upto]
        assert ob.items() == model
        assert ob.count == len(model) and (not model or ob.last() == model[-1][0])
        for e in range(eseq + 2):  # every number: its payload, or None (a hole, pruned)
            got = ob.get(e)
            assert (bytes(got) if got is not None else None) == dict(model).get(e), e
        # whatever is held is reachable, and what fits in one go fits one by one
        assert sum(len(p) for _, p in model) <= 2048


@pytest.mark.clause("684a.11(e)")
def test_rounds_keep_at_least_the_last_hundred_and_survive_torn_writes(tmp_path):
    j = Journal(str(tmp_path))
    for r in range(1, 251):
        j.add_round(r, "round_result", {"round": r, "net": r * 10})
    nums = j.round_numbers()
    assert nums[-100:] == list(range(151, 251)) and len(nums) <= 200
    assert j.round(250) == ("round_result", {"round": 250, "net": 2500})
    assert j.round(50) is None
    j.close()
    # tear the newest round record
    seg = max((tmp_path / n for n in ("rounds.0", "rounds.1")), key=lambda p: p.stat().st_mtime)
    seg.write_bytes(seg.read_bytes()[:-3])
    r = Journal(str(tmp_path))
    assert r.round_numbers()[-1] == 249 and r.round(249)[1]["net"] == 2490
    r.add_round(251, "round_void", {"round": 251, "reason": "power_loss"})
    r.close()
    want = ("round_void", {"round": 251, "reason": "power_loss"})
    assert Journal(str(tmp_path)).round(251) == want


def test_exactly_once_across_two_hundred_power_cuts(tmp_path):
    """A shoe application that emits numbered events (state = how many), is killed at random
    instants (its journal torn at a random byte of the record being written, or not), restarts
    from its journal, while a host keeps receiving: every event arrives exactly once, in order."""
    rng = random.Random(7)
    root = str(tmp_path)
    host = make_endpoint("host", KEY, sid=1)
    got = []
    now = 0
    cuts = 0
    total = 600
    while cuts < 200 or (got and got[-1] < total):
        j = Journal(root, max_bytes=8192)
        shoe = make_endpoint("shoe", KEY, store=j, shoe_id="P")
        n = (j.state or {}).get("n", 0)
        life = rng.randrange(5, 60)
        for _ in range(life):
            now += 20
            if n < total and shoe.store.outbox_room() > 2 and rng.random() < 0.5:
                k = min(rng.randrange(1, 3), total - n)
                shoe.send_many([("card", {"n": n + i + 1}) for i in range(k)], state={"n": n + k})
                n += k
            for m in host.receive(shoe.transmit(now), now):
                assert m[0] == "card", m
                got.append(m[1]["n"])
            shoe.receive(host.transmit(now), now)
        # power cut: maybe in the middle of writing the next record
        j.close()
        path = os.path.join(root, "journal.log")
        if rng.random() < 0.5:
            size = os.path.getsize(path)
            extra = log.pack(b"\x83aO\x80\xf6")
            with open(path, "ab") as f:
                f.write(extra[: rng.randrange(1, len(extra))])
            assert os.path.getsize(path) > size
        cuts += 1
        if cuts > 2000:
            break
    assert got == list(range(1, total + 1))
    assert cuts >= 200


def test_a_write_that_fails_part_way_does_not_hide_later_records(tmp_path, monkeypatch):
    j = Journal(str(tmp_path))
    j.outbox_add([], state={"n": 1})
    real = log.Appender.append

    def half(self, payload):
        rec = log.pack(payload)
        self.f.write(rec[: len(rec) // 2])
        self.f.flush()
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(log.Appender, "append", half)
    with pytest.raises(OSError):
        j.outbox_add([], state={"n": 2})
    assert j.state == {"n": 1}  # memory follows the flash: the failed write changed nothing
    monkeypatch.setattr(log.Appender, "append", real)
    j.outbox_add([], state={"n": 3})  # the space is back
    j.close()
    r = Journal(str(tmp_path))
    assert r.state == {"n": 3} and r.recovered_torn == 0


def test_a_round_write_that_fails_part_way_is_repaired(tmp_path, monkeypatch):
    j = Journal(str(tmp_path))
    j.add_round(1, "round_result", {"round": 1})
    real = log.Appender.append

    def half(self, payload):
        self.f.write(log.pack(payload)[:7])
        self.f.flush()
        raise OSError(5, "I/O error")

    monkeypatch.setattr(log.Appender, "append", half)
    with pytest.raises(OSError):
        j.add_round(2, "round_result", {"round": 2})
    monkeypatch.setattr(log.Appender, "append", real)
    j.add_round(3, "round_void", {"round": 3})
    j.close()
    r = Journal(str(tmp_path))
    assert r.round_numbers() == [1, 3] and r.round(3) == ("round_void", {"round": 3})
    assert r.recovered_torn == 0


_bodies = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.text(max_size=12)
    | st.binary(max_size=12),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=12,
)


@settings(deadline=None)
@given(
    st.text(min_size=1, max_size=16),
    _bodies,
    st.integers(1, 2**32),
    st.binary(min_size=16, max_size=16),
)
def test_the_chain_head_of_every_sealed_event_follows_from_its_payload(kind, body, eseq, prev):
    """The journal writes no chain head beside an event's payload (16 bytes a record): it takes
    the head from the payload after a reboot (chain_head). That holds only while the Endpoint's
    head is chain_head(payload) for every event it seals."""
    from shoe.journal.journal import chain_head
    from shoe.link.message import seal_message

    payload, head = seal_message(KEY, kind, body, eseq, prev)
    assert chain_head(payload) == head


def test_the_chain_head_follows_from_the_payload_under_micropython():
    from tests.mpy import json_lines, run_code

    code = (
        "import json\nfrom shoe.journal.journal import chain_head\n"
        "from shoe.link.message import seal_message\n"
        "bodies = [None, {'round': 3, 'card': 'As'}, [1, 'x' * 40], b'\\x00' * 30]\n"
        "for i, b in enumerate(bodies):\n"
        "    p, h = seal_message(b'k' * 32, 'card', b, i + 1, bytes(16))\n"
        "    print(json.dumps({'same': chain_head(p) == h}))\n"
    )
    # from source (compiled on the heap): more than the device's 64 KB data heap
    assert json_lines(run_code(code, heap="256k")) == [{"same": True}] * 4


def test_a_dealt_cards_ops_wait_for_idle_but_never_for_whoever_reads_the_state(tmp_path):
    """Ops handed with events (a dealt card's) are written at once and applied to the journal's
    copy of the state later (catch_up/idle): the state, a diff against it, a compaction and a
    reboot all see them."""
    root = str(tmp_path / "j")
    j = Journal(root)
    st = {"table": {"cards": "", "t": 0, "z": [1]}}
    j.outbox_add([], state=st)
    ops = [[[0, 0], "2b", 1], [[0, 1], 7]]  # ranks: table -> cards, t
    j.outbox_add([], ops=ops)
    assert j._pending  # not applied yet ...
    assert j.state == {"table": {"cards": "2b", "t": 7, "z": [1]}}  # ... but the state has them
    j.outbox_add([], ops=[[[0, 0], "3c", 1]])
    j.outbox_add([], state={"table": {"cards": "2b3c", "t": 8, "z": [1]}})  # a diff: t only
    assert j.state == {"table": {"cards": "2b3c", "t": 8, "z": [1]}}
    j.outbox_add([], ops=[[[0, 1], 9]])
    j.compact()  # the snapshot holds the pending op
    j.close()
    assert Journal(root).state == {"table": {"cards": "2b3c", "t": 9, "z": [1]}}
    j2 = Journal(root)
    j2.outbox_add([], ops=[[[0, 1], 10]])
    j2.catch_up()
    assert not j2._pending and j2.state["table"]["t"] == 10


def test_the_repair_module_reads_the_record_format_of_log():
    from shoe.journal import repair

    assert (repair.HEAD, repair.MAGIC, repair.MAX_RECORD, repair._LEGACY_MAX_HI) == (
        log.HEAD,
        log.MAGIC,
        log.MAX_RECORD,
        log._LEGACY_MAX_HI,
    )
