"""Replay the recorded link transcripts (tests/transcripts/*.jsonl, made by `python -m
tests.transcripts.record` on the virtual board) through the host's link end: fed the shoe's
bytes at the recorded instants and the same commands, the host must write exactly the recorded
bytes and make exactly the recorded events and replies of what it received. No board, no
threads, no clock: a protocol regression fails here in well under a second, naming the first
line that differs. After an intended protocol change, re-record (see record.py)."""

import json
from pathlib import Path

import pytest

from host_tools.sim.provision_sim import DEMO_KEYS
from host_tools.transcript import first_difference, first_difference_shoe, key_id, read
from shoe.link.handshake import PROTOCOL

HERE = Path(__file__).resolve().parent
TRANSCRIPTS = sorted(p for p in HERE.glob("*.jsonl") if not p.stem.endswith("-shoe"))
SHOE_TRANSCRIPTS = sorted(HERE.glob("*-shoe.jsonl"))
RERECORD = "(an intended protocol change? re-record: .venv/bin/python -m tests.transcripts.record)"


def test_the_transcripts_are_there():
    assert {p.stem for p in TRANSCRIPTS} >= {"fcf", "hcf"}
    assert {p.stem for p in SHOE_TRANSCRIPTS} >= {"fcf-shoe", "hcf-shoe"}


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_the_host_end_replays_the_transcript_exactly(path):
    header, rows = read(path)
    assert header["protocol"] == PROTOCOL, RERECORD
    assert header["key_id"] == key_id(DEMO_KEYS["shoe"])
    ops = {r["op"] for r in rows}
    assert {"rx", "tx", "cmd", "end"} <= ops  # a real session, not an empty file
    diff = first_difference(path, DEMO_KEYS)
    assert diff is None, "%s: %s %s" % (path.name, diff, RERECORD)


@pytest.mark.parametrize("path", SHOE_TRANSCRIPTS, ids=lambda p: p.stem)
def test_the_shoe_end_replays_the_transcript_exactly(path):
    """The other direction: the host's bytes and the app's calls (events, replies) fed to the
    firmware's own shoe end, recorded on the virtual board; it must write the same bytes."""
    header, rows = read(path)
    assert header["protocol"] == PROTOCOL, RERECORD
    assert header["key_id"] == key_id(DEMO_KEYS["shoe"])
    assert {"rx", "tx", "send_many", "reply"} <= {r["op"] for r in rows}
    diff = first_difference_shoe(path, DEMO_KEYS)
    assert diff is None, "%s: %s %s" % (path.name, diff, RERECORD)


def _what_the_sessions_hold():
    kinds, cmds = set(), set()
    for p in TRANSCRIPTS:
        _, rows = read(p)
        for r in rows:
            if r["op"] == "rx":
                kinds.update(g[0] for g in r["got"])
            elif r["op"] == "cmd":
                cmds.add(r["kind"])
    return kinds, cmds


def test_the_transcripts_cover_the_session():
    kinds, cmds = _what_the_sessions_hold()
    assert {
        "configure",
        "load_deck",
        "open_round",
        "decisions",
        "ack_error",
        "status",
        "recall",
    } <= cmds
    assert {
        "card",
        "deal_complete",
        "round_result",
        "round_void",
        "irregularity",
        "deck_check",
        "reply",
    } <= kinds
    errors = {}
    for p in TRANSCRIPTS:
        end = read(p)[1][-1]
        for k, v in end["errors"].items():
            errors[k] = errors.get(k, 0) + v
    assert errors.get("ooo", 0) >= 1  # the dropped frame: later ones held
    assert errors.get("frame_crc", 0) + errors.get("frame_cobs", 0) >= 1  # the corrupted one


def _mutated(tmp_path, path, pick, change):
    header, rows = read(path)
    row = next(r for r in rows if pick(r))
    change(row)
    out = tmp_path / path.name
    with open(out, "w") as f:
        for d in [header] + rows:
            f.write(json.dumps(d) + "\n")
    return out, row["n"] + 1


def _flip(hexs, i):
    b = bytearray.fromhex(hexs)
    b[i] ^= 0x01 if b[i] != 0x01 else 0x03
    return b.hex()


