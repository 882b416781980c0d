"""The journal on a raw flash ring (firmware/shoe/journal/ring.py, extents.py) over a fake NOR
flash (tests/fakes/flash.py): a power cut at every flash operation (CPython and MicroPython),
bit flips, a tear skipped without being taken for corruption, the sizing of the shoe's
layout, the idle pre-erase, and the reserved-extent map check."""

import json
import os
import random
import shutil
from pathlib import Path

from shoe.journal import extents
from shoe.journal.journal import Journal
from shoe.journal.ring import Ring, RingFull
from shoe.journal.ringstore import RingStore
from tests.fakes.flash import FakeFlash, PowerCut
from tests.firmware.journal import ringcut
from tests.firmware.journal.damage import SOAK
from tests.mpy import run_mpy

HERE = Path(__file__).resolve().parent


def test_a_power_cut_at_every_flash_operation_loses_nothing_durable(tmp_path):
    n, bad = ringcut.run_all(str(tmp_path))
    assert n > 90 and bad == []


def test_the_same_under_micropython(tmp_path):
    out = run_mpy(
        str(HERE / "ringcut.py"), heap="4m", extra_path=(str(HERE),), args=(str(tmp_path),)
    )
    r = json.loads(out.splitlines()[-1])
    assert r["ops"] > 90 and r["nbad"] == 0, r


def test_a_flipped_bit_is_repaired_and_a_zeroed_end_reported_on_both_runtimes(tmp_path):
    """ringflip.py: a bit flipped at every 97th position of a journal's live sectors (~360
    flips), its log's tail zeroed at every 97th length, on CPython and under MicroPython (the
    repair's tables and the ring's scan on the small port; test_damage.py sweeps the positions
    on CPython with a host). SHOE_SOAK=full: every 7th (~5,000 flips a runtime)."""
    from tests.firmware.journal import ringflip

    stride = 7 if SOAK else 97
    for r in (
        ringflip.run(str(tmp_path / "c"), stride),
        json.loads(
            run_mpy(
                str(HERE / "ringflip.py"),
                heap="4m",
                extra_path=(str(HERE),),
                args=(str(tmp_path / "m"), str(stride)),
            ).splitlines()[-1]
        ),
    ):
        assert (
            r["flips"] > 30000 // stride
            and r["bad"] == 0
            and r["tails"] > 3600 // stride
            and r["tails_bad"] == 0
        ), r


def recs(ring):
    s = ring.scan()
    return [bytes(p) for p in s], s


def test_a_tear_is_skipped_at_later_boots_not_taken_for_corruption():
    dev = FakeFlash(8)
    r = Ring(dev, [0, 1, 2, 3], 0, b"abcd")
    for i in range(3):
        r.append(b"r%d" % i * 40)
    dev.cut_at = 2  # the 2nd page of a 3-page record
    try:
        r.append(b"torn" * 150)
    except PowerCut:
        pass
    dev.revive()
    r = Ring(dev, [0, 1, 2, 3], 0, b"abcd")
    got, s = recs(r)
    assert len(got) == 3 and s.torn and s.holes == 0
    r.append(b"after")  # not over the torn bytes: a new sector, flagged
    got, s = recs(Ring(dev, [0, 1, 2, 3], 0, b"abcd"))
    assert got[-1] == b"after" and len(got) == 4 and not s.torn and s.holes == 0
    # one flipped bit in the new sector's after-tear flag or offset: still skipped (remove the
    # one-bit match of the offset: a hole, the state stale)
    image = bytes(dev.mem)
    sector = r._cur * 4096
    for at in range(sector + 29, sector + 32):
        for bit in range(8):
            dev.mem[:] = image
            dev.mem[at] ^= 1 << bit
            got, s = recs(Ring(dev, [0, 1, 2, 3], 0, b"abcd"))
            assert got[-1] == b"after" and len(got) == 4 and s.holes == 0, (at, bit)


