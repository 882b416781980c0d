"""Full snapshots at round boundaries (Journal.checkpoint): only once the log is 3/4 full, and
while events wait for the host's acknowledgement the compaction waits for it, so the snapshot
does not copy them; the acknowledgement is then held by the snapshot itself."""

from shoe.journal.journal import Journal
from shoe.link.endpoint import Endpoint

KEY = b"k" * 32


def test_checkpoint_compacts_when_three_quarters_full_and_waits_for_the_ack(tmp_path):
    j = Journal(str(tmp_path), max_bytes=4096)
    ep = Endpoint("shoe", KEY, store=j, shoe_id="T")
    ep.send_many([("card", {"n": 0})], state={"n": 0, "pad": "x" * 200})
    j.checkpoint()
    assert j.compactions == 0  # far from full
    n = 0
    while j._size * 4 < 4096 * 3:
        n += 1
        ep.send_many([("card", {"n": n})], state={"n": n, "pad": "x" * 200})
    j.checkpoint()
    assert j.compactions == 0  # events are waiting for the host: not now
    writes = j.writes
    j.outbox_ack(j.eseq - 1, 5)  # not everything: still waiting
    assert j.compactions == 0 and j.writes == writes + 1
    j.outbox_ack(j.eseq, 6)  # everything: the snapshot holds the ack, no "A" record
    assert j.compactions == 1 and j.outbox() == []
    j.close()
    r = Journal(str(tmp_path), max_bytes=4096)
    assert r.state == {"n": n, "pad": "x" * 200} and r.outbox() == [] and r.ctr == 6
    assert r.eseq == n + 1 and r.recovery is None