def test_a_changed_shoe_byte_is_caught_at_its_line(tmp_path):
    """One byte of one shoe frame changed (its CRC no longer matches): the host decodes nothing
    of it, and the replay says so at that line."""
    path = TRANSCRIPTS[0]
    mutated, line = _mutated(
        tmp_path,
        path,
        lambda r: r["op"] == "rx" and any(g[0] == "card" for g in r["got"]),
        lambda r: r.update(hex=_flip(r["hex"], len(r["hex"]) // 2 - 3)),
    )
    diff = first_difference(mutated, DEMO_KEYS)
    assert diff and diff.startswith("line %d (s2h rx" % line), diff


def test_a_changed_host_byte_is_caught_by_the_shoe_end_at_its_line(tmp_path):
    """A host frame changed on its way to the shoe end: it drops it (CRC) and delivers nothing,
    where the recording delivered a command."""
    path = SHOE_TRANSCRIPTS[0]

    def last_is_data(r):  # the chunk's last frame (whose byte is flipped) is a DATA frame
        parts = [p for p in bytes.fromhex(r["hex"]).split(b"\x00") if p]
        return parts and len(parts[-1]) > 2 and parts[-1][2] == 1  # COBS: byte 2 is the type

    mutated, line = _mutated(
        tmp_path,
        path,
        lambda r: r["op"] == "rx" and r["got"] and last_is_data(r),
        lambda r: r.update(hex=_flip(r["hex"], len(r["hex"]) // 2 - 3)),
    )
    diff = first_difference_shoe(mutated, DEMO_KEYS)
    assert diff and diff.startswith("line %d (h2s rx" % line), diff


def test_a_changed_event_is_caught_by_the_shoe_end_at_its_line(tmp_path):
    """An event the app sends changed (one field renamed): the shoe end writes other bytes at
    the first frame that carries it."""
    from shoe.link import codec

    def rename(r):
        kind, body = r["msgs"][0]
        b = codec.decode(bytes.fromhex(body))
        b["renamed"] = b.pop(sorted(b)[0])
        r["msgs"][0] = [kind, codec.encode(b).hex()]

    path = SHOE_TRANSCRIPTS[0]
    mutated, line = _mutated(
        tmp_path, path, lambda r: r["op"] == "send_many" and r["msgs"], rename
    )
    diff = first_difference_shoe(mutated, DEMO_KEYS)
    assert diff and "(s2h tx" in diff and int(diff.split()[1]) > line, diff


def test_a_changed_host_byte_is_caught_at_its_line(tmp_path):
    path = TRANSCRIPTS[0]
    mutated, line = _mutated(
        tmp_path,
        path,
        lambda r: r["op"] == "tx" and len(r["hex"]) > 40,
        lambda r: r.update(hex=_flip(r["hex"], 5)),
    )
    diff = first_difference(mutated, DEMO_KEYS)
    assert diff and diff.startswith("line %d (h2s tx" % line), diff
    assert "first difference at byte 5" in diff


def test_every_host_nonce_comes_from_the_nonce_source():
    """The seam the replay relies on: the first nonce and every fresh one (renegotiate, a HELLO
    that proves nothing) come from `nonce_source`; without it they are random."""
    from host_tools.link.host import make_endpoint
    from host_tools.transcript import SeededNonces

    src = SeededNonces(5)
    ep = make_endpoint("host", DEMO_KEYS["shoe"], nonce_source=src)
    assert ep.nonce == src.given[0]
    ep._sess = (ep.nonce, b"x" * 8)  # as if a session were up: renegotiate draws a fresh one
    ep.renegotiate()
    assert ep.nonce == src.given[1] != src.given[0]
    assert SeededNonces(5)() == src.given[0]  # seeded: the same again
    a, b = make_endpoint("host", DEMO_KEYS["shoe"]), make_endpoint("host", DEMO_KEYS["shoe"])
    assert a.nonce != b.nonce and len(a.nonce) == 8  # the default stays os.urandom


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.stem)
def test_both_ends_recorded_the_same_session(path):
    """The two transcripts of a session are of the same bytes: what the host wrote is what the
    shoe received, and what the shoe wrote reached the host but for the two scripted faults
    (one DATA frame dropped, one corrupted)."""
    import difflib

    _, host = read(path)
    _, shoe = read(path.with_name(path.stem + "-shoe.jsonl"))

    def stream(rows, op):
        return bytes.fromhex("".join(r["hex"] for r in rows if r["op"] == op))

    # (the board is stopped last: the shoe may not have read the host's very last bytes, and
    # may have written a last frame the host no longer read)
    assert stream(host, "tx").startswith(stream(shoe, "rx"))
    sent = [f for f in stream(shoe, "tx").split(b"\x00") if f]
    got = [f for f in stream(host, "rx").split(b"\x00") if f]
    sent = sent[: len(sent) - sent[::-1].index(got[-1])]
    ops = [
        (op, i2 - i1, j2 - j1)
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, sent, got, autojunk=False
        ).get_opcodes()
        if op != "equal"
    ]
    assert sorted(ops) == [("delete", 1, 0), ("replace", 1, 1)], ops
