"""Fuzzing the frame decoder, the codec and the command parser: never a crash, never a state
change, always a counted reason. CPython with hypothesis; MicroPython on a corpus built from the
same generators (random bytes, truncated, oversized, bit-flipped frames, wrong versions, bad MACs,
replays), which must give exactly the same counters as CPython."""

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host_tools.link.host import make_endpoint, seal_command
from host_tools.sim.memstore import MemoryStore
from shoe.link import cobs, codec, frame
from shoe.link.cipher import Ctr
from shoe.link.message import mac
from tests.firmware.link.helpers import run_fw

KEY = b"k" * 32
# fixed first nonces (Endpoint option `nonce`): the session key is known, so the corpus can carry
# frames a host holding it would send, and both runtimes see exactly the same session
S_NONCE, H_NONCE = b"S" * 8, b"H" * 8
SKEY = mac(KEY, b"SHOE3sess", S_NONCE + H_NONCE)
EKEY = mac(KEY, b"SHOE3enc", S_NONCE + H_NONCE)
HELLO_K = {"key": KEY, "tag": b"SHOE3hello"}


def host_frame(ftype, seq, ack, payload, key=SKEY):
    """A session frame as the host holding the session keys sends it: payload encrypted (host ->
    shoe direction), then MAC'd."""
    return frame.build(
        ftype, seq, ack, Ctr(EKEY).crypt(2, ftype, seq, payload), key=key, tag=b"SHOE3h"
    )


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.text(max_size=20)
    | st.binary(max_size=20)
    | st.floats(allow_nan=False),
    lambda kids: (
        st.lists(kids, max_size=5)
        | st.dictionaries(st.text(max_size=8) | st.integers(-5, 99), kids, max_size=5)
    ),
    max_leaves=20,
)


@settings(deadline=None)
@given(values)
def test_codec_round_trips_canonically(v):
    b = codec.encode(v)
    assert codec.decode(b) == v
    assert codec.encode(codec.decode(b)) == b


@settings(deadline=None)
@given(st.binary(max_size=300))
def test_codec_decode_never_raises_anything_but_codec_error(b):
    try:
        codec.decode(b)
    except codec.CodecError as e:
        assert e.reason in (
            "truncated",
            "trailing",
            "type",
            "depth",
            "too_long",
            "key",
            "utf8",
            "int_range",
        )


@settings(deadline=None)
@given(st.binary(max_size=600))
def test_cobs_round_trip_and_no_zero(b):
    e = cobs.encode(b)
    assert 0 not in e and len(e) <= len(b) + len(b) // 254 + 1
    assert cobs.decode(e) == b


@settings(deadline=None)
@given(st.binary(max_size=900), st.integers(0, 65535), st.integers(0, 65535))
def test_any_bit_flip_of_a_frame_is_rejected(payload, seq, ack):
    w = bytearray(frame.build(frame.DATA, seq, ack, payload))
    got = []
    df = frame.Deframer()
    df.feed(bytes(w), lambda *a: got.append((a[0], a[1], a[2], bytes(a[3]))))
    assert got == [(frame.DATA, seq, ack, payload)]
    i = len(payload) % (len(w) - 1)
    w[i] ^= 1 << (seq % 8)
    got.clear()
    df.feed(bytes(w), lambda *a: got.append(a))
    assert got == []


def fresh_shoe(record=None):
    st_ = MemoryStore()
    ep = make_endpoint("shoe", KEY, store=st_, shoe_id="F", sid=77, nonce=S_NONCE)
    host = make_endpoint("host", KEY, sid=88, nonce=H_NONCE)
    # bring the session up so fuzz reaches the command parser too
    for t in range(0, 100, 10):
        host.receive(ep.transmit(t), t)
        h = host.transmit(t)
        ep.receive(h, t)
        if record is not None:
            record.append("h%d %s\n" % (t, bytes(h).hex()))
    assert ep.up and host.up and ep._skey == SKEY
    return ep, st_, host


def mpy_stdin(chunks):
    """The host's side of the same handshake (fixed nonces: the same bytes), then the corpus:
    the MicroPython shoe never loads the host half, as on a board."""
    hs = []
    fresh_shoe(hs)
    return "".join(hs) + "".join(c.hex() + "\n" for c in chunks)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=200), max_size=20))