def test_a_flipped_commit_bit_never_adopts_an_epoch_left_half_written():
    """A compaction cut before its commit leaves sectors of a newer epoch not committed (0xFF);
    one flipped bit there must not commit it (remove the majority read: the half-written epoch
    is taken for the live one and the journal's records are gone)."""
    dev = FakeFlash(8)
    slots = [0, 1, 2, 3]
    r = Ring(dev, slots, 0, b"abcd")
    for i in range(6):
        r.append(b"r%d" % i * 300)
    want, _ = recs(Ring(dev, slots, 0, b"abcd"))
    dev.cut_at = 3  # the new epoch's pages, before any commit byte
    try:
        r.rewrite([b"s%d" % i * 900 for i in range(4)])
    except PowerCut:
        pass
    dev.revive()
    fresh = [
        b
        for b in slots
        if dev.mem[b * 4096 + 28] == 0xFF and dev.mem[b * 4096 : b * 4096 + 4] == b"SHRG"
    ]
    assert fresh  # a sector of the half-written epoch
    image = bytes(dev.mem)
    for b in fresh:
        for bit in range(8):
            dev.mem[:] = image
            dev.mem[b * 4096 + 28] ^= 1 << bit
            got, s = recs(Ring(dev, slots, 0, b"abcd"))
            assert got == want, (b, bit)


def test_records_cross_sectors_and_the_ring_wraps():
    dev = FakeFlash(8)
    slots = [5, 2, 7, 0]
    r = Ring(dev, slots, 1, b"wxyz", reserve=1)
    kept = []
    for i in range(80):
        p = bytes([i]) * (300 + 97 * (i % 7))
        if not r.fits(len(p) + 7):
            r.rewrite(kept[-2:])  # a compaction: keep the last two
            kept = kept[-2:]
        r.append(p)
        kept.append(p)
        got, _ = recs(Ring(dev, slots, 1, b"wxyz", reserve=1))
        assert got == kept
    assert dev.erases > 12  # it went round the ring several times
    assert not any(
        dev.mem[b * 4096 : (b + 1) * 4096] != b"\xff" * 4096 for b in (1, 3, 4, 6)
    )  # only its own sectors
    r2 = Ring(dev, slots, 1, b"wxyz", reserve=1)
    try:
        r2.append(b"z" * 16000)  # more than the ring can hold: refused, kept intact
    except RingFull:
        pass
    assert recs(Ring(dev, slots, 1, b"wxyz", reserve=1))[0] == kept


def test_a_record_over_two_pages_is_one_program_and_none_covers_more_than_two():
    """A card's record (~190 bytes) mostly spans two pages: one program call for both (each
    call of the boot ROM's program costs the RP2040 ~0.2 ms besides the flash's own time);
    longer records go two pages a call (interrupts are off for a whole program), every page
    once."""
    dev = FakeFlash(8)
    calls = []
    write = dev.writeblocks

    def counted(block, buf, offset=None):
        calls.append((block, offset, len(buf)))
        write(block, buf, offset)

    dev.writeblocks = counted
    r = Ring(dev, [3, 4], 1, b"wxyz")
    r.append(b"a" * 100)  # the sector's first record: 32..139 (with the stamp's programs)
    calls.clear()
    r.append(b"b" * 190)  # 139..336: pages 0 and 1
    assert calls == [(3, 0, 512)]
    calls.clear()
    r.append(b"c" * 1000)  # 336..1343: pages 1 to 5
    assert calls == [(3, 256, 512), (3, 768, 512), (3, 1280, 256)]
    calls.clear()
    r.append(b"d" * 20)  # 1343..1370: inside page 5
    assert calls == [(3, 1280, 256)]
    assert recs(Ring(dev, [3, 4], 1, b"wxyz"))[0] == [
        b"a" * 100,
        b"b" * 190,
        b"c" * 1000,
        b"d" * 20,
    ]


def ring_journal(dev, root, **kw):
    return Journal(
        root,
        max_bytes=1 << 20,
        outbox_limit=200,
        outbox_bytes=60000,
        store=RingStore(
            dev,
            b"1234",
            list(range(32)),
            (("journal.log", 24, 2), ("rounds.0", 3, 1), ("rounds.1", 3, 1), ("marks", 2, 1)),
        ),
        **kw,
    )


