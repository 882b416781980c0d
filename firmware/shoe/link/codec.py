"""The payload codec: a canonical subset of CBOR (RFC 8949) for (kind, body) messages.

`encode(obj) -> bytes`; `decode(data) -> obj` raises CodecError with a short `reason` on any
malformed input and never anything else. The types, the canonical form and the reasons:
docs/protocol.md section 6.

The encoder's functions are `@micropython.native` (machine code on a board: a card's event and its
journal record are encoded on every card; docs/hardware.md section 8); CPython runs them as they
are (host_tools/_micropython.py) and tests/firmware/link/test_native.py keeps both equal.
"""
import struct
import sys

import micropython

from micropython import const

from shoe.errors import ShoeError

MAX_DEPTH = const(12)
_MAX_ITEMS = const(4096)


class CodecError(ShoeError):
    def __init__(self, reason):
        super().__init__(None, reason)


@micropython.native
def _head(out, major, n):
    m = major << 5
    if n < 24:
        out.append(m | n)
    elif n < 0x100:
        out.append(m | 24)
        out.append(n)
    elif n < 0x10000:
        out.append(m | 25)
        out.append(n >> 8)
        out.append(n & 0xFF)
    elif n < 0x100000000:
        out.append(m | 26)
        out.extend(struct.pack(">I", n))
    elif n < 0x10000000000000000:
        out.append(m | 27)
        out.extend(struct.pack(">Q", n))
    else:
        raise CodecError("int_range")


_KEYS = {}   # a dict key (str or int) -> its encoding: the keys the shoe sends are a small set
_KEYS_MAX = const(160)   # ... kept up to this many (~6 KB on a Pico), then started afresh


@micropython.native
def _key(k):
    """The encoding of a dict key. The canonical order of a map's keys is the bytewise order of
    their encodings (unsigned ints by value, then negative ints by -1-k, then text by (UTF-8
    length, UTF-8 bytes)), so a map's keys are sorted by this. Kept per key: a status reply has
    ~40 keys, and encoding them on every call was most of the ~13 KB of garbage encoding one
    left behind (a collection on a Pico running .mpy files marks ~150 KB: ~30 ms)."""
    t = type(k)
    if t is str or t is int:
        b = _KEYS.get(k)
        if b is not None:
            return b
        out = bytearray()
        _enc(out, k, 0)
        b = bytes(out)
        if len(_KEYS) >= _KEYS_MAX:
            _KEYS.clear()
        _KEYS[k] = b
        return b
    if k is True or k is False or not isinstance(k, (str, int)):
        raise CodecError("key")
    out = bytearray()   # a subclass of str or int: encoded as its base type, not kept
    _enc(out, k, 0)
    return bytes(out)


_SHAPES = {}  # tuple of a dict's keys (insertion order) -> (encoded key, key, ...) canonical
_SHAPES_MAX = const(24)   # the shapes the shoe sends over and over (a card event, a status
                          # reply and its parts), ~100 B each; then started afresh


@micropython.native
def _order(obj):
    """(encoded key, key, ...) of a dict in canonical order, kept per shape (the tuple of its
    keys): the shoe encodes a few shapes of dict over and over, so most calls sort nothing."""
    for k in obj:   # a shape holds only str and int keys: True, False and 1.0 equal 1 and 0
        t = type(k)
        if t is not str and t is not int:
            _key(k)   # raises CodecError("key"), or returns for a subclass of str or int
            break
    else:
        shape = tuple(obj)
        o = _SHAPES.get(shape)
        if o is not None:
            return o
    ks = list(obj)
    ks.sort(key=_key)
    o = []
    for k in ks:
        o.append(_key(k))
        o.append(k)
    o = tuple(o)
    if len(_SHAPES) >= _SHAPES_MAX:
        _SHAPES.clear()
    _SHAPES[tuple(obj)] = o
    return o


