"""docs/protocol.md's test vectors: CPython and MicroPython produce exactly these bytes."""

import json

import pytest

from host_tools.link import host
from shoe.commitment import commit
from shoe.link import cobs, codec, crc, frame, message
from shoe.link.cipher import Ctr
from tests.firmware.link.helpers import CODE_ROOM, DATA_HEAP_PRELUDE, from_json, run_fw, vectors

VECTORS = vectors()


def compute(v):
    """What this implementation makes of one vector (hex string or int)."""
    t = v["t"]
    if t == "codec":
        return codec.encode(from_json(v["value"])).hex()
    if t == "cobs":
        return cobs.encode(bytes.fromhex(v["data"])).hex()
    if t == "crc32":
        return crc.crc32(bytes.fromhex(v["data"]))
    if t == "frame":
        key = bytes.fromhex(v["key"]) if "key" in v else None
        return frame.build(
            v["type"],
            v["seq"],
            v["ack"],
            bytes.fromhex(v["payload"]),
            key=key,
            tag=v.get("tag", "").encode(),
        ).hex()
    if t == "session":
        key, both = bytes.fromhex(v["key"]), bytes.fromhex(v["shoe_nonce"] + v["host_nonce"])
        return (
            message.mac(key, b"SHOE3sess", both).hex()
            + "/"
            + message.mac(key, b"SHOE3enc", both).hex()
        )
    if t == "aes":
        import cryptolib

        return cryptolib.aes(bytes.fromhex(v["key"]), 1).encrypt(bytes.fromhex(v["plain"])).hex()
    if t == "ctr":
        return (
            Ctr(bytes.fromhex(v["key"]))
            .crypt(v["dir"], v["type"], v["seq"], bytes.fromhex(v["plain"]))
            .hex()
        )
    if t == "command":
        return host.seal_command(
            bytes.fromhex(v["key"]), v["kind"], from_json(v["body"]), v["ctr"], v["shoe"]
        ).hex()
    if t == "message":
        items = [v["kind"], from_json(v["body"]), v["eseq"], bytes.fromhex(v["prev"])]
        tag = host.MSG_TAG_V2 if v.get("form") == 2 else message.bound(message.MSG_TAG, v["shoe"])
        p, h = message.seal(bytes.fromhex(v["key"]), tag, items, True)
        return p.hex() + "/" + h.hex()
    if t == "commit":
        return commit(
            bytes.fromhex(v["secret"]), v["round"], v["position"], v["target"], v["card"]
        ).hex()
    raise AssertionError(t)


def expected(v):
    if v["t"] == "crc32":
        return v["crc"]
    if v["t"] == "message":
        return v["hex"] + "/" + v["head"]
    if v["t"] == "session":
        return v["mac"] + "/" + v["enc"]
    return v["hex"]


def test_there_are_vectors_of_every_kind():
    assert {v["t"] for v in VECTORS} == {
        "codec",
        "cobs",
        "crc32",
        "frame",
        "command",
        "message",
        "session",
        "aes",
        "ctr",
        "commit",
    }
    assert any("key" in v for v in VECTORS if v["t"] == "frame")
    assert any(v.get("form") == 2 for v in VECTORS if v["t"] == "message")


@pytest.mark.parametrize("v", VECTORS, ids=lambda v: v["t"])
def test_cpython_matches_vector(v):
    assert compute(v) == expected(v)
    if v["t"] == "codec":
        assert codec.decode(bytes.fromhex(v["hex"])) == from_json(v["value"])
    if v["t"] == "cobs":
        assert cobs.decode(bytes.fromhex(v["hex"])) == bytes.fromhex(v["data"])
    if v["t"] == "crc32":
        assert crc.crc32_table(bytes.fromhex(v["data"])) == v["crc"]
    if v["t"] == "message":
        key, payload = bytes.fromhex(v["key"]), bytes.fromhex(v["hex"])
        kind, body, eseq, prev, head, _, form = host.open_event(payload, key, v.get("shoe"))
        assert (kind, eseq, head.hex(), form) == (
            v["kind"],
            v["eseq"],
            v["head"],
            v.get("form", 3),
        )
        if form == 3:  # bound to its shoe: under another id it is no message of that shoe
            with pytest.raises(message.LinkError):
                host.open_event(payload, key, v["shoe"] + "X")
    if v["t"] == "ctr":  # the same call decrypts
        assert (
            Ctr(bytes.fromhex(v["key"]))
            .crypt(v["dir"], v["type"], v["seq"], bytes.fromhex(v["hex"]))
            .hex()
            == v["plain"]
        )
    if v["t"] == "commit":  # the formula docs/protocol.md gives, written out with hashlib
        import hashlib

        core = "%d %d %s %s" % (v["round"], v["position"], v["target"], v["card"])
        assert (
            hashlib.sha256(b"SHOE1card" + bytes.fromhex(v["secret"]) + core.encode()).hexdigest()[
                :32
            ]
            == v["hex"]
        )


