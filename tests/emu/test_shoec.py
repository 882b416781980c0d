"""The frozen image's C fast paths (cmodules/shoec) give what the Python they stand in for gives,
on the emulated Pico running the frozen image (`make pico-firmware`; skipped without it).

`shoec.cbor` encodes the common types and returns None for everything else, which
shoe.link.codec then encodes in Python; `shoec.hmac_sha256` is the HMAC of shoe.crypto and
shoe.link.message with the pads' SHA-256 states kept for the last 4 keys. The values are sent to
the chip as a file and eval()'d there; each is encoded by the C encoder, by the Python encoder
(codec.encode_py) and by codec.encode (C first), and compared with CPython's codec.encode: the
same bytes, or the same error. No floats: the RP2040's MicroPython has single-precision floats
(the C encoder leaves them to Python anyway; tests/firmware/link/test_native.py covers them).
"""

import hmac
import random
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host_tools import frozen
from host_tools.deploy import Device
from host_tools.sim import emu as _emu
from shoe.link import codec
from tests.firmware.link.test_native import FIXED

pytestmark = pytest.mark.skipif(
    not frozen.DEFAULT_UF2.is_file(), reason="no frozen image (make pico-firmware)"
)

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**66), max_value=2**66)
    | st.integers(min_value=-(2**31), max_value=2**31)
    | st.integers(min_value=-300, max_value=70000)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
    | st.binary(max_size=300)
)
_keys = st.text(max_size=30, alphabet=st.characters(blacklist_categories=("Cs",))) | st.integers(
    min_value=-(2**31), max_value=2**31
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=30)
        | st.tuples(inner, inner)
        | st.dictionaries(_keys, inner, max_size=12)
    ),
    max_leaves=40,
)


def _dnest(d):
    v = 1
    for _ in range(d):
        v = {"k": v}
    return v


# the shapes the shoe encodes on every card (the C encoder must take them: that is its point)
COMMON = [
    [
        "card",
        {"round": 12, "position": 7, "target": "dealer", "commit": bytes(range(16))},
        1234,
        bytes(16),
    ],
    ["P", 1234, [bytes(120)], None, [[[0, 4, 12], [8, "bd"], 2], [[0, 10], 1796487479]], 77],
    {"k%02d" % i: i for i in range(24)},
]


def _has_float(v):
    if isinstance(v, float):
        return True
    if isinstance(v, dict):
        return any(_has_float(k) or _has_float(x) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return any(_has_float(x) for x in v)
    return False


# test_native's edges of the Python encoder (but floats), and the C encoder's own
EDGES = (
    COMMON
    + [v for v in FIXED if not _has_float(v)]
    + [
        2**30 - 1,
        2**30,
        -(2**30),
        -(2**30) - 1,
        "x" * 300,
        "\u00e9\u20ac" * 13,
        memoryview(b"ab"),
        (1, [2, (3,)]),
        list(range(300)),
        {"b": 1, "a": 2, 10: 3, -1: 4, "aa": 5, 0: 6, -2: 7, 24: 8},
        {"b": 1, "a": 2, 10: 3, -1: 4, "aa": 5, 0: 6, -2: 7, 24: 8, "": 9},
        {i: i for i in range(64)},
        {i: i for i in range(65)},
        {"\u00e9": 1, "zz": 2, "\u20ac": 3},
        {2**40: 1},
        [{1: 2}, {True: 2}],
        _dnest(12),
        _dnest(13),
        [1, [2, {"a": set()}]],
    ]
)

RUN = r"""
import shoec
from binascii import hexlify
from shoe.link import codec
def enc(f, v):
    try:
        b = f(v)
    except codec.CodecError as e:
        return "error " + e.reason
    return "none" if b is None else hexlify(b).decode()
for line in open("/values.txt"):
    v = eval(line)
    print(enc(shoec.cbor, v), enc(codec.encode_py, v), enc(codec.encode, v))
print("done")
"""


def _cpython(v):
    try:
        return codec.encode(v).hex()
    except codec.CodecError as e:
        return "error " + e.reason


@pytest.fixture(scope="module")
def chip():
    """The frozen image on a fresh emulated Pico (no main.py: the REPL is free)."""
    with tempfile.TemporaryDirectory() as d:
        with _emu.Emulator(Path(d) / "pico", uf2=str(frozen.DEFAULT_UF2)) as e:
            with Device(e.urls["repl"], timeout=120, op_timeout=600) as dev:
                yield dev


def _src(v):
    return "memoryview(%r)" % bytes(v) if isinstance(v, memoryview) else repr(v)


def _on_chip(dev, values):
    dev.write_file("/values.txt", "".join(_src(v) + "\n" for v in values).encode())
    dev._guard.deadline = time.monotonic() + 600
    out, err = dev.t.exec_raw(RUN, timeout=600)
    assert not err, err.decode()
    lines = out.decode().split("\n")
    assert lines[-2].strip() == "done", out[-300:]
    return [line.split() for line in lines[: len(values)]]


def _check(dev, values):
    got = _on_chip(dev, values)
    assert len(got) == len(values)
    for v, row in zip(values, got):
        c, py, both = row[0], " ".join(row[1:-1]), row[-1]
        want = _cpython(v)
        if want.startswith("error"):  # an error is Python's to raise: both columns say it
            py, both = " ".join(row[1:3]), " ".join(row[3:])
            assert (c, py, both) == ("none", want, want), v
        else:
            assert py == want and both == want, v
            assert c in ("none", want), v
    return got


def test_the_c_encoder_takes_the_cards_shapes_and_every_edge_equals_cpython(chip):
    got = _check(chip, EDGES)
    for v, row in zip(COMMON, got):
        assert row[0] != "none", v  # what every card encodes goes through C


@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_values, min_size=300, max_size=300))
def test_the_c_encoder_equals_cpython_on_random_values(chip, values):
    _check(chip, values)


