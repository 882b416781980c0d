"""Corruption is not a tear (issue 9), and one bad bit loses nothing (issue 18): at EVERY record
position of the journal, a flipped bit is repaired (the journal recovers exactly); a record
beyond repair (zeroed, garbage) FOLLOWED by good ones is a hole: every good record is kept, the
command counter and event sequence never go back (high-water marks in every record, the marks'
ceilings) and the damage is reported (`recovery`, which the app latches as journal_corrupt);
the same at the tail is a damaged tail, not a torn write: reported, and the event sequence goes
on above every number it may have used. MicroPython runs the same sweep in
tests/firmware/journal/test_journal_micropython.py; tests/firmware/journal/test_damage.py sweeps
every bit and every zeroed tail with a host."""

import random
import struct

import pytest

from shoe.journal import log
from shoe.journal.journal import Journal
from shoe.journal.marks import C_AHEAD, E_AHEAD
from shoe.link.endpoint import Endpoint
from tests.firmware.journal.damage import SOAK

KEY = b"k" * 32


def snap(j):
    return {"state": j.state, "ctr": j.ctr, "eseq": j.eseq, "chain": j.chain, "outbox": j.outbox()}


def records(path):
    """[(offset, length)] of the records of a journal file (new format)."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(data):
        assert data[pos] == log.MAGIC
        n = struct.unpack(">H", data[pos + 1 : pos + 3])[0]
        out.append((pos, log.HEAD + n))
        pos += log.HEAD + n
    return out


def build(root):
    """A journal of one record per operation, every kind of record; returns (kinds, truths):
    kinds[i] is the tag of record i and truths[i] the journal's view right after it."""
    j = Journal(str(root), max_bytes=1 << 20)
    ep = Endpoint("shoe", KEY, store=j, shoe_id="T")
    kinds, truths = ["B"], [snap(j)]

    def did(kind):
        kinds.append(kind)
        truths.append(snap(j))

    ctr = 0
    for i in range(8):
        ep.send_many(
            [("card", {"n": i})], state={"n": i, "cards": "0a" * i, "seen": "%014x" % (1 << i)}
        )
        did("P")
        if i % 3 == 1:
            ctr += 1
            j.set_ctr(ctr)
            did("C")
        if i == 4:
            ctr += 1
            j.outbox_ack(3, ctr)
            did("A")
        if i == 5:
            j.outbox_add([], state={"n": 55, "cards": "0a" * 5, "seen": "%014x" % 99})
            did("P0")  # a state change alone: a "P" record without events
    ep.send_many([("round_result", {"round": 1}), ("hello", {"x": 1})], state={"n": 9})
    did("P")
    j.close()
    return kinds, truths


def damage(data, off, n, how, rnd):
    b = bytearray(data)
    if how == "flip":
        k = off + rnd.randrange(n)
        b[k] ^= 1 << rnd.randrange(8)
    elif how == "zero":
        b[off : off + n] = bytes(n)
    else:
        b[off : off + n] = bytes(rnd.randrange(256) for _ in range(n))
    return bytes(b)


@pytest.mark.parametrize("how", ["flip", "zero", "garbage"])
def test_corruption_at_every_record_keeps_every_good_record(tmp_path, how):
    root = tmp_path / "j"
    root.mkdir()
    kinds, truths = build(root)
    path = root / "journal.log"
    full = path.read_bytes()
    marks = (root / "marks").read_bytes()
    recs = records(str(path))
    assert len(recs) == len(kinds) >= 15
    truth = truths[-1]
    rnd = random.Random(how)
    for i, (off, n) in enumerate(recs):
        path.write_bytes(damage(full, off, n, how, rnd))
        (root / "marks").write_bytes(marks)  # as the shoe left them (boots write marks)
        r = Journal(str(root), max_bytes=1 << 20)
        got = snap(r)
        before = truths[i - 1] if i else {"state": None, "ctr": 0, "eseq": 0, "outbox": []}
        where = (i, kinds[i])
        rec = r.recovery
        if how == "flip":  # repaired: nothing lost, nothing to report
            assert rec is None and r.fixed == 1 and got == truth, where
        elif i == len(recs) - 1:  # a damaged tail: its events may have been sent
            assert rec is not None and rec["tail"] and rec["holes"] == 0, where
            assert rec["state"] == "stale" and got["state"] == before["state"], where
            # above every number used (the boot's mark: E_AHEAD past 0), the outbox kept
            assert got["eseq"] == E_AHEAD and rec["jump"] == [before["eseq"], E_AHEAD], where
            assert got["outbox"] == before["outbox"] and got["ctr"] == C_AHEAD, where
        else:
            assert rec is not None and rec["holes"] == 1 and rec["lost_bytes"] >= n, where
            assert not rec["tail"] and rec["jump"] is None, where
            # never back: the last record is good and carries the high-water marks; the
            # counter floor rises to the marks' ceiling
            assert got["ctr"] == C_AHEAD, where
            assert got["eseq"] == truth["eseq"] and got["chain"] == truth["chain"], where
            # the state: the last one before the hole (later deltas cannot be trusted), unless
            # a full state follows it (record 1 holds the first state whole)
            if i == 0:
                assert rec["state"] == "exact" and got["state"] == truth["state"], where
            else:
                assert rec["state"] == "stale" and got["state"] == before["state"], where
            # the outbox: what follows the lost record is kept byte for byte
            lost = truths[i]["eseq"] if kinds[i] == "P" else 0
            want = [x for x in truth["outbox"] if x[0] > lost]
            if kinds[i] == "A":  # a lost ack only means that events are sent again
                assert got["outbox"][-len(want) :] == want, where
                assert [x[0] for x in got["outbox"]] == list(range(1, truth["eseq"] + 1)), where
            else:
                assert got["outbox"] == want, where
        # the damage is gone: appends are found after another reset, nothing more reported
        r.outbox_add([], state={"after": i})
        r.close()
        again = Journal(str(root), max_bytes=1 << 20)
        assert again.recovery is None and again.state == {"after": i}, where
        assert (again.ctr, again.eseq, again.chain) == (got["ctr"], got["eseq"], got["chain"])
        assert again.outbox() == got["outbox"], where
        again.close()