def test_random_bytes_never_crash_or_deliver(chunks):
    ep, store, _ = fresh_shoe()
    for c in chunks:
        assert ep.receive(c, 200) == []
    ep.transmit(300)
    assert store.ctr == 0 and "internal" not in ep.errors()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_framed_command_fuzz_gets_reasoned_errors(data):
    """Valid frames carrying wrong, forged, replayed, malformed or oversized commands."""
    ep, store, host = fresh_shoe()
    kind = data.draw(st.sampled_from(["status", "open_round", "_ack", "_x"]))
    body = data.draw(values)
    ctr = data.draw(st.integers(-3, 5))
    key = data.draw(st.sampled_from([KEY, b"w" * 32]))
    try:
        payload = seal_command(key, kind, body, ctr, "F")
    except codec.CodecError:
        return
    payload = data.draw(
        st.sampled_from([payload, payload[:-3], payload + b"\x00", b"\x85" + payload[1:]])
    )
    if len(payload) > frame.MAX_PAYLOAD:
        return
    out = ep.receive(host_frame(frame.DATA, 1, 0, payload), 500)
    err = ep.errors()
    assert "internal" not in err
    if out:
        assert key == KEY and ctr >= 1 and kind[0] != "_" and store.ctr == ctr
    else:
        assert store.ctr in (0, ctr)
        reply = host.receive(ep.transmit(600), 600)
        if kind != "_ack" or key != KEY:
            assert reply and reply[0][0] == "error" and reply[0][1]["reason"]


def corpus(seed=11, n=400):
    """Byte strings for both runtimes: random, truncated, oversized, flipped, wrong-version."""
    rng = random.Random(seed)
    good = [
        host_frame(frame.DATA, 1 + i % 3, 0, seal_command(KEY, "status", {"i": i}, 1 + i % 4, "F"))
        for i in range(8)
    ]
    forged = [
        host_frame(frame.DATA, 1 + i % 3, 0, seal_command(b"w" * 32, "status", {}, 9 + i, "F"))
        for i in range(4)
    ]
    forged += [
        host_frame(frame.DATA, 1 + i % 3, 0, seal_command(KEY, "status", {}, 9 + i, "G"))
        for i in range(2)
    ]  # a command for another shoe
    forged += [
        host_frame(
            frame.DATA, 1 + i % 3, 0, seal_command(KEY, "status", {}, 9 + i, "F"), key=b"w" * 16
        )
        for i in range(2)
    ]  # bad frame MAC
    hellos = [
        frame.build(frame.HELLO, 0, 0, codec.encode(h), **HELLO_K)
        for h in (
            {"v": 2, "role": "host", "sid": 5, "n": b"n" * 8, "pn": b"", "up": False},
            {"v": 3, "role": "shoe", "sid": 7, "n": b"m" * 8, "pn": b""},
            [1, 2, 3],
            "hello",
        )
    ]
    hellos.append(
        frame.build(
            frame.HELLO,
            0,
            0,
            codec.encode(  # another key
                {"v": 3, "role": "host", "sid": 6, "n": b"o" * 8, "pn": b"", "up": False}
            ),
            key=b"w" * 32,
            tag=b"SHOE3hello",
        )
    )
    out = [forged[0], forged[5]]  # first, at seqs 1 and 2: a wrong message MAC, another shoe's
    for i in range(n):
        k = i % 8
        if k == 6:
            out.append(rng.choice(forged))  # good frames, bad MACs
            continue
        if k == 7:
            out.append(rng.choice(hellos))  # wrong version, wrong key, wrong role, junk
            continue
        if k == 0:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))))
        elif k == 1:
            g = rng.choice(good)
            out.append(g[: rng.randrange(1, len(g))] + b"\x00")
        elif k == 2:
            big = bytes(rng.randrange(1, 256) for _ in range(1100 + rng.randrange(500)))
            out.append(b"\x00" + big + b"\x00")
        elif k == 3:
            g = bytearray(rng.choice(good))
            g[rng.randrange(len(g) - 1)] ^= 1 << rng.randrange(8)
            out.append(bytes(g))
        elif k == 4:
            out.append(
                frame.build(
                    rng.randrange(0, 9),
                    rng.randrange(65536),
                    0,
                    b"x",
                    version=rng.choice([0, 1, 255]),
                )
            )
        else:
            out.append(rng.choice(good))  # valid frames, some replays of the same counter
    return out


def pieces(chunks, n=128):
    """The corpus as the bytes arrive on a UART: in pieces of at most n bytes."""
    return [c[i : i + n] for c in chunks for i in range(0, len(c), n)]


def run_corpus_cpython(chunks):
    ep, store, _ = fresh_shoe()
    delivered = []
    for c in chunks:
        for kind, _body, ctr, _ in ep.receive(c, 200):
            delivered.append([kind, ctr])
        ep.transmit(210)
    return {"errors": ep.errors(), "delivered": delivered, "ctr": store.ctr}


