"""AES-128 in counter mode for the payload of DATA and MORE frames (docs/protocol.md section 2,
"Encryption"): encrypt-then-MAC, the frame MAC covers the ciphertext.

Built on `cryptolib.aes(key, 1)` (ECB: the only mode the rp2 and unix MicroPython builds compile,
MICROPY_PY_CRYPTOLIB_CTR is 0 there; on CPython host_tools installs a stand-in). Counter block
i of a frame (16 bytes, big-endian): direction:1 type:1 seq:2 zero:10 i:2, so a keystream block
is unique per (session key, direction, frame type, seq, block index). All the counter blocks of
a frame are made by one big-integer expression and encrypted in one ECB call, and the XOR is one
on whole integers: no Python loop over bytes or blocks (MicroPython's long ints are C).

    c = Ctr(session_enc_key)                 # once per session (keeps the aes object)
    ct = c.crypt(direction, ftype, seq, pt)  # the same call decrypts
"""
import cryptolib

from micropython import const

_ECB = const(1)
_KEEP = const(8)  # block counts kept: a fragment (120 bytes, link/sendqueue.py) is 8 blocks
_reps = {}  # blocks n -> (R, I): base * R + I = the n counter blocks base+0, base+1, ...


def _blocks(n):
    r = _reps.get(n)
    if r is None:
        one = idx = 0
        for i in range(n):  # once per block count up to _KEEP (a few hundred bytes in all)
            one = (one << 128) | 1
            idx = (idx << 128) | i
        r = (one, idx)
        if n <= _KEEP:
            _reps[n] = r
    return r


class Ctr:
    def __init__(self, key):
        self._aes = cryptolib.aes(bytes(key), _ECB)

    def crypt(self, direction, ftype, seq, data):
        """`data` (bytes-like) XOR the keystream of (direction, ftype, seq): the ciphertext of a
        plaintext, the plaintext of a ciphertext."""
        n = len(data)
        if not n:
            return b""
        k = (n + 15) >> 4
        one, idx = _blocks(k)
        base = ((direction << 24) | (ftype << 16) | seq) << 96
        ks = self._aes.encrypt((base * one + idx).to_bytes(k << 4, "big"))
        x = int.from_bytes(data, "big") ^ (int.from_bytes(ks, "big") >> (((k << 4) - n) << 3))
        return x.to_bytes(n, "big")
