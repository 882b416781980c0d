"""HMAC-SHA256 and constant-time comparison (MicroPython has hashlib but no hmac module)."""
import hashlib

_BLOCK = 64


def hmac_sha256(key, msg):
    """RFC 2104 HMAC with SHA-256; key and msg are bytes-like. Returns 32 bytes."""
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    k = bytearray(_BLOCK)
    k[: len(key)] = key
    inner = bytearray(_BLOCK)
    outer = bytearray(_BLOCK)
    for i in range(_BLOCK):
        inner[i] = k[i] ^ 0x36
        outer[i] = k[i] ^ 0x5C
    h = hashlib.sha256(inner)
    h.update(msg)
    o = hashlib.sha256(outer)
    o.update(h.digest())
    return o.digest()


def equal(a, b):
    """Compare two byte strings in time that does not depend on where they differ."""
    if len(a) != len(b):
        return False
    d = 0
    for i in range(len(a)):
        d |= a[i] ^ b[i]
    return d == 0


def sha256_hex(data):
    return hexlify(hashlib.sha256(data).digest())


def hexlify(b):
    return "".join("%02x" % x for x in b)
