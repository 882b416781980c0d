"""AES-128 in counter mode for the payload of DATA and MORE frames (docs/protocol.md section 2,
"Encryption"): encrypt-then-MAC, the frame MAC covers the ciphertext.

Built on `cryptolib.aes(key, 1)` (ECB: the only mode the rp2 and unix MicroPython builds compile,
MICROPY_PY_CRYPTOLIB_CTR is 0 there; on CPython host_tools installs a stand-in). Counter block
i of a frame (16 bytes, big-endian): direction:1 type:1 seq:2 zero:10 i:2, so a keystream block
is unique per (session key, direction, frame type, seq, block index). A frame's counter blocks
are written into a buffer kept per session (the block indexes written once) and encrypted in one
ECB call into another; the XOR is one on whole integers: no Python loop over bytes
(MicroPython's long ints are C). On the RP2040 that is ~0.8 ms for a 120-byte fragment
(bench/bench_link.py --pico). In the frozen image a C counter mode (cmodules/shoec, `shoec.ctr`)
does the same for an AES-128 key; tests/emu/test_shoec.py keeps the two equal.

    c = Ctr(session_enc_key)                 # once per session (keeps the aes object)
    ct = c.crypt(direction, ftype, seq, pt)  # the same call decrypts
"""
import cryptolib

from micropython import const

_ECB = const(1)
_KEEP = const(8)  # blocks the buffers hold from the start: a fragment (120 bytes, sendqueue) is 8


try:  # the frozen image's C counter mode (cmodules/shoec): the same bytes, no buffers here
    from shoec import ctr as _cctr
except ImportError:  # CPython, the unix port, a stock MicroPython image
    _cctr = None


class Ctr:
    def __init__(self, key):
        self._key = bytes(key)
        if _cctr is not None and len(self._key) == 16:
            self._aes = None
            return
        self._aes = cryptolib.aes(self._key, _ECB)
        self._hdr = bytearray(4)
        self._grow(_KEEP)

    def _grow(self, k):
        """Buffers for k blocks: the counter blocks (each one's index written here, once) and
        their keystream. Past _KEEP only for a payload longer than any the link sends."""
        b = bytearray(k << 4)
        for i in range(k):
            b[(i << 4) + 14] = i >> 8
            b[(i << 4) + 15] = i & 0xFF
        self._bmv = memoryview(b)
        self._kmv = memoryview(bytearray(k << 4))

    def crypt(self, direction, ftype, seq, data):
        """`data` (bytes-like) XOR the keystream of (direction, ftype, seq): the ciphertext of a
        plaintext, the plaintext of a ciphertext."""
        if self._aes is None:
            return _cctr(self._key, direction, ftype, seq, data)
        n = len(data)
        if not n:
            return b""
        k = (n + 15) >> 4
        if k << 4 > len(self._bmv):
            self._grow(k)
        h = self._hdr
        h[0] = direction
        h[1] = ftype
        h[2] = seq >> 8
        h[3] = seq & 0xFF
        b = self._bmv
        for j in range(0, k << 4, 16):
            b[j:j + 4] = h
        ks = self._kmv
        self._aes.encrypt(b[:k << 4], ks)
        x = int.from_bytes(data, "big") ^ int.from_bytes(ks[:n], "big")
        return x.to_bytes(n, "big")