@micropython.native
def _enc(out, obj, depth):
    t = type(obj)  # the exact types the shoe encodes, most frequent first; subclasses below
    if t is str:
        b = obj.encode("utf-8")
        n = len(b)
        if n < 24:
            out.append(0x60 | n)
        else:
            _head(out, 3, n)
        out.extend(b)
    elif t is int:
        if 0 <= obj < 24:
            out.append(obj)
        elif obj >= 0:
            _head(out, 0, obj)
        else:
            _head(out, 1, -1 - obj)
    elif t is list or t is tuple:
        n = len(obj)
        if n and depth >= MAX_DEPTH:   # its items would lie deeper than MAX_DEPTH
            raise CodecError("depth")
        if n < 24:
            out.append(0x80 | n)
        else:
            _head(out, 4, n)
        depth += 1
        for x in obj:
            _enc(out, x, depth)
    elif t is dict:
        if depth >= MAX_DEPTH and obj:
            raise CodecError("depth")
        n = len(obj)
        if n < 24:
            out.append(0xA0 | n)
        else:
            _head(out, 5, n)
        depth += 1
        o = _order(obj)
        for i in range(0, 2 * n, 2):
            out.extend(o[i])
            _enc(out, obj[o[i + 1]], depth)
    elif t is bytes or t is bytearray or t is memoryview:
        n = len(obj)
        if n < 24:
            out.append(0x40 | n)
        else:
            _head(out, 2, n)
        out.extend(obj)
    elif obj is None:
        out.append(0xF6)
    elif obj is True:
        out.append(0xF5)
    elif obj is False:
        out.append(0xF4)
    elif t is float:
        out.append(0xFB)
        out.extend(struct.pack(">d", obj))
    elif isinstance(obj, int):
        _enc(out, int(obj), depth)
    elif isinstance(obj, str):
        _enc(out, str(obj), depth)
    elif isinstance(obj, (bytes, bytearray)):
        _enc(out, bytes(obj), depth)
    elif isinstance(obj, (list, tuple)):
        _enc(out, list(obj), depth)
    elif isinstance(obj, dict):
        _enc(out, dict(obj), depth)
    elif isinstance(obj, float):
        _enc(out, float(obj), depth)
    else:
        raise CodecError("type")


_MPY = sys.implementation.name == "micropython"
_SCRATCH = const(1024)   # the encoder's buffer on MicroPython: room kept between calls ...
_SCRATCH_KEEP = const(2048)   # ... and kept after a longer encoding up to this size
_scratch = None


def encode(obj):
    """The canonical encoding of obj (bytes). On MicroPython the encoding is built in a buffer
    kept between calls: a bytearray grows to exactly what each append needs, so building a
    600-byte status reply in a fresh one reallocated it at nearly every append (on a Pico with
    a fragmented heap each is an allocator search). CPython's bytearray grows geometrically and
    the host encodes from several threads: a fresh one there."""
    global _scratch
    if not _MPY:
        out = bytearray()
        _enc(out, obj, 0)
        return bytes(out)
    out = _scratch
    _scratch = None   # taken: an encoding that fails leaves it to the garbage collector
    if out is None:
        out = bytearray(_SCRATCH)
    out[:] = b""   # empty, its room kept (MicroPython keeps a shrunk bytearray's allocation)
    _enc(out, obj, 0)
    r = bytes(out)
    if len(r) <= _SCRATCH_KEEP:
        _scratch = out
    return r


def encode_into(out, obj):
    """Append the encoding of obj to the bytearray `out`."""
    _enc(out, obj, 0)


def _arg(data, i, info, n):
    if info < 24:
        return info, i
    if info == 24:
        w = 1
    elif info == 25:
        w = 2
    elif info == 26:
        w = 4
    elif info == 27:
        w = 8
    else:
        raise CodecError("type")
    if i + w > n:
        raise CodecError("truncated")
    v = 0
    for j in range(i, i + w):
        v = (v << 8) | data[j]
    return v, i + w


def _dec(data, i, n, depth):
    if depth > MAX_DEPTH:
        raise CodecError("depth")
    if i >= n:
        raise CodecError("truncated")
    ib = data[i]
    i += 1
    major = ib >> 5
    info = ib & 31
    if major == 7:
        if ib == 0xF6:
            return None, i
        if ib == 0xF5:
            return True, i
        if ib == 0xF4:
            return False, i
        if ib == 0xFB:
            if i + 8 > n:
                raise CodecError("truncated")
            return struct.unpack(">d", bytes(data[i:i + 8]))[0], i + 8
        raise CodecError("type")
    v, i = _arg(data, i, info, n)
    if major == 0:
        return v, i
    if major == 1:
        return -1 - v, i
    if major == 2 or major == 3:
        if v > n - i:
            raise CodecError("truncated")
        b = bytes(data[i:i + v])
        if major == 3:
            try:
                b = str(b, "utf-8")
            except Exception:
                raise CodecError("utf8")
        return b, i + v
    if v > _MAX_ITEMS or v > n - i:
        raise CodecError("too_long" if v > _MAX_ITEMS else "truncated")
    if major == 4:
        lst = []
        for _ in range(v):
            x, i = _dec(data, i, n, depth + 1)
            lst.append(x)
        return lst, i
    if major == 5:
        d = {}
        for _ in range(v):
            k, i = _dec(data, i, n, depth + 1)
            if not isinstance(k, (str, int)) or k is True or k is False:
                raise CodecError("key")
            x, i = _dec(data, i, n, depth + 1)
            d[k] = x
        return d, i
    raise CodecError("type")  # major 6 (tags) is not in the subset


def decode(data, start=0, end=None):
    """Decode exactly one item spanning data[start:end]; CodecError on anything else."""
    n = len(data) if end is None else end
    obj, i = _dec(data, start, n, 0)
    if i != n:
        raise CodecError("trailing")
    return obj
