"""Host tools for the smart dealing shoe: the `shoectl` command and the libraries behind it."""

import sys

from shoe import VERSION as __version__  # written once, in firmware/shoe/__init__.py

if "micropython" not in sys.modules:  # CPython: the firmware's `from micropython import const`
    from host_tools import _micropython

    sys.modules["micropython"] = _micropython
if "cryptolib" not in sys.modules:  # CPython: the firmware's AES (shoe/link/cipher.py, cmac.py)
    try:
        import cryptolib  # noqa: F401 - a MicroPython running host_tools has its own
    except ImportError:
        from host_tools import _cryptolib

        sys.modules["cryptolib"] = _cryptolib
