"""AES-128 in counter mode for the payload of DATA and MORE frames (docs/protocol.md section 2,
"Encryption"): encrypt-then-MAC, the frame MAC covers the ciphertext.

Built on `cryptolib.aes(key, 1)` (ECB: the only mode the rp2 and unix MicroPython builds compile,
MICROPY_PY_CRYPTOLIB_CTR is 0 there; on CPython host_tools installs a stand-in). Counter block
i of a frame (16 bytes, big-endian): direction:1 type:1 seq:2 zero:10 i:2, so a keystream block
is unique per (session key, direction, frame type, seq, block index). A frame's counter blocks
are written into a buffer kept per session (its block indexes written once) and encrypted in one
ECB call; the XOR is one on whole integers: no Python loop over bytes (MicroPython's long ints
are C). On the RP2040 that is ~0.8 ms for a 120-byte fragment (bench/bench_link.py --pico).

    c = Ctr(session_enc_key)                 # once per session (keeps the aes object)
    ct = c.crypt(direction, ftype, seq, pt)  # the same call decrypts
"""
import cryptolib

from micropython import const

_ECB = const(1)
_KEEP = const(8)  # blocks in the kept buffers: a fragment (120 bytes, link/sendqueue.py) is 8


class Ctr:
    def __init__(self, key):
        self._aes = cryptolib.aes(bytes(key), _ECB)
        self._blk = bytearray(_KEEP << 4)  # counter blocks; block i's index is its last byte
        for i in range(_KEEP):
            self._blk[(i << 4) + 15] = i
        self._bmv = memoryview(self._blk)
        self._ks = bytearray(_KEEP << 4)  # their keystream
        self._kmv = memoryview(self._ks)
        self._hdr = bytearray(4)

    def crypt(self, direction, ftype, seq, data):
        """`data` (bytes-like) XOR the keystream of (direction, ftype, seq): the ciphertext of a
        plaintext, the plaintext of a ciphertext."""
        n = len(data)
        if not n:
            return b""
        k = (n + 15) >> 4
        if k > _KEEP:
            return self._long(direction, ftype, seq, data, n, k)
        h = self._hdr
        h[0] = direction
        h[1] = ftype
        h[2] = seq >> 8
        h[3] = seq & 0xFF
        b = self._bmv
        for j in range(0, k << 4, 16):
            b[j:j + 4] = h
        self._aes.encrypt(b[:k << 4], self._ks)
        x = int.from_bytes(data, "big") ^ int.from_bytes(self._kmv[:n], "big")
        return x.to_bytes(n, "big")

    def _long(self, direction, ftype, seq, data, n, k):
        """A payload over _KEEP blocks (none the link sends: fragments are 120 bytes): the same
        counter blocks, made as one integer (base * (1, 1, ...) + (0, 1, 2, ...))."""
        one = idx = 0
        for i in range(k):
            one = (one << 128) | 1
            idx = (idx << 128) | i
        base = ((direction << 24) | (ftype << 16) | seq) << 96
        ks = self._aes.encrypt((base * one + idx).to_bytes(k << 4, "big"))
        x = int.from_bytes(data, "big") ^ (int.from_bytes(ks, "big") >> (((k << 4) - n) << 3))
        return x.to_bytes(n, "big")
