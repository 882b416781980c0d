"""shoe.crypto.hmac_sha256 equals the standard library's HMAC for any key and message, the first
time a key is seen and every time after (its pads are kept: one cache for every HMAC, the link's
messages included, emptied when full), for bytes and bytearray keys, keys longer than a block
included; the same under MicroPython."""

import hashlib
import hmac

from hypothesis import given, settings, strategies as st

from shoe import crypto
from tests.mpy import run_code


@settings(max_examples=300)
@given(
    keys=st.lists(st.binary(max_size=100), min_size=1, max_size=8),
    msg=st.binary(max_size=300),
    mutable=st.booleans(),
)
def test_hmac_equals_the_standard_one_for_fresh_and_kept_keys(keys, msg, mutable):
    for _ in range(2):
        for k in keys:
            key = bytearray(k) if mutable else k
            assert crypto.hmac_sha256(key, msg) == hmac.new(k, msg, hashlib.sha256).digest()
    assert len(crypto._pads) <= crypto.PADS_MAX


def test_one_pad_cache_for_the_link_and_every_other_hmac(monkeypatch):
    """shoe.link.message.mac takes its pads from shoe.crypto's cache (one cache, one
    eviction): a key used by either is computed once; a full cache is emptied, not grown."""
    from shoe.link import message

    monkeypatch.setattr(crypto, "_pads", {})
    monkeypatch.setattr(crypto, "PADS_MAX", 3)
    k = b"k" * 16
    assert message.mac(k, b"TAG", b"core") == hmac.new(k, b"TAGcore", hashlib.sha256).digest()[:16]
    assert list(crypto._pads) == [k]
    crypto.hmac_sha256(k, b"x")
    assert list(crypto._pads) == [k]
    sizes = []
    for i in range(5):
        message.mac(bytes([i]) * 20, b"T", b"c")
        sizes.append(len(crypto._pads))
    assert sizes == [2, 3, 1, 2, 3]  # emptied when a 4th key came


def test_hmac_under_micropython():
    cases = [
        (bytes([i % 7]) * n, bytes(range(m % 256)) * 2)
        for i, (n, m) in enumerate(
            [(0, 0), (1, 5), (20, 64), (64, 3), (65, 100), (100, 255), (16, 17)]
        )
    ]
    code = "from shoe.crypto import hmac_sha256\n" + "".join(
        "print(hmac_sha256(%r, %r).hex())\n" % (k, m) for k, m in cases * 2
    )
    got = run_code(code).split()
    want = [hmac.new(k, m, hashlib.sha256).hexdigest() for k, m in cases * 2]
    assert got == want


@given(st.binary(max_size=40), st.binary(max_size=40), st.integers(0, 39), st.integers(1, 255))
def test_equal_is_byte_string_equality(a, b, pos, flip):
    """crypto.equal (MAC checks) answers exactly ==, leading zero bytes and all, on bytes,
    bytearrays and memoryviews."""
    from shoe.crypto import equal

    c = bytearray(a)
    if c:
        c[pos % len(c)] ^= flip
    for x, y in (
        (a, b),
        (a, a),
        (a, bytes(c)),
        (b"\x00" + a, b"\x00" + a),
        (b"\x00" + a, a + b"\x00"),
    ):
        assert equal(x, y) == (x == y)
        assert equal(bytearray(x), memoryview(y)) == (x == y)


def test_equal_under_micropython():
    from tests.mpy import json_lines, run_code

    code = (
        "import json\nfrom shoe.crypto import equal\n"
        "for a, b in [(b'', b''), (b'\\x00', b'\\x00\\x00'), (b'\\x00\\x01', b'\\x00\\x01'),\n"
        "             (b'\\x00\\x01', b'\\x01\\x00'), (b'abc', bytearray(b'abd')),\n"
        "             (memoryview(b'xyz')[1:], b'yz')]:\n"
        "    print(json.dumps({'eq': equal(a, b)}))\n"
    )
    assert [d["eq"] for d in json_lines(run_code(code))] == [True, False, True, False, False, True]