def test_a_bit_flipped_in_a_sector_is_repaired_and_damage_beyond_repair_is_a_hole(tmp_path):
    dev = FakeFlash(32)
    j = ring_journal(dev, str(tmp_path))
    for i in range(60):  # ~13 KB: four sectors
        j.outbox_add([(i + 1, bytes([65 + i % 26]) * 200, b"h" * 16)], state={"n": i})
    truth = (j.state, j.eseq, j.ctr, j.outbox())
    image = bytes(dev.mem)
    rng = random.Random(20261201)
    # the second sector of the log (full of records): stamp, header, commit and after-tear
    # bytes, then anywhere in its data
    for trial, at in enumerate(
        list(range(4096, 4096 + 32)) + [4096 + 32 + rng.randrange(4064) for _ in range(30)]
    ):
        dev.mem[:] = image
        dev.mem[at] ^= 1 << rng.randrange(8)
        r = ring_journal(dev, str(tmp_path))
        assert r.recovery is None, (trial, at, r.recovery)
        assert (r.state, r.eseq, r.outbox()) == (truth[0], truth[1], truth[3]) and r.ctr >= truth[
            2
        ], (trial, at)
        r.close()
    # two bytes of a record zeroed: beyond repair, a hole; counters keep their marks, the
    # records after it are kept
    for at in [4096 + 32 + rng.randrange(4000) for _ in range(10)]:
        dev.mem[:] = image
        dev.mem[at : at + 2] = b"\x00\x00"
        r = ring_journal(dev, str(tmp_path))
        rec = r.recovery
        assert rec is not None and rec["holes"] >= 1 and not rec["tail"], at
        assert r.eseq == truth[1] and r.ctr >= truth[2]
        assert r.state == {"n": 59} or rec["state"] == "stale"
        assert r.payload(60) == bytes([65 + 59 % 26]) * 200  # the records after it are kept
        r.close()


def test_the_shoes_layout_holds_a_session_and_idle_pre_erases(tmp_path):
    dev = FakeFlash(64)
    st = RingStore(dev, b"5678", list(range(3, 3 + 48)))
    j = Journal(str(tmp_path), max_bytes=65536, outbox_limit=96, outbox_bytes=8192, store=st)
    eseq = 0
    for rnd in range(40):  # 40 rounds of 36 cards, acks, a round record each
        for c in range(36):
            eseq += 1
            j.outbox_add([(eseq, b"c" * 110, b"h" * 16)], state={"r": rnd, "c": c})
            if c % 4 == 3:
                j.outbox_ack(eseq, eseq)
        j.outbox_ack(eseq, eseq)
        j.add_round(rnd, "round_result", {"round": rnd, "pay": "p" * 300})
        j.checkpoint()
        before = dev.erases
        while j.idle():  # between rounds: erase ahead
            pass
        assert dev.erases - before <= 4  # at most one a ring
    assert j.compactions >= 3 and dev.erases / 40.0 <= 2.5
    j2 = Journal(
        str(tmp_path),
        max_bytes=65536,
        outbox_limit=96,
        outbox_bytes=8192,
        store=RingStore(dev, b"5678", list(range(3, 3 + 48))),
    )
    assert j2.state == {"r": 39, "c": 35} and j2.eseq == eseq and j2.recovery is None
    assert j2.round_numbers()[-100:] == list(range(40)) and j2.round(7)[1]["pay"] == "p" * 300
    # with the next sector pre-erased, the card that enters it programs only (no erase)
    ring = j2._store.rings["journal.log"]
    while j2.idle():
        pass
    cur, before = ring._cur, dev.erases
    c = 0
    while ring._cur == cur:
        c += 1
        j2.outbox_add([(eseq + c, b"d" * 110, b"h" * 16)], state={"c": c})
        j2.outbox_ack(eseq + c, eseq + c)
    assert dev.erases == before and c > 1


def extent_dir(tmp_path, dev, n=6, seed=7):
    """Extent files in a directory and their contents at random blocks of the fake flash (what
    littlefs would have done)."""
    d = str(tmp_path / "ring")
    nonce = extents.create(d, n)
    blocks = random.Random(seed).sample(range(dev.nblocks), n)
    for i, b in enumerate(blocks):
        data = Path(d, "x%02d" % i).read_bytes()
        dev.mem[b * 4096 : (b + 1) * 4096] = data
    return d, nonce, blocks


