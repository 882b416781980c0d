"""The CPython stand-in for MicroPython's `cryptolib` module (which CPython does not have), so that
the firmware's link (shoe/link/cipher.py) imports unchanged on the host. Installed as
sys.modules["cryptolib"] by host_tools/__init__.py. Only what the firmware uses: `aes(key, 1)`
(ECB) and its `encrypt(data[, out])`, on the `cryptography` package's AES."""
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

MODE_ECB = 1


class aes:  # noqa: N801 - MicroPython's name
    def __init__(self, key, mode, iv=None):
        if mode != MODE_ECB or iv is not None:
            raise ValueError("mode")  # the firmware builds its counter mode on ECB only
        self._enc = Cipher(algorithms.AES(bytes(key)), modes.ECB()).encryptor()

    def encrypt(self, data, out=None):
        if len(data) % 16:
            raise ValueError("blksize % 16")
        b = self._enc.update(bytes(data))
        if out is None:
            return b
        out[:len(b)] = b
        return out
