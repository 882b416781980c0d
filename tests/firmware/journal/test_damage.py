"""Issue 18 part 4: no event lost or renumbered by one bad bit. A real journal (the files of the
virtual board, and the raw flash rings of the Pico on the fake NOR flash) after a session with a
host: one bit flipped at EVERY position, and the log's tail zeroed at EVERY length; then the shoe
boots, journals its boot event and the host that already holds the events reconnects
(damage.Rig, the real audit store). A flipped bit is repaired (the journal recovers exactly);
after a zeroed tail the event sequence, command counter and boot count never go back, no number
is used twice, every event the host lacks is a gap it counts and `verify` reports, and the
marks keep the latched irregularities and the round number.

The full sweeps run with SHOE_SOAK=full (also marked `slow`; every bit: ~14,000 boots a store,
every length; minutes); make test takes every 23rd bit and every 3rd length (the host part runs
once per distinct recovery). On
the rings "every position" is every byte of the live sectors' headers and records, and a
sample of the erased space after the last record (its first 64 bytes, then every 61st)."""

import os

import pytest

from shoe.journal import ringstore
from shoe.journal.journal import Journal
from tests.fakes.flash import FakeFlash
from tests.firmware.journal.damage import KEEP, SOAK, Rig

LAYOUT = (("journal.log", 6, 2), ("rounds.0", 3, 1), ("rounds.1", 3, 1), ("marks", 2, 1))
NONCE = b"dmg1"
SECTOR = 4096


class Files:
    """The virtual board's journal: files in a directory."""

    def __init__(self, root):
        self.root = root
        self.store = None
        self.first_erased = []

    def freeze(self):
        pass

    def image(self):
        return {f: open(os.path.join(self.root, f), "rb").read() for f in os.listdir(self.root)}

    def put(self, image):
        for f in os.listdir(self.root):
            os.remove(os.path.join(self.root, f))
        for f, data in image.items():
            with open(os.path.join(self.root, f), "wb") as fh:
                fh.write(data)

    def bits(self, image):
        """Every (file, byte) of the journal."""
        return [(f, i) for f in sorted(image) for i in range(len(image[f]))]

    def flip(self, image, where, bit):
        f, i = where
        out = dict(image)
        b = bytearray(out[f])
        b[i] ^= 1 << bit
        out[f] = bytes(b)
        return out

    def tails(self, image):
        return len(image["journal.log"])

    def zero_tail(self, image, n):
        out = dict(image)
        b = bytearray(out["journal.log"])
        b[len(b) - n :] = bytes(n)
        out["journal.log"] = bytes(b)
        return out


class Flash(Files):
    """The Pico's journal: raw rings on a fake NOR flash."""

    def __init__(self, root):
        Files.__init__(self, root)
        self.dev = FakeFlash(16)

    def factory(self):
        self.store = ringstore.RingStore(self.dev, NONCE, list(range(16)), LAYOUT)
        return self.store

    def image(self):
        return bytes(self.dev.mem)

    def put(self, image):
        self.dev.mem[:] = image

    def freeze(self):
        """The flash addresses of each ring's live epoch, in stream order, up to what is
        written (spans), and whole (sectors), as the shoe left them."""
        self.spans, self.sectors, self.first_erased = {}, [], []
        for name, _, _ in LAYOUT:
            ring = self.store.rings[name]
            out = []
            for s in ring._live:
                base = ring.blocks[s] * SECTOR
                end = ring._off if s == ring._cur else SECTOR
                out.extend(range(base, base + end))
                # the erased space after the last record: its first bytes, then a sample (a
                # flipped bit there reads the same wherever it is)
                erased = list(range(base + end, base + SECTOR))
                self.sectors.extend(out[len(out) - end :] + erased[:64] + erased[64::61])
                self.first_erased.extend(erased[:1])
            self.spans[name] = out

    def _span(self, name):
        return self.spans[name]

    def bits(self, image):
        """Every byte of the live sectors' headers and records, and of the erased space after
        the last record its first 64 bytes and every 61st."""
        return self.sectors

    def flip(self, image, where, bit):
        b = bytearray(image)
        b[where] ^= 1 << bit
        return bytes(b)

    def tails(self, image):
        return len(self._span("journal.log"))

    def zero_tail(self, image, n):
        span = self._span("journal.log")
        b = bytearray(image)
        for a in span[len(span) - n :]:
            b[a] = 0
        return bytes(b)


