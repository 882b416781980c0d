"""`shoectl eval`: settle dealt rounds from JSON Lines without a deal (interfaces.md 4)."""

import sys

from host_tools.engine.evaluate import RUNTIMES, Evaluator
from host_tools.errors import ShoeError

NAME = "eval"
HELP = "settle dealt rounds (JSON Lines on stdin) with the firmware's engine"
DESCRIPTION = (
    "Read one dealt round per line (JSON, interfaces.md section 4) and write one round_result "
    'per line, in order; a bad line gets {"type": "error", "line": N, "message": ...} '
    "and the rest still runs; the exit code is 1 if any line failed. --runtime micropython "
    "(default) runs the firmware's own engine in one MicroPython process (SHOE_MICROPYTHON, "
    "heap SHOE_HEAP, default 64k); --runtime cpython runs the same code here. Both print the "
    "same bytes. Pay tables: a document or a preset name (fcf-public-1, hcf-public-1, "
    "hcf-public-2: example values, not regulatory ones)."
)


def configure(parser):
    parser.add_argument(
        "--runtime",
        choices=RUNTIMES,
        default="micropython",
        help="where the engine runs (default: micropython)",
    )
    parser.add_argument(
        "--heap",
        default=None,
        help="MicroPython heap size, e.g. 64k, the engine's code included "
        "(default: SHOE_HEAP, the device's data heap, or 64k)",
    )
    parser.add_argument(
        "input", nargs="?", default="-", help="JSON Lines file to read (default: - = stdin)"
    )


def _lines(stream):
    for raw in stream:
        yield raw.decode("utf-8", "replace")


def run(args):
    if args.input == "-":
        stream = sys.stdin.buffer
    else:
        try:
            stream = open(args.input, "rb")
        except OSError as e:
            raise ShoeError("cannot read %s: %s" % (args.input, e.strerror)) from None
    failed = False
    out = sys.stdout
    try:
        with Evaluator(args.runtime, args.heap) as ev:
            for line in ev.results(_lines(stream)):
                if line.startswith('{"type": "error"'):
                    failed = True
                out.write(line + "\n")
        out.flush()
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    return 1 if failed else 0