HMAC_RUN = r"""
import shoec
from binascii import hexlify, unhexlify
def b(x):
    return b"" if x == "-" else unhexlify(x)
for line in open("/hmac.txt"):
    k, t, d, mut = line.split()
    k = bytearray(b(k)) if mut == "1" else b(k)
    print(hexlify(shoec.hmac_sha256(k, b(t), b(d))).decode())
    if mut == "1":   # the same object, changed in place: the kept pads must not answer
        k[0] ^= 1
        print(hexlify(shoec.hmac_sha256(k, b(t), b(d))).decode())
print("done")
"""


def _hex(b):
    return b.hex() or "-"


def test_the_c_hmac_equals_cpythons_over_key_sizes_and_more_keys_than_it_keeps(chip):
    rng = random.Random(20261205)
    keys = [rng.randbytes(n) for n in (32, 32, 16, 64, 65, 100, 1, 0)]
    rows = []
    for i in range(60):  # 8 keys in turn: the 4 kept slots are replaced over and over
        k = keys[i % len(keys)] if i % 7 else keys[0]
        t = rng.randbytes(rng.choice((0, 8, 14)))
        d = rng.randbytes(rng.choice((0, 1, 40, 55, 56, 64, 119, 300)))
        rows.append((k, t, d, "1" if i % 11 == 5 and k else "0"))
    text = "".join("%s %s %s %s\n" % (_hex(k), _hex(t), _hex(d), m) for k, t, d, m in rows)
    chip.write_file("/hmac.txt", text.encode())
    chip._guard.deadline = time.monotonic() + 600
    out, err = chip.t.exec_raw(HMAC_RUN, timeout=600)
    assert not err, err.decode()
    got = out.decode().split()
    assert got[-1] == "done"
    want = []
    for k, t, d, m in rows:
        want.append(hmac.new(k, t + d, "sha256").hexdigest())
        if m == "1":
            k2 = bytes([k[0] ^ 1]) + k[1:]
            want.append(hmac.new(k2, t + d, "sha256").hexdigest())
    assert got[:-1] == want


LINK_RUN = r"""
import shoec
from binascii import hexlify, unhexlify
def b(x):
    return b"" if x == "-" else unhexlify(x)
for line in open("/link.txt"):
    f = line.split()
    if f[0] == "frame":
        key = None if f[6] == "none" else b(f[6])
        w = shoec.frame(int(f[1]), int(f[2]), int(f[3]), int(f[4]), b(f[5]), key, b(f[7]))
    else:
        w = shoec.ctr(b(f[1]), int(f[2]), int(f[3]), int(f[4]), b(f[5]))
    print("none" if w is None else (hexlify(w).decode() or "-"))
print("done")
"""


def _payloads(rng):
    """Payloads at COBS's edges: empty, zeros, runs of 253/254/255 non-zero bytes (a run of 254
    is a whole block), zeros between them, random bytes, the largest and one over."""
    nz = lambda n: bytes(rng.randrange(1, 256) for _ in range(n))  # noqa: E731
    out = [b"", b"\0", b"\0" * 5, nz(1), nz(253), nz(254), nz(255), nz(254) + b"\0" + nz(254)]
    out += [nz(248), nz(247) + b"\0", bytes(1006), nz(1006), nz(1007), bytes(1200)]
    out += [rng.randbytes(rng.randrange(0, 1007)) for _ in range(40)]
    return out