MPY_SCRIPT = (
    DATA_HEAP_PRELUDE
    + r"""
import sys, json
import host
from shoe.link import cobs, codec, crc, frame, message
from shoe.link.cipher import Ctr
_ballast = _data_heap(64 * 1024)  # the code aside (frozen on a board), a device's data heap
def unhex(s):
    return bytes(int(s[i:i + 2], 16) for i in range(0, len(s), 2))
from binascii import hexlify
def hx(b):
    return hexlify(b).decode()
def fj(x):
    if isinstance(x, dict):
        if "$b" in x: return unhex(x["$b"])
        if "$map" in x: return {fj(k): fj(v) for k, v in x["$map"]}
        return {k: fj(v) for k, v in x.items()}
    if isinstance(x, list): return [fj(v) for v in x]
    return x
for line in sys.stdin:
    v = json.loads(line); t = v["t"]
    if t == "codec":
        r = hx(codec.encode(fj(v["value"])))
        assert codec.decode(unhex(v["hex"])) == fj(v["value"]), line
    elif t == "cobs":
        r = hx(cobs.encode(unhex(v["data"])))
        assert cobs.decode(unhex(v["hex"])) == unhex(v["data"])
    elif t == "crc32":
        r = crc.crc32(unhex(v["data"]))
        assert crc.crc32_table(unhex(v["data"])) == r
    elif t == "frame":
        key = unhex(v["key"]) if "key" in v else None
        r = hx(frame.build(v["type"], v["seq"], v["ack"], unhex(v["payload"]), key=key,
                           tag=v.get("tag", "").encode()))
    elif t == "session":
        both = unhex(v["shoe_nonce"]) + unhex(v["host_nonce"])
        r = (hx(message.mac(unhex(v["key"]), b"SHOE3sess", both)) + "/" +
             hx(message.mac(unhex(v["key"]), b"SHOE3enc", both)))
    elif t == "aes":
        import cryptolib
        r = hx(cryptolib.aes(unhex(v["key"]), 1).encrypt(unhex(v["plain"])))
    elif t == "ctr":
        r = hx(Ctr(unhex(v["key"])).crypt(v["dir"], v["type"], v["seq"], unhex(v["plain"])))
    elif t == "command":
        r = hx(host.seal_command(unhex(v["key"]), v["kind"], fj(v["body"]), v["ctr"], v["shoe"]))
    elif t == "message":
        tag = b"SHOE1msg" if v.get("form") == 2 else message.bound(message.MSG_TAG, v["shoe"])
        p, h = message.seal(unhex(v["key"]), tag, [v["kind"], fj(v["body"]), v["eseq"],
                                                   unhex(v["prev"])], True)
        r = hx(p) + "/" + hx(h)
    elif t == "commit":
        from shoe.commitment import commit
        r = hx(commit(unhex(v["secret"]), v["round"], v["position"], v["target"], v["card"]))
    print(json.dumps(r))
"""
)


def test_micropython_matches_every_vector(fw_build):
    stdin = "".join(json.dumps(v) + "\n" for v in VECTORS)
    out = run_fw(fw_build, MPY_SCRIPT, stdin=stdin, heap=CODE_ROOM)
    got = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert got == [expected(v) for v in VECTORS]


def test_message_mac_is_rfc2104_hmac_sha256_truncated():
    import hashlib
    import hmac as std_hmac

    from shoe.crypto import hmac_sha256

    for key in (b"k", b"k" * 32, b"k" * 64, b"k" * 65, b"\x00" * 100):
        for core in (b"", b"abc", bytes(range(256))):
            want = std_hmac.new(key, b"TAG" + core, hashlib.sha256).digest()[:16]
            assert message.mac(key, b"TAG", core) == want == hmac_sha256(key, b"TAG" + core)[:16]