def make(kind, tmp_path, away=False):
    root = str(tmp_path / "state")
    os.mkdir(root)
    st = Files(root) if kind == "files" else Flash(root)
    rig = Rig(root, store=st.factory if kind == "flash" else None)
    rig.history(rounds=2, away=away)
    st.freeze()
    return st, rig, st.image()


def boot(st, rig):
    j = Journal(
        rig.root,
        max_bytes=rig.max_bytes,
        outbox_limit=64,
        outbox_bytes=16384,
        store=rig.mkstore(),
        keep=KEEP,
    )
    snap = {
        "state": j.state,
        "eseq": j.eseq,
        "ctr": j.ctr,
        "chain": j.chain,
        "boot": j.boot,
        "outbox": j.outbox(),
        "rounds": j.round_numbers(),
        "recovery": j.recovery,
    }
    j.close()
    return snap


def sweep_flips(kind, tmp_path, stride, rig_every):
    st, rig, image = make(kind, tmp_path)
    where = st.bits(image)
    truth = boot(st, rig)
    st.put(image)
    assert truth["recovery"] is None
    bad = []
    n = 0
    # every bit of the first erased byte after a ring's last record (where the next record
    # would start) whatever the stride, then the sweep
    always = [where.index(a) * 8 + b for a in st.first_erased for b in range(8)]
    for k in always + list(range(0, len(where) * 8, stride)):
        damaged = st.flip(image, where[k // 8], k % 8)
        st.put(damaged)
        got = boot(st, rig)
        n += 1
        # repaired: exactly the journal it was (a counter floor may rise, never fall)
        if (
            got["recovery"] is not None
            or got["ctr"] < truth["ctr"]
            or dict(got, ctr=0) != dict(truth, ctr=0)
        ):
            bad.append((where[k // 8], k % 8, got["recovery"], got["eseq"]))
        if n % rig_every == 0:
            st.put(damaged)
            problems = rig.second_life()
            if problems:
                bad.append((where[k // 8], k % 8, problems))
        st.put(image)
    return n, bad


def sweep_zero_tails(kind, tmp_path, away, stride):
    st, rig, image = make(kind, tmp_path, away)
    seen = {}
    bad = []
    total = st.tails(image)
    for n in range(1, total + 1, stride):
        damaged = st.zero_tail(image, n)
        st.put(damaged)
        got = boot(st, rig)
        rec = got["recovery"]
        key = repr(
            (
                got["eseq"],
                got["ctr"],
                got["outbox"],
                got["state"],
                rec and (rec["jump"], rec["holes"], rec["tail"]),
            )
        )
        if got["eseq"] < rig.before["eseq"] or got["ctr"] < rig.before["ctr"]:
            bad.append((n, "a counter went back", got["eseq"], got["ctr"]))
        if key not in seen:  # the second life depends on what was recovered: once each
            st.put(damaged)
            seen[key] = rig.second_life()
            if seen[key]:
                bad.append((n, seen[key]))
        st.put(image)
    return total, len(seen), bad


@pytest.mark.parametrize("kind", ["files", "flash"])
def test_one_flipped_bit_anywhere_is_repaired(tmp_path, kind):
    n, bad = sweep_flips(kind, tmp_path, stride=23, rig_every=25)
    assert n > 500 and bad == [], bad[:5]


@pytest.mark.slow
@pytest.mark.skipif(not SOAK, reason="every bit position: SHOE_SOAK=full (make test samples)")
@pytest.mark.parametrize("kind", ["files", "flash"])
def test_one_flipped_bit_at_every_position_is_repaired(tmp_path, kind):
    n, bad = sweep_flips(kind, tmp_path, stride=1, rig_every=400)
    assert n > 12000 and bad == [], bad[:5]


@pytest.mark.parametrize("kind", ["files", "flash"])
def test_a_zeroed_tail_loses_nothing_uncounted(tmp_path, kind):
    total, distinct, bad = sweep_zero_tails(kind, tmp_path, away=True, stride=3)
    assert total > 1000 and distinct > 15 and bad == [], bad[:5]


@pytest.mark.slow
@pytest.mark.skipif(not SOAK, reason="every zeroed length: SHOE_SOAK=full (make test samples)")
@pytest.mark.parametrize(
    "kind,away", [("files", False), ("files", True), ("flash", False), ("flash", True)]
)
def test_a_zeroed_tail_of_every_length_loses_nothing_uncounted(tmp_path, kind, away):
    total, distinct, bad = sweep_zero_tails(kind, tmp_path, away, stride=1)
    assert total > 1000 and distinct > 15 and bad == [], bad[:5]
