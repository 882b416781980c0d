"""A record held back (Journal.defer, a dealt card's: App.take_read programs it while the card's
frame goes out): not on the flash until commit(); every later write of the journal programs it
first, so records reach the flash in the order they were made; a failed program of it rewrites
the log from memory (which has its effect already), and only if that fails too does commit()
raise. "On the flash" is read the way a boot reads it: a copy of the state directory opened as
a fresh Journal (a power cut at that instant)."""

import shutil

import pytest

from host_tools.link.host import make_endpoint
from shoe.journal import delta, log
from shoe.journal.journal import Journal

KEY = b"k" * 32


def after_cut(j, root, tmp_path, name="cut"):
    """What a boot would find if the power went now: a copy of root, opened."""
    copy = tmp_path / name
    shutil.copytree(root, copy)
    return Journal(str(copy))


def held_card(tmp_path):
    root = tmp_path / "shoe"
    root.mkdir()
    j = Journal(str(root))
    ep = make_endpoint("shoe", KEY, store=j, shoe_id="T")
    ep.send_many([("card", {"n": 0})], state={"n": 0})
    j.defer = True
    ep.send_many([("card", {"n": 1})], ops=delta.diff({"n": 0}, {"n": 1}))
    return root, j, ep


def test_a_held_record_is_on_the_flash_only_once_committed(tmp_path):
    root, j, _ = held_card(tmp_path)
    assert j.held() and not j.defer  # one record only: the next is written as usual
    assert j.eseq == 2 and j.state == {"n": 1}  # memory has its effect
    before = after_cut(j, root, tmp_path, "before")
    assert before.eseq == 1 and before.state == {"n": 0}
    assert j.commit() is True and not j.held()
    assert j.commit() is False  # nothing held: nothing written
    after = after_cut(j, root, tmp_path, "after")
    assert after.eseq == 2 and after.state == {"n": 1}
    assert [e for e, _ in after.outbox()] == [1, 2]


WRITES = {
    "set_ctr": lambda j, ep: j.set_ctr(j.ctr + 1),
    "outbox_ack": lambda j, ep: j.outbox_ack(1, j.ctr + 1),
    "outbox_add": lambda j, ep: ep.send_many([("card", {"n": 2})], state={"n": 2}),
    "mark": lambda j, ep: j._mark(),
    "add_round": lambda j, ep: j.add_round(1, "round_result", {"round": 1}),
    "idle": lambda j, ep: j.idle(),
    "compact": lambda j, ep: j.compact(),
    "close": lambda j, ep: j.close(),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_later_write_puts_the_held_record_on_the_flash_first(tmp_path, write):
    root, j, ep = held_card(tmp_path)
    WRITES[write](j, ep)
    assert not j.held()
    got = after_cut(j, root, tmp_path)
    assert got.eseq >= 2 and got.state["n"] >= 1, write  # the held card is there
    if write in ("set_ctr", "outbox_ack"):  # the later record is there too, after it
        assert got.ctr == j.ctr
    if write == "outbox_add":
        assert got.eseq == 3 and got.state == {"n": 2}


def test_a_failed_program_of_the_held_record_rewrites_the_log_from_memory(tmp_path, monkeypatch):
    root, j, _ = held_card(tmp_path)
    real = log.Appender.append
    fails = [1]

    def torn(self, payload):
        if fails[0]:
            fails[0] -= 1
            rec = log.pack(payload)
            self.f.write(rec[: len(rec) // 2])
            self.f.flush()
            raise OSError(5, "I/O error")
        return real(self, payload)

    monkeypatch.setattr(log.Appender, "append", torn)
    compactions = j.compactions
    assert j.commit() is True  # durable all the same
    assert j.compactions == compactions + 1 and not j.held()
    got = after_cut(j, root, tmp_path)
    assert got.eseq == 2 and got.state == {"n": 1}
    assert [e for e, _ in got.outbox()] == [1, 2]


def test_a_flash_that_takes_nothing_makes_commit_raise(tmp_path, monkeypatch):
    root, j, _ = held_card(tmp_path)

    def dead(*a, **k):
        raise OSError(5, "I/O error")

    monkeypatch.setattr(log.Appender, "append", dead)
    monkeypatch.setattr(j._store, "rewrite", dead)
    with pytest.raises(OSError):
        j.commit()
    assert not j.held()  # not tried again behind the app's back: the app falls silent


def test_a_held_record_is_encoded_at_commit_not_before(tmp_path, monkeypatch):
    """The encoding is behind the frame's first bytes too: held, the record is not bytes yet;
    an encoding short of RAM at commit is tried once more after a collection."""
    from shoe.journal import journal as jmod

    calls = []
    real = jmod.codec.encode

    def enc(obj):
        calls.append(obj[0] if isinstance(obj, list) else None)
        if len(calls) == 1:
            raise MemoryError
        return real(obj)

    root, j, _ = held_card(tmp_path)
    monkeypatch.setattr(jmod.codec, "encode", enc)
    assert j.commit() is True and calls == ["P", "P"]
    got = after_cut(j, root, tmp_path)
    assert got.eseq == 2 and got.state == {"n": 1}


def test_a_held_record_the_log_has_no_room_for_becomes_a_compaction(tmp_path):
    """Its room is known only once encoded (at commit): a log too full for it is rewritten
    from memory, which has its effect, and the record is not written after the snapshot."""
    root, j, _ = held_card(tmp_path)
    j.max_bytes = j._size + 4  # no room for the held record
    compactions, writes = j.compactions, j.writes
    assert j.commit() is True
    assert j.compactions == compactions + 1
    got = after_cut(j, root, tmp_path)
    assert got.eseq == 2 and got.state == {"n": 1}
    assert [e for e, _ in got.outbox()] == [1, 2]
    assert j.writes - writes == 1  # the snapshot's rewrite (one write), no append after it
