"""Host tools for the smart dealing shoe: the `shoectl` command and the libraries behind it."""
import sys

if "micropython" not in sys.modules:  # CPython: the firmware's `from micropython import const`
    from host_tools import _micropython

    sys.modules["micropython"] = _micropython
if "cryptolib" not in sys.modules:  # CPython: the firmware's AES (shoe/cmac.py)
    from host_tools import _cryptolib

    sys.modules["cryptolib"] = _cryptolib
