"""The CPython stand-in for MicroPython's `cryptolib` module, so that the firmware's AES users
(shoe/link/cipher.py: the link's counter mode; shoe/cmac.py: the authenticated RFID tags)
import unchanged on the host. Installed as
sys.modules["cryptolib"] by host_tools/__init__.py; AES from the `cryptography` package (loaded
at the first use, not at import: most host tools never need it).

As MicroPython's: `aes(key, mode[, iv])`, mode 1 = ECB, 2 = CBC (the chaining state carries over
from one call to the next), an object encrypts or decrypts but not both, data a multiple of 16
bytes."""

_MODES = (1, 2)


class aes:  # noqa: N801 - MicroPython's name
    def __init__(self, key, mode, iv=None):
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        key = bytes(key)
        if len(key) not in (16, 32):
            raise ValueError("key must be 16 or 32 bytes")
        if mode not in _MODES:
            raise ValueError("mode must be 1 (ECB) or 2 (CBC)")
        m = modes.ECB() if mode == 1 else modes.CBC(bytes(iv) if iv is not None else bytes(16))
        self._cipher = Cipher(algorithms.AES(key), m)
        self._ctx = None
        self._dir = None

    def _run(self, direction, data, out):
        data = bytes(data)
        if len(data) % 16:
            raise ValueError("data must be a multiple of 16 bytes")
        if self._dir is None:
            self._dir = direction
            c = self._cipher
            self._ctx = c.encryptor() if direction == "e" else c.decryptor()
        elif self._dir != direction:
            raise OSError("can't encrypt & decrypt")
        r = self._ctx.update(data)
        if out is None:
            return r
        out[: len(r)] = r
        return None

    def encrypt(self, data, out=None):
        return self._run("e", data, out)

    def decrypt(self, data, out=None):
        return self._run("d", data, out)
