"""`shoectl`: the host command line for the smart dealing shoe.

Expected errors (ShoeError) print one line `shoectl: <message>` on stderr and exit 1; Ctrl-C exits
130; argument errors exit 2 (argparse). Never a traceback for an expected error.
"""

import argparse
import importlib
import pkgutil
import sys

from host_tools import commands
from host_tools.errors import ShoeError
from host_tools.runtime import RuntimeMissing


def _command_modules():
    mods = []
    for info in pkgutil.iter_modules(commands.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module("host_tools.commands." + info.name)
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return sorted(mods, key=lambda m: m.NAME)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `shoectl: <problem> (see shoectl ... --help)`, exit 2."""

    def error(self, message):
        self.exit(2, "%s: %s (see `%s --help`)\n" % ("shoectl", message, self.prog))


def build_parser():
    parser = _Parser(
        prog="shoectl",
        description="Host tools for the smart dealing shoe (Four Card Frenzy, High Card Flush): "
        "the virtual board, the demo, evaluation, par sheets, sessions, link, audit and "
        "deployment.",
        epilog="Ports are pyserial URLs: /dev/ttyACM0, socket://127.0.0.1:PORT, loop://. "
        "`shoectl COMMAND --help` explains each command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in _command_modules():
        p = sub.add_parser(
            mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP)
        )
        mod.configure(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except (ShoeError, RuntimeMissing) as e:
        print("shoectl: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("shoectl: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
