"""The CPython stand-in for MicroPython's `micropython` module, so that the firmware's pure logic
imports unchanged on the host. Installed as sys.modules["micropython"] by host_tools/__init__.py
(every host tool, test and bench imports host_tools before shoe). The firmware uses const and the
native-code decorators (identity here: CPython runs the same functions as plain Python)."""


def const(x):
    return x


def native(f):
    """`@micropython.native` (machine code on MicroPython): the same function, as is, here."""
    return f


viper = native
