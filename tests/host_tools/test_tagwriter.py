"""Writing authenticated card tags (host_tools/tagwriter.py, `shoectl tags`) on the simulated NTAG
424 DNA (host_tools/sim/ntag424.py): what a written tag holds and refuses, how its SUN message
reads, and what a copier can and cannot get from it."""

import json

import pytest

from host_tools import cli, tagwriter
from host_tools.sim.ntag424 import Ntag424
from shoe import sun
from shoe.cardcode import CardCodes

KEY = b"casino-card-key-0123456789"
CODES = CardCodes(KEY)
CODE = CODES.make(0x3A7F, "R", 51)  # As


def written(uid=b"\x04\x11\x22\x33\x44\x55\x66"):
    tag = tagwriter.SimTag(Ntag424(uid))
    ctr = tagwriter.provision(tag, CODE, KEY)
    return tag, ctr


def test_a_written_tag_reads_as_the_shoe_checks_it():
    tag, ctr = written()
    assert ctr == 1  # SDM enabled (counter 0), then the check read
    kind, code, n = tagwriter.check(tag, KEY)
    assert (kind, code, n) == ("card", CODE.encode(), 2)
    raw = tagwriter.read(tag)
    d = raw[8:]
    assert d[:15] == CODE.encode() and d[15:16] == b"x" and d[16:30] == b"04112233445566"
    assert d[31:37] == b"000003"  # SDMReadCtr, ASCII, MSB first
    # the MAC, computed here from the key the shoe derives (independently of the tag model)
    k1 = sun.tag_key(KEY, tag.uid, CODE.encode()[:7], sun.KEY_SDM)
    assert sun.sun_mac(k1, tag.uid, 3, d[: sun.MAC_AT]).hex().upper().encode() == d[38:54]
    # another card key (another casino's shoe) does not accept it
    assert tagwriter.check(tag, b"another-casino-card-key")[0] == "forged"


def test_the_counter_moves_once_per_read_command_as_the_datasheet_says():
    """NT4H2421Gx 9.3.1: one more before the first read after any other command; the same
    for reads that follow it (a file read in chunks)."""
    tag, _ = written()
    m = tag.model
    tag.reset()
    assert m.apply(tagwriter.APP)[-2:] == b"\x90\x00"
    read = bytes((0x00, 0xB0, 0x82, sun.READ_AT, sun.READ_LEN))
    a = m.apply(read)
    b = m.apply(read)
    assert a == b and m.sdm_ctr == 2  # the second read: no new count
    m.apply(tagwriter.APP)
    assert m.apply(read) != a and m.sdm_ctr == 3


def test_a_written_tag_refuses_what_would_forge_it():
    tag, _ = written()
    m = tag.model
    # its factory key 0 is gone: nobody can write it again, change its settings or keys
    with pytest.raises(tagwriter.TagError):
        tagwriter.provision(tag, CODES.make(0x3A7F, "R", 50), KEY)
    tag.reset()
    m.apply(tagwriter.APP)
    with pytest.raises(tagwriter.TagError):
        tagwriter.authenticate(tag, 0, bytes(16))
    # the file is read-only without key 0: a code cannot be swapped in
    m.reset()
    m.apply(tagwriter.APP)
    head = bytes((2,)) + (9).to_bytes(3, "little") + (15).to_bytes(3, "little")
    assert (
        m.apply(
            bytes((0x90, 0x8D, 0, 0, 22)) + head + CODES.make(0x3A7F, "R", 50).encode() + b"\x00"
        )[-2:]
        == b"\x91\xae"
    )
    assert m.apply(b"\x00\xa4\x00\x0c\x02\xe1\x04")[-2:] == b"\x90\x00"
    assert m.apply(b"\x00\xd6\x00\x09\x01A")[-2:] == b"\x69\x82"
    # the card's own key 0 (the shoe's card key diversified) still opens it
    s = tagwriter.authenticate(tag, 0, sun.tag_key(KEY, tag.uid, CODE.encode()[:7], 0))
    assert s.ti and s.ctr == 0
    assert tagwriter.check(tag, KEY)[0] == "card"


