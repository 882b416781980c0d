"""The smart dealing shoe's firmware package.

Pure logic (cards, deck, dealing, games, link, journal) imports nothing from `machine` and runs
under CPython too, so the host tools reuse it (host_tools installs the CPython stand-in
for the `micropython` module). Drivers take injected bus/pin objects. Only a
board's entry point (board/<name>/main.py) builds hardware and calls `shoe.app.run()`.
"""

VERSION = "0.1.0"


def forget(name):
    """Drop module `name` ("shoe.games.presets") from sys.modules and from its package, so that
    its bytecode (in RAM when loaded from .mpy) can be collected; a later import loads it again.
    For modules needed only at boot or only for a moment (an error text, a preset)."""
    import sys

    sys.modules.pop(name, None)
    pkg, _, attr = name.rpartition(".")
    parent = sys.modules.get(pkg)
    if parent is not None and attr in parent.__dict__:
        delattr(parent, attr)