def test_the_high_water_marks_survive_losing_every_command_record(tmp_path):
    """A zeroed region takes more command records than the margin covers; the event record
    after it still says how far the counter went (remove the marks: the counter goes back)."""
    j = Journal(str(tmp_path), max_bytes=1 << 20)
    for c in range(1, 41):
        j.set_ctr(c)
    ep = Endpoint("shoe", KEY, store=j, shoe_id="T")
    ep.send_many([("card", {"n": 1})])
    j.close()
    path = tmp_path / "journal.log"
    recs = records(str(path))
    start = recs[20][0]  # records 20..40 = C(20)..C(40)
    end = recs[41][0]
    data = bytearray(path.read_bytes())
    data[start:end] = bytes(end - start)
    path.write_bytes(bytes(data))
    r = Journal(str(tmp_path), max_bytes=1 << 20)
    assert r.recovery is not None and r.recovery["holes"] == 1
    assert r.ctr >= 40 and r.eseq == 1
    assert [e for e, _ in r.outbox()] == [1]


def test_a_zeroed_tail_of_more_commands_than_any_margin_never_lets_the_counter_back(tmp_path):
    """The last 30 command records zeroed: each may have been acted upon. The marks' ceiling,
    written before a counter passes it, holds more than the old margin (16) would have (remove
    the ceiling: the counter recovers at 70 + 16 and a captured command is accepted again)."""
    j = Journal(str(tmp_path))
    for c in range(1, 101):
        j.set_ctr(c)
    j.close()
    path = tmp_path / "journal.log"
    start = records(str(path))[-30][0]
    data = bytearray(path.read_bytes())
    data[start:] = bytes(len(data) - start)
    path.write_bytes(bytes(data))
    r = Journal(str(tmp_path))
    assert r.recovery is not None and r.recovery["tail"]
    assert r.ctr >= 100
    ep = Endpoint("shoe", KEY, store=r, shoe_id="T")
    assert ep is not None


def ten_rounds(root):
    j = Journal(str(root))
    for r in range(10):
        j.add_round(r, "round_result", {"round": r})
    j.close()
    return root / "rounds.0"


def test_a_flipped_bit_in_a_round_record_is_repaired(tmp_path):
    """Every 37th bit of the round segment (SHOE_SOAK=full: every bit)."""
    path = ten_rounds(tmp_path)
    full = path.read_bytes()
    for k in range(0, len(full) * 8, 1 if SOAK else 37):
        data = bytearray(full)
        data[k // 8] ^= 1 << (k % 8)
        path.write_bytes(bytes(data))
        r = Journal(str(tmp_path))
        assert r.round_numbers() == list(range(10)) and r.round(9) == (
            "round_result",
            {"round": 9},
        ), k
        r.close()
        path.write_bytes(full)


def test_rounds_keep_every_good_record_after_a_hole(tmp_path):
    path = ten_rounds(tmp_path)
    recs = records(str(path))
    off, n = recs[4]
    data = bytearray(path.read_bytes())
    data[off + 9 : off + 11] = b"\x00\x00"  # beyond repair (one bit would be repaired)
    path.write_bytes(bytes(data))
    r = Journal(str(tmp_path))
    assert r.round_numbers() == [0, 1, 2, 3, 5, 6, 7, 8, 9]
    assert r.round(9) == ("round_result", {"round": 9})
    r.add_round(10, "round_result", {"round": 10})
    r.close()
    assert Journal(str(tmp_path)).round_numbers()[-2:] == [9, 10]


def test_records_only_older_firmware_wrote_are_still_read(tmp_path):
    # "D" (a state delta alone), "E" (latched errors) and "S" (a whole state) are no longer
    # written; a journal on flash from older firmware may hold them
    from shoe.journal import delta

    j = Journal(str(tmp_path))
    j.outbox_add([], state={"n": 1, "seen": "00"})
    j._append(["D", delta.diff(j.state, {"n": 2, "seen": "00"}), 5, j.eseq])
    j._append(["E", [{"id": 1, "reason": "lid_open"}], 9, j.eseq])  # its marks still count
    j.close()
    r = Journal(str(tmp_path))
    assert r.state == {"n": 2, "seen": "00"} and r.ctr == 9 and r.recovery is None
    r._append(["S", {"n": 3}])
    r.close()
    r = Journal(str(tmp_path))
    assert r.state == {"n": 3} and r.ctr == 9
    r.close()