def test_the_extents_are_found_by_their_headers_and_the_map_is_checked(tmp_path):
    dev = FakeFlash(40)
    d, nonce, blocks = extent_dir(tmp_path, dev)
    assert extents.locate(dev, nonce, 6) == blocks
    assert extents.check(dev, d, blocks, 6)
    assert not extents.check(dev, d, blocks[:5] + [blocks[0]], 6)  # a block twice
    assert not extents.check(dev, d, blocks[1:] + blocks[:1], 6)  # not their blocks
    other = [b for b in range(40) if b not in blocks][0]
    assert not extents.check(dev, d, blocks[:5] + [other], 6)
    assert not extents.check(dev, d, blocks[:5] + [40], 6)  # outside the flash
    # the ring writes the blocks (stamps): the file reads the same bytes (littlefs would)
    r = Ring(dev, blocks, 0, nonce)
    r.append(b"x" * 100)
    for i, b in enumerate(blocks):
        Path(d, "x%02d" % i).write_bytes(bytes(dev.mem[b * 4096 : (b + 1) * 4096]))
    assert extents.check(dev, d, blocks, 6)
    # erased first page: the whole block is compared
    dev.mem[blocks[3] * 4096 : (blocks[3] + 1) * 4096] = b"\xff" * 4096
    Path(d, "x03").write_bytes(b"\xff" * 4095 + b"\x00")
    assert not extents.check(dev, d, blocks, 6)
    Path(d, "x03").write_bytes(b"\xff" * 4096)
    assert extents.check(dev, d, blocks, 6)
    Path(d, "x02").write_bytes(bytes(dev.mem[blocks[2] * 4096 : (blocks[2] + 1) * 4096]) * 2)
    assert not extents.check(dev, d, blocks, 6)  # not one block
    os.remove(os.path.join(d, "x02"))
    assert not extents.check(dev, d, blocks, 6)


def test_an_extent_found_twice_or_missing_is_refused(tmp_path):
    dev = FakeFlash(40)
    d, nonce, blocks = extent_dir(tmp_path, dev)
    spare = [b for b in range(40) if b not in blocks][0]
    dev.mem[spare * 4096 : (spare + 1) * 4096] = dev.mem[blocks[2] * 4096 : (blocks[2] + 1) * 4096]
    for bad in (
        lambda: None,
        lambda: dev.mem.__setitem__(slice(blocks[4] * 4096, blocks[4] * 4096 + 16), b"\xff" * 16),
    ):
        bad()
        try:
            extents.locate(dev, nonce, 6)
            raise AssertionError("accepted")
        except extents.ExtentError:
            pass
        dev.mem[spare * 4096 : spare * 4096 + 16] = b"\x00" * 16
    shutil.rmtree(d)


def test_a_map_made_for_fewer_streams_grows_and_keeps_the_journal(tmp_path, monkeypatch):
    """Firmware that adds a stream (the marks) boots on a map of older firmware: the missing
    extents are made at the end, the old ones and the journal in them kept (remove grow():
    the map is made again and the journal starts empty, boot count 1)."""
    dev = FakeFlash(80)
    monkeypatch.setattr(extents, "LAYOUT", extents.LAYOUT[:3])  # before the marks
    d = str(tmp_path / "ring")
    nonce = extents.create(d, 46)
    blocks = random.Random(3).sample(range(dev.nblocks - 2), 46)
    for i, b in enumerate(blocks):  # what littlefs did with the files
        dev.mem[b * 4096 : (b + 1) * 4096] = Path(d, "x%02d" % i).read_bytes()
    extents._write_map(d, nonce, blocks)
    # a journal as older firmware left it: log and rounds (its marks on two scratch blocks,
    # erased afterwards: older firmware wrote none)
    st = RingStore(dev, nonce, blocks + [78, 79])
    j = Journal(str(tmp_path), store=st)
    j.outbox_add([(1, b"e" * 50, b"h" * 16)], state={"n": 1})
    j.close()
    dev.mem[78 * 4096 :] = b"\xff" * 8192
    for i, b in enumerate(blocks):  # littlefs reads back what the ring wrote
        Path(d, "x%02d" % i).write_bytes(bytes(dev.mem[b * 4096 : (b + 1) * 4096]))
    monkeypatch.undo()

    real_create = extents.create

    def create(d2, n, nonce=None, start=0):  # the new files land in free blocks of the flash
        out = real_create(d2, n, nonce, start)
        free = [b for b in range(dev.nblocks - 2) if start == 0 or b not in blocks]
        for i in range(start, n):
            b = free[i - start]
            dev.mem[b * 4096 : (b + 1) * 4096] = Path(d2, "x%02d" % i).read_bytes()
        return out

    monkeypatch.setattr(extents, "create", create)
    store = extents.open_store(dev, str(tmp_path))
    j = Journal(str(tmp_path), store=store)
    assert j.state == {"n": 1} and j.eseq == 1 and j.boot == 2 and j.recovery is None
    assert len(extents._load_map(d)[1]) == 48 and extents._load_map(d)[1][:46] == blocks


