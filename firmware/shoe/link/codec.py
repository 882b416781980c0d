"""The payload codec: a canonical subset of CBOR (RFC 8949) for (kind, body) messages.

`encode(obj) -> bytes`; `decode(data) -> obj` raises CodecError with a short `reason` on any
malformed input and never anything else. The types, the canonical form and the reasons:
docs/protocol.md section 6.

The encoder's functions are machine code in the frozen image (the `# frozen:` marker above each,
host_tools/flashnative.py: a card's event and its journal record are encoded on every card;
docs/hardware.md section 8) and bytecode elsewhere; tests/firmware/link/test_native.py keeps the
native build equal to CPython. In the frozen image a C encoder (cmodules/shoec, `shoec.cbor`)
takes the common types first and leaves the rest to them; tests/emu/test_shoec.py keeps it equal
to CPython on the emulated Pico.
"""
import struct
import sys

from micropython import const

from shoe.errors import ShoeError

MAX_DEPTH = const(12)
_MAX_ITEMS = const(4096)


class CodecError(ShoeError):
    def __init__(self, reason):
        super().__init__(None, reason)


# frozen: @micropython.native
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


_MPY = sys.implementation.name == "micropython"   # a str is a buffer of its UTF-8 bytes there

_SHAPES = {}  # tuple of a dict's keys (insertion order) -> (text?, the keys in canonical order)
_SHAPES_MAX = const(8)   # the shapes the shoe sends over and over (a card event, a status
                         # reply's parts): two tuples of its keys each; then started afresh


# frozen: @micropython.native
def _order(obj):
    """(text, key, key, ...): the keys of a dict in canonical order, `text` True when each is
    a str of under 24 ASCII characters (its encoding is its length's byte and the str itself).
    Kept per shape (the tuple of its keys): the shoe encodes a few shapes of dict over and
    over, so most calls sort nothing. Sorting a status reply's 24 keys at every call, each key
    encoded to be compared, was most of the ~13 KB of garbage encoding one left behind (a
    collection on a Pico running .mpy files marks ~150 KB: ~30 ms)."""
    for k in obj:   # a shape holds only exact str and int keys (True, False and 1.0 equal 1
        t = type(k)  # and 0; a str subclass may equal a str and hash apart from it)
        if t is not str and t is not int:
            return _sorted(obj)   # raises CodecError("key"), or a subclass's order, not kept
    shape = tuple(obj)
    o = _SHAPES.get(shape)
    if o is None:
        o = _sorted(obj)
        if len(_SHAPES) >= _SHAPES_MAX:
            _SHAPES.clear()
        _SHAPES[shape] = o
    return o


def _sorted(obj):
    """(text, keys...) of a dict (see _order): the bytewise order of the keys' encodings
    (unsigned ints by value, then negative ints by -1-k, then text by (UTF-8 length, UTF-8
    bytes)). Distinct keys have distinct encodings, so the keys themselves are never compared."""
    ks = []
    text = True
    for k in obj:
        if k is True or k is False or not isinstance(k, (str, int)):
            raise CodecError("key")
        b = bytearray()
        _enc(b, k, 0)
        if type(k) is not str or len(b) != len(k) + 1 or len(k) > 23:
            text = False
        ks.append((bytes(b), k))
    ks.sort()
    return tuple([text] + [x[1] for x in ks])


# frozen: @micropython.native
def _enc(out, obj, depth):
    t = type(obj)  # the exact types the shoe encodes, most frequent first; subclasses below
    if t is str:
        if _MPY and len(obj) < 24:   # its UTF-8 bytes straight from the str: no bytes made
            i = len(out)
            out.append(0x60)
            out.extend(obj)
            n = len(out) - i - 1
            if n < 24:
                out[i] = 0x60 | n
                return
            out[i:] = b""   # more than 23 bytes (not ASCII): encoded below
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
        if n:
            o = _order(obj)
            text = o[0] and _MPY   # short ASCII keys: each one's byte and the str itself
            for i in range(1, n + 1):
                k = o[i]
                if text:
                    out.append(0x60 | len(k))
                    out.extend(k)
                else:
                    _enc(out, k, 0)
                _enc(out, obj[k], depth)
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


try:  # the frozen image's C encoder (cmodules/shoec): the common types, the same bytes
    from shoec import cbor as _cbor
except ImportError:  # CPython, the unix port, a stock MicroPython image
    _cbor = None


def encode(obj):
    b = None if _cbor is None else _cbor(obj)
    # None: a type or key the C encoder leaves to Python, errors included
    return encode_py(obj) if b is None else b


def encode_py(obj):
    """encode() without the C encoder (tests/emu/test_shoec.py compares the two on the chip)."""
    out = bytearray()
    _enc(out, obj, 0)
    return bytes(out)


def encode_into(out, obj):
    """Append the encoding of obj to the bytearray `out`."""
    b = None if _cbor is None else _cbor(obj)
    if b is None:
        _enc(out, obj, 0)
    else:
        out.extend(b)


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
