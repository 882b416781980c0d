"""Host tools for the smart dealing shoe: the `shoectl` command and the libraries behind it."""

import sys

if "micropython" not in sys.modules:  # CPython: the firmware's `from micropython import const`
    from host_tools import _micropython

    sys.modules["micropython"] = _micropython
if "cryptolib" not in sys.modules:  # CPython: the firmware's AES (shoe/link/cipher.py, cmac.py)
    try:
        import cryptolib  # noqa: F401 - a MicroPython running host_tools has its own
    except ImportError:
        from host_tools import _cryptolib

        sys.modules["cryptolib"] = _cryptolib

# The version, written once: VERSION in firmware/shoe/__init__.py (pyproject.toml reads it too).
from shoe import VERSION  # noqa: E402 - after the stand-ins above

__version__ = VERSION
