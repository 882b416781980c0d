"""docs/protocol.md's test vectors: CPython and MicroPython produce exactly these bytes."""
import json

import pytest

from host_tools.link import host
from shoe.link import cobs, codec, crc, frame, message
from shoe.commitment import commit
from tests.firmware.link.helpers import from_json, run_fw, vectors

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
        return frame.build(v["type"], v["seq"], v["ack"], bytes.fromhex(v["payload"]), key=key,
                           tag=v.get("tag", "").encode()).hex()
    if t == "session":
        return message.mac(bytes.fromhex(v["key"]), b"SHOE2sess",
                           bytes.fromhex(v["shoe_nonce"]) + bytes.fromhex(v["host_nonce"])).hex()
    if t == "command":
        return host.seal_command(bytes.fromhex(v["key"]), v["kind"], from_json(v["body"]),
                                    v["ctr"]).hex()
    if t == "message":
        p, h = message.seal_message(bytes.fromhex(v["key"]), v["kind"], from_json(v["body"]),
                                    v["eseq"], bytes.fromhex(v["prev"]))
        return p.hex() + "/" + h.hex()
    if t == "commit":
        return commit(bytes.fromhex(v["secret"]), v["round"], v["position"], v["target"],
                      v["card"]).hex()
    raise AssertionError(t)


def expected(v):
    if v["t"] == "crc32":
        return v["crc"]
    if v["t"] == "message":
        return v["hex"] + "/" + v["head"]
    return v["hex"]


def test_there_are_vectors_of_every_kind():
    assert {v["t"] for v in VECTORS} == {"codec", "cobs", "crc32", "frame", "command", "message",
                                         "session", "commit"}
    assert any("key" in v for v in VECTORS if v["t"] == "frame")


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
        kind, body, eseq, prev, head, _ = host.open_message(bytes.fromhex(v["hex"]),
                                                               bytes.fromhex(v["key"]))
        assert (kind, eseq, head.hex()) == (v["kind"], v["eseq"], v["head"])
    if v["t"] == "commit":   # the formula docs/protocol.md gives, written out with hashlib
        import hashlib
        core = "%d %d %s %s" % (v["round"], v["position"], v["target"], v["card"])
        assert hashlib.sha256(b"SHOE1card" + bytes.fromhex(v["secret"]) + core.encode()
                              ).hexdigest()[:32] == v["hex"]


MPY_SCRIPT = r"""
import sys, json
import host
from shoe.link import cobs, codec, crc, frame, message
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
        r = hx(message.mac(unhex(v["key"]), b"SHOE2sess", unhex(v["shoe_nonce"]) +
                           unhex(v["host_nonce"])))
    elif t == "command":
        r = hx(host.seal_command(unhex(v["key"]), v["kind"], fj(v["body"]), v["ctr"]))
    elif t == "message":
        p, h = message.seal_message(unhex(v["key"]), v["kind"], fj(v["body"]), v["eseq"],
                                    unhex(v["prev"]))
        r = hx(p) + "/" + hx(h)
    elif t == "commit":
        from shoe.commitment import commit
        r = hx(commit(unhex(v["secret"]), v["round"], v["position"], v["target"], v["card"]))
    print(json.dumps(r))
"""


def test_micropython_matches_every_vector(fw_build):
    stdin = "".join(json.dumps(v) + "\n" for v in VECTORS)
    out = run_fw(fw_build, MPY_SCRIPT, stdin=stdin)
    got = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert got == [expected(v) for v in VECTORS]


def test_message_mac_is_rfc2104_hmac_sha256_truncated():
    import hmac as std_hmac
    import hashlib
    from shoe.crypto import hmac_sha256
    for key in (b"k", b"k" * 32, b"k" * 64, b"k" * 65, b"\x00" * 100):
        for core in (b"", b"abc", bytes(range(256))):
            want = std_hmac.new(key, b"TAG" + core, hashlib.sha256).digest()[:16]
            assert message.mac(key, b"TAG", core) == want == hmac_sha256(key, b"TAG" + core)[:16]