def test_a_ceiling_is_on_flash_before_any_number_passes_it(tmp_path, monkeypatch):
    """A power cut at every flash operation of a run whose marks are written often (ceilings 3
    events and 2 commands ahead): after each, every event number and command counter in the
    log is below the ceilings in the marks (write the mark after the record instead: a cut
    between them leaves a number above its ceiling, which a damaged log would reuse)."""
    from shoe.journal import marks
    from shoe.link import codec

    monkeypatch.setattr(marks, "E_AHEAD", 3)
    monkeypatch.setattr(marks, "C_AHEAD", 2)

    def run(dev):
        j = ring_journal(dev, str(tmp_path))
        for i in range(12):  # events pass the event ceiling, then commands the other
            j.outbox_add([(j.eseq + 1, b"e" * 60, b"h" * 16)], state={"n": i})
            if i % 6 == 5:
                for _ in range(3):
                    j.set_ctr(j.ctr + 1)
                j.outbox_ack(j.eseq, j.ctr + 1)

    probe = FakeFlash(32)
    run(probe)
    checked = 0
    for k in range(1, probe.ops + 1):
        dev = FakeFlash(32)
        dev.cut_at = k
        try:
            run(dev)
        except PowerCut:
            pass
        dev.revive()
        st = RingStore(
            dev,
            b"1234",
            list(range(32)),
            (("journal.log", 24, 2), ("rounds.0", 3, 1), ("rounds.1", 3, 1), ("marks", 2, 1)),
        )
        ms = [codec.decode(p) for p in st.scan("marks")]
        if not ms:
            continue
        ce, cc = max(m[4] for m in ms), max(m[5] for m in ms)
        for p in st.scan("journal.log"):
            r = codec.decode(p)
            if r[0] == "P":
                assert r[1] + len(r[2]) - 1 < ce, (k, r[1], ce)
            if r[0] in ("C", "A"):
                assert r[-2 if r[0] == "C" else 2] < cc, (k, r, cc)
        checked += 1
    assert checked > 30


def test_a_zeroed_last_sector_is_damage_not_a_tear(tmp_path):
    """The log's last sector zeroed (its header too: it is no longer in the live epoch) when
    it held only card records written after the last mark: the sector the ring would enter
    next reads zeroed, which no cut leaves, so the end is damaged and the event sequence
    jumps past every number used (remove the check: it takes the end for a cut write and
    uses those numbers again)."""
    dev = FakeFlash(32)
    j = ring_journal(dev, str(tmp_path))
    j.outbox_add([], state={"table": {"n": 1}})
    ring = j._store.rings["journal.log"]
    first = ring._cur
    e = 0
    while ring._cur == first or ring._off < 1000:  # cards until well into the next sector
        e += 1
        j.outbox_add([(e, b"c" * 90, b"h" * 16)], ops=[[[0], {"n": e}]])
    last = ring.blocks[ring._cur]
    j.close()
    dev.mem[last * 4096 : (last + 1) * 4096] = bytes(4096)
    r = ring_journal(dev, str(tmp_path))
    assert r.recovery is not None and r.recovery["tail"], r.recovery
    assert r.eseq > e and r.recovery["jump"][1] == r.eseq
