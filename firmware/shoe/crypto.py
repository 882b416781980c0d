"""HMAC-SHA256 and constant-time comparison (MicroPython has hashlib but no hmac module)."""
import hashlib
import sys

_BLOCK = 64


_pads = {}  # key (bytes) -> (inner, outer) pads: the one cache, for every HMAC of the shoe
# and of the host (shoe.link.message.mac uses it too). A shoe holds 3 keys; a host process may
# hold a floor's (a collector verifies every shoe's). Full: emptied, then filled again.
PADS_MAX = 4 if sys.implementation.name == "micropython" else 4096


def _key_pads(key):
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    k = bytearray(_BLOCK)
    k[: len(key)] = key
    inner = bytearray(_BLOCK)
    outer = bytearray(_BLOCK)
    for i in range(_BLOCK):
        inner[i] = k[i] ^ 0x36
        outer[i] = k[i] ^ 0x5C
    return inner, outer


def pads(key):
    """The (inner, outer) pads of `key`: kept for a bytes key (up to PADS_MAX keys; when
    full the cache is emptied first), computed each time for a mutable one."""
    if not isinstance(key, bytes):
        return _key_pads(key)
    p = _pads.get(key)
    if p is None:
        p = _key_pads(key)
        if len(_pads) >= PADS_MAX:
            _pads.clear()
        _pads[key] = p
    return p


try:  # the frozen image's C HMAC (cmodules/shoec): the pads' SHA-256 states kept per key
    from shoec import hmac_sha256 as c_hmac
except ImportError:  # CPython, the unix port, a stock MicroPython image
    c_hmac = None


def hmac_sha256(key, msg):
    """RFC 2104 HMAC with SHA-256; key and msg are bytes-like. Returns 32 bytes. The pads are
    kept (pads(); on the RP2040 the 64-byte pad loop cost ~1 ms a MAC)."""
    if c_hmac is not None:
        return c_hmac(key, b"", msg)
    p = pads(key)
    h = hashlib.sha256(p[0])
    h.update(msg)
    o = hashlib.sha256(p[1])
    o.update(h.digest())
    return o.digest()


def equal(a, b):
    """Compare two byte strings (bytes-like) in time that does not depend on where they differ:
    both as big integers, XORed whole in C (no early exit; a Python loop over the bytes cost
    ~15 us a byte on the RP2040)."""
    if len(a) != len(b):
        return False
    return not int.from_bytes(a, "big") ^ int.from_bytes(b, "big")


def hexlify(b):
    return "".join("%02x" % x for x in b)