def test_the_c_frame_and_counter_mode_equal_the_python_link(chip):
    from shoe.link import cipher, frame

    rng = random.Random(5)
    rows, want = [], []
    keys = [None, b"", rng.randbytes(32), rng.randbytes(32), rng.randbytes(16)]
    for i, p in enumerate(_payloads(rng)):
        ver, ftype = (3, 1 + i % 6) if i % 9 else (rng.randrange(256), rng.randrange(256))
        seq, ack = rng.randrange(65536), rng.randrange(65536)
        key, tag = keys[i % len(keys)], rng.randbytes(rng.choice((0, 8, 14)))
        k = "none" if key is None else _hex(key)
        rows.append("frame %d %d %d %d %s %s %s" % (ver, ftype, seq, ack, _hex(p), k, _hex(tag)))
        try:
            want.append(frame.build(ftype, seq, ack, p, ver, key, tag).hex())
        except ValueError:
            want.append("none")  # over MAX_PAYLOAD: C says None, Python raises too_big
    # runs of exactly 254 and 508 non-zero bytes in the frame (a header without zeros, the
    # payload, then the zero MAC of a frame without a key): a whole block, then the zero
    nz = lambda n: bytes(rng.randrange(1, 256) for _ in range(n))  # noqa: E731
    for p in (nz(248), nz(502), nz(247), nz(249)):
        rows.append("frame 3 1 257 257 %s none -" % _hex(p))
        want.append(frame.build(1, 257, 257, p).hex())
    ckeys = [rng.randbytes(16) for _ in range(3)]  # 3 keys through 2 kept schedules
    for i in range(60):
        key = ckeys[i % 3] if i % 4 else ckeys[0]
        d, ftype, seq = rng.choice((0, 1)), rng.choice((1, 6)), rng.randrange(65536)
        data = rng.randbytes(rng.choice((0, 1, 15, 16, 17, 120, 255, 256 * 16 + 3)))
        rows.append("ctr %s %d %d %d %s" % (_hex(key), d, ftype, seq, _hex(data)))
        want.append(cipher.Ctr(key).crypt(d, ftype, seq, data).hex() or "-")
    chip.write_file("/link.txt", ("\n".join(rows) + "\n").encode())
    chip._guard.deadline = time.monotonic() + 600
    out, err = chip.t.exec_raw(LINK_RUN, timeout=600)
    assert not err, err.decode()
    got = out.decode().split()
    assert got[-1] == "done"
    assert got[:-1] == want
    assert want.count("none") == 2  # the two payloads over the limit


SEAL_RUN = r"""
import shoec
from binascii import hexlify
from shoe.link import message
def h(x):
    return "-" if x is None else (hexlify(x).decode() or "-")
for line in open("/seal.txt"):
    key, tag, head, items = eval(line)
    r = shoec.seal(key, tag, items, head)
    py = message.seal_py(key, tag, items, head)
    both = message.seal(key, tag, items, head)
    print("none" if r is None else h(r[0]) + "/" + h(r[1]), h(py[0]) + "/" + h(py[1]),
          h(both[0]) + "/" + h(both[1]))
print("done")
"""


def test_the_c_seal_equals_the_python_envelope_and_leaves_the_rest_to_it(chip):
    """shoec.seal (encode, MAC, chain hash and envelope in one call) gives message.seal_py's
    bytes for the link's messages; a list the C encoder leaves to Python, a tuple or a list of
    23 items or more gives None, and message.seal then gives Python's bytes."""
    from shoe.link import message

    rng = random.Random(20261206)
    rows = []
    for i in range(40):
        key = rng.randbytes(rng.choice((16, 32, 70)))
        tag = message.bound(message.MSG_TAG, rng.choice(("", "T", "shoe-0042")))
        body = {
            "round": i,
            "position": i % 36,
            "target": str(1 + i % 6),
            "commit": rng.randbytes(16),
        }
        items = ["card", body, i if i % 3 else 0, rng.randbytes(16) if i % 3 else b""]
        rows.append((key, tag, bool(i % 3), items))
    rows.append((b"k" * 32, b"t", True, ["reply", {"re": 1, "x": 2**40}, 3, bytes(16)]))
    rows.append((b"k" * 32, b"t", False, list(range(22))))  # the largest head it takes
    leave = [
        (b"k" * 32, b"t", True, ["f", 1.5, 1, b""]),  # a float: Python's
        (b"k" * 32, b"t", False, list(range(23))),  # the head would need two bytes
        (b"k" * 32, b"t", False, ("a", 1)),  # not a list
    ]
    chip.write_file("/seal.txt", "".join(repr(r) + "\n" for r in rows + leave).encode())
    chip._guard.deadline = time.monotonic() + 600
    out, err = chip.t.exec_raw(SEAL_RUN, timeout=600)
    assert not err, err.decode()
    got = [line.split() for line in out.decode().strip().split("\n")]
    assert got[-1] == ["done"]
    for (key, tag, head, items), (c, py, both) in zip(rows, got):
        payload, hh = message.seal_py(key, tag, items, head)
        want = payload.hex() + "/" + (hh.hex() if hh is not None else "-")
        assert (c, py, both) == (want, want, want), items
    for _, (c, py, both) in zip(leave, got[len(rows) :]):
        assert c == "none" and both == py
    assert len(got) == len(rows) + len(leave) + 1


def test_the_firmware_takes_the_c_paths_on_the_frozen_image(chip):
    """The firmware's Python finds shoec where it runs (a renamed import would fall back to
    Python silently: slower, nothing else)."""
    code = (
        "from shoe import crypto\nfrom shoe.link import cipher, codec, frame\n"
        "c = cipher.Ctr(bytes(16))\n"
        "from shoe.link import message\n"
        "print(codec._cbor is not None, frame._cframe is not None, crypto.c_hmac is not None, "
        "c._aes is None, message._cseal is not None)\n"
    )
    chip._guard.deadline = time.monotonic() + 600
    out, err = chip.t.exec_raw(code, timeout=600)
    assert not err, err.decode()
    assert out.decode().split() == ["True"] * 5
