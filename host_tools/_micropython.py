"""The CPython stand-in for MicroPython's `micropython` module, so that the firmware's pure logic
imports unchanged on the host. Installed as sys.modules["micropython"] by host_tools/__init__.py
(every host tool, test and bench imports host_tools before shoe). The firmware uses only const."""


def const(x):
    return x
