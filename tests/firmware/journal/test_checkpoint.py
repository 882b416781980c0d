"""Full snapshots at round boundaries (Journal.checkpoint): due only once the log is 3/4 full,
and done by idle() (the app's pause work), never by the checkpoint or the host's acknowledgement
themselves: on the RP2040 a compaction at the acknowledgement held the next round's first card
40-60 ms (bench/bench_pico.py). idle() waits until every event is acknowledged, so the snapshot
does not copy them; while cards are expected (dealing=True) only a nearly full log compacts."""

from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint

KEY = b"k" * 32


def _fill(j, ep, n, upto):
    while j._size * 8 < j.max_bytes * upto:
        n += 1
        ep.send_many([("card", {"n": n})], state={"n": n, "pad": "x" * 200})
    return n


def test_checkpoint_makes_a_compaction_due_that_idle_does_once_everything_is_acknowledged(
    tmp_path,
):
    j = Journal(str(tmp_path), max_bytes=4096)
    ep = Endpoint("shoe", KEY, store=j, shoe_id="T")
    ep.send_many([("card", {"n": 0})], state={"n": 0, "pad": "x" * 200})
    j.checkpoint()
    assert not j.idle() and j.compactions == 0  # far from full: nothing due
    n = _fill(j, ep, 0, 6)
    j.checkpoint()
    assert j.compactions == 0  # due, not done here
    j.outbox_ack(j.eseq - 1, 5)  # not everything: still waiting
    assert j.compactions == 0
    j.idle()
    assert j.compactions == 0  # an event waits for the host: the snapshot would copy it
    writes = j.writes
    j.outbox_ack(j.eseq, 6)  # everything: the ack is an "A" record, no compaction here
    assert j.compactions == 0 and j.writes == writes + 1 and j.outbox() == []
    assert j.idle() and j.compactions == 1
    j.idle()
    assert j.compactions == 1  # once
    j.close()
    r = Journal(str(tmp_path), max_bytes=4096)
    assert r.state == {"n": n, "pad": "x" * 200} and r.outbox() == [] and r.ctr == 6
    assert r.eseq == n + 1 and r.recovery is None


def test_while_dealing_idle_compacts_only_a_nearly_full_log(tmp_path):
    j = Journal(str(tmp_path), max_bytes=4096)
    ep = Endpoint("shoe", KEY, store=j, shoe_id="T")
    n = _fill(j, ep, 0, 6)
    j.checkpoint()
    j.outbox_ack(j.eseq, 2)
    j.idle(dealing=True)
    assert j.compactions == 0  # 3/4 full, cards expected: it waits for a pause
    n = _fill(j, ep, n, 7)
    j.outbox_ack(j.eseq, 3)
    assert j.idle(dealing=True) and j.compactions == 1  # 7/8: before a card's record has to
    j.close()
    r = Journal(str(tmp_path), max_bytes=4096)
    assert r.state == {"n": n, "pad": "x" * 200} and r.eseq == n and r.recovery is None
