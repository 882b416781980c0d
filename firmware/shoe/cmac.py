"""AES-128 CMAC (NIST SP 800-38B, RFC 4493), its truncation to 8 bytes as NXP uses it, and NXP's
AES-128 key diversification (AN10922): the crypto of the authenticated RFID tags (NTAG 424 DNA,
shoe/sun.py, docs/hardware.md section 4). Pure: the shoe checks a tag's answer with it and the
host provisions tags with it.

    cmac(key, msg) -> 16 bytes          mact(cmac(...)) -> the 8 odd-numbered bytes
    diversify(key, m) -> 16 bytes       AN10922: CMAC over 01 || m padded to two blocks

AES comes from one place, _aes(): MicroPython's `cryptolib.aes` (mode 1 ECB, 2 CBC; the rp2
and unix builds have both), on CPython the stand-in that host_tools installs as `cryptolib`
(host_tools/_cryptolib.py, on the `cryptography` package).
"""
from micropython import const

_ZERO = bytes(16)
_MODE_ECB = const(1)
_MODE_CBC = const(2)


_AES = []   # cryptolib.aes, imported at the first use: an import statement on every call
            # searched the filesystem each time (~9 ms a SUN check on the chip, of ~45)


def _aes(key, mode, iv=None):
    """An AES-128 object (encrypt or decrypt, not both) over `key`."""
    if not _AES:
        from cryptolib import aes

        _AES.append(aes)
    aes = _AES[0]
    return aes(key, mode) if iv is None else aes(key, mode, iv)


def ecb(key, block):
    return _aes(key, _MODE_ECB).encrypt(block)


def cbc(key, data, iv=_ZERO):
    """AES-128-CBC encryption of data (a multiple of 16 bytes)."""
    return _aes(key, _MODE_CBC, iv).encrypt(data)


def cbc_decrypt(key, data, iv=_ZERO):
    return _aes(key, _MODE_CBC, iv).decrypt(data)


def xor(a, b):
    """Two 16-byte blocks XORed (as big integers: one C operation, no loop over bytes)."""
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(16, "big")


def _dbl(b):
    """Multiplication by x in GF(2^128) (the CMAC subkey step)."""
    v = int.from_bytes(b, "big") << 1
    if v >> 128:
        v ^= 0x100000000000000000000000000000087
    return v.to_bytes(16, "big")


def subkeys(key):
    """The CMAC subkeys (K1, K2) of key: worth keeping for a key used many times."""
    k1 = _dbl(ecb(key, _ZERO))
    return k1, _dbl(k1)


def cmac(key, msg, keys=None):
    """AES-CMAC of msg (bytes-like) under key; keys: its subkeys if already known."""
    k1, k2 = keys or subkeys(key)
    n = len(msg)
    r = n & 15
    if n and not r:
        head = msg[:n - 16]
        last = xor(msg[n - 16:], k1)
    else:
        head = msg[:n - r]
        last = xor(bytes(msg[n - r:]) + b"\x80" + bytes(15 - r), k2)
    return cbc(key, bytes(head) + last)[-16:]


def mact(mac):
    """NXP's truncation of a CMAC to 8 bytes: the even-numbered bytes counted from 1 (the
    odd indexes 1, 3, .. 15; NT4H2421Gx 9.1.3)."""
    return bytes((mac[1], mac[3], mac[5], mac[7], mac[9], mac[11], mac[13], mac[15]))


def diversify(key, m, keys=None):
    """AN10922 AES-128 diversification: the CMAC of 01 || m (m: 1..31 bytes, e.g. a UID and a
    system identifier) where the input is always padded to 32 bytes, K1 only if it fills them
    exactly (so it differs from cmac() for inputs of 15 bytes or fewer)."""
    if not 1 <= len(m) <= 31:
        raise ValueError("diversification input must be 1..31 bytes")
    k1, k2 = keys or subkeys(key)
    d = b"\x01" + bytes(m)
    if len(d) == 32:
        last = xor(d[16:], k1)
    else:
        d += b"\x80" + bytes(31 - len(d))
        last = xor(d[16:], k2)
    return cbc(key, d[:16] + last)[16:]