def test_copies():
    """What a copier gets: the UID and the file as read, no keys. A recorded answer is the
    tag's own (its MAC verifies) with a count the reader has seen: only the count can tell it
    (the shoe's ledger does, shoe/deck/tags.py). A copy made by reading the tag itself carries
    one fresh count, then the same one for ever."""
    tag, _ = written()
    kind, code, n = tagwriter.check(tag, KEY)
    replay = tagwriter.SimTag(tag.model.cloned())
    assert tagwriter.check(replay, KEY) == ("card", code, n)
    assert tagwriter.check(replay, KEY) == ("card", code, n)
    skim = tagwriter.SimTag(tag.model.cloned(fresh=True))
    assert tagwriter.check(skim, KEY) == ("card", code, n + 1)
    assert tagwriter.check(skim, KEY) == ("card", code, n + 1)
    # a copy on another UID: the mirrored UID is not its own
    other = tagwriter.SimTag(tag.model.cloned())
    other.uid = other.model.uid = b"\x04" + bytes(6)
    assert tagwriter.check(other, KEY)[0] == "forged"
    # a tag emulator that makes new counts under a key it does not have
    spec = tag.model.spec()
    spec["sdm"]["key"] = "00" * 16
    fake = tagwriter.SimTag(Ntag424.from_spec(spec))
    assert tagwriter.check(fake, KEY) == ("forged", "tag_mac", -1)


def test_ndef_layout_matches_the_shoes_offsets():
    f = tagwriter.ndef_file(CODE)
    assert len(f) == 2 + int.from_bytes(f[:2], "big")  # NLEN
    assert f[2:6] == b"\xd1\x01" + bytes((len(f) - 6,)) + b"T"  # one short text record
    assert f[sun.READ_AT : sun.READ_AT + 15] == CODE.encode()
    s = tagwriter.sdm_settings()
    assert s[:6] == bytes((0x40, 0x00, 0xE0, 0xC1, 0xFF, 0xE1))
    offs = [int.from_bytes(s[6 + 3 * i : 9 + 3 * i], "little") for i in range(4)]
    assert offs == [
        sun.READ_AT + sun.UID_AT,
        sun.READ_AT + sun.CTR_AT,
        sun.READ_AT,
        sun.READ_AT + sun.MAC_AT,
    ]


def shoectl(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_shoectl_tags_provision_and_check(tmp_path, capsys):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"shoe": "11" * 16, "supervisor": "22" * 16, "card": KEY.hex()}))
    sim, out = tmp_path / "deck.json", tmp_path / "list.json"
    rc, o, err = shoectl(
        capsys,
        "tags",
        "provision",
        "--deck",
        "3a7f",
        "--back",
        "R",
        "--keys",
        keys,
        "--sim-tags",
        sim,
        "--out",
        out,
        "--json",
    )
    assert rc == 0, err
    rows = [json.loads(x) for x in o.splitlines()]
    assert (
        len(rows) == 53
        and rows[-1]["card"] == "CV"
        and rows[0]["code"] == CODES.make(0x3A7F, "R", 0)
    )
    assert len({r["uid"] for r in rows}) == 53
    assert json.loads(out.read_text())["cards"] == rows
    specs = json.loads(sim.read_text())
    assert sorted(specs) == sorted(r["code"] for r in rows)
    rc, o, err = shoectl(capsys, "tags", "check", "--keys", keys, "--sim-tags", sim)
    assert rc == 0, err
    assert o.count(" read ") == 53
    # a tag whose MAC key is not the card's: the check fails and says which
    code = rows[5]["code"]
    specs[code]["sdm"]["key"] = "00" * 16
    sim.write_text(json.dumps(specs))
    rc, o, err = shoectl(capsys, "tags", "check", "--keys", keys, "--sim-tags", sim)
    assert rc == 1 and "FORGED (tag_mac)" in o and "1 tag(s) failed" in err
    rc, o, err = shoectl(
        capsys,
        "tags",
        "provision",
        "--deck",
        "3A7F",
        "--back",
        "R",
        "--keys",
        keys,
        "--writer",
        "pcsc:ACS",
    )
    assert rc == 1 and "PC/SC" in err
    rc, o, err = shoectl(
        capsys, "tags", "provision", "--deck", "3A7", "--back", "R", "--keys", keys
    )
    assert rc == 1 and "4 hex digits" in err