# Not a memory test (the 64 KB data heap is tests/firmware/app's and the virtual board's): the
# unix port holds the link's bytecode in this heap too, and the script's stdin lines grow their
# buffers as they come. At 64k the run sat at the edge of fragmentation: moving a few bytes of
# the link's code (open_command's key list) made a 320-byte line buffer fail to find room.
_FUZZ_HEAP = "128k"

MPY_FUZZ = r"""
import sys, json
from shoe.link.endpoint import Endpoint
from memstore import MemoryStore
K = b"k" * 32
store = MemoryStore()
ep = Endpoint("shoe", K, store=store, shoe_id="F", sid=77, nonce=b"S" * 8)
from binascii import unhexlify
delivered = []
for line in sys.stdin:
    if line[0] == "h":  # the handshake, as the host sent it
        t, _, h = line[1:].strip().partition(" ")
        ep.transmit(int(t))
        ep.receive(unhexlify(h), int(t))
        continue
    for kind, body, ctr, _ in ep.receive(unhexlify(line.strip()), 200):
        delivered.append([kind, ctr])
    ep.transmit(210)
print(json.dumps({"errors": ep.errors(), "delivered": delivered, "ctr": store.ctr}))
"""


def test_micropython_survives_the_fuzz_corpus_exactly_like_cpython(fw_build):
    chunks = pieces(corpus())
    want = run_corpus_cpython(chunks)
    out = run_fw(fw_build, MPY_FUZZ, stdin=mpy_stdin(chunks), heap=_FUZZ_HEAP)
    got = json.loads(out.strip().splitlines()[-1])
    assert got == json.loads(json.dumps(want))
    assert "internal" not in got["errors"]
    for r in (
        "frame_crc",
        "frame_oversize",
        "frame_version",
        "frame_mac",
        "bad_mac",
        "version",
        "bad_key",
        "bad_hello",
    ):
        assert got["errors"].get(r, 0) > 0, r


@settings(deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=30) | st.integers(-(2**40), 2**40), st.integers(0, 3), max_size=12
    )
)
def test_map_keys_are_in_bytewise_order_of_their_encodings(d):
    """RFC 8949 s4.2.1 canonical order, checked against the definition itself."""
    # encoded items are self-delimiting, so sorting key+value bytes sorts by the key bytes
    encoded = sorted(codec.encode(k) + codec.encode(v) for k, v in d.items())
    assert codec.encode(d) == bytes([0xA0 + len(d)]) + b"".join(encoded)  # len(d) <= 12


def _frame_of(kind, body, ctr, key, seq, cut, flip):
    """A framed command, possibly truncated (cut) or with one byte flipped."""
    try:
        w = bytearray(host_frame(frame.DATA, seq, 0, seal_command(key, kind, body, ctr, "F")))
    except (codec.CodecError, ValueError):
        return b"\x00"
    if flip is not None:
        w[flip % len(w)] ^= 0x41
    return bytes(w[:cut] if cut else w)


hostile = st.one_of(
    st.binary(max_size=120),
    st.builds(
        _frame_of,
        st.sampled_from(["status", "open_round", "_ack", "x" * 40]),
        values,
        st.integers(-2, 6),
        st.sampled_from([KEY, b"w" * 32]),
        st.integers(0, 6),
        st.none() | st.integers(1, 200),
        st.none() | st.integers(0, 500),
    ),
)


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(hostile, min_size=40, max_size=80))
def test_hypothesis_corpus_gives_identical_results_on_micropython(fw_build, chunks):
    """Hypothesis draws the hostile input; the MicroPython shoe must survive it and count exactly
    what the CPython one counts (never a crash, the same reasons, the same deliveries)."""
    chunks = [c for c in pieces(chunks) if c]
    want = run_corpus_cpython(chunks)
    out = run_fw(fw_build, MPY_FUZZ, stdin=mpy_stdin(chunks), heap=_FUZZ_HEAP)
    got = json.loads(out.strip().splitlines()[-1])
    assert got == json.loads(json.dumps(want))
    assert "internal" not in got["errors"]


@settings(deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["card", "round", "a", "bb", "target", 7, -2]), values, max_size=5
        ),
        min_size=1,
        max_size=60,
    )
)
def test_map_keys_stay_canonical_when_shapes_repeat(dicts):
    """The encoder keeps each dict shape's key order (the shoe encodes the same few shapes over
    and over): the same keys in another insertion order, other values, and more shapes than it
    keeps must all still give the canonical encoding of the definition."""
    for d in dicts + [dict(reversed(list(d.items()))) for d in dicts]:
        encoded = sorted(codec.encode(k) + codec.encode(v) for k, v in d.items())
        assert codec.encode(d) == bytes([0xA0 + len(d)]) + b"".join(encoded)
