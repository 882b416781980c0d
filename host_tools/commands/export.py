"""shoectl export: the audit store's events as JSON Lines or CSV."""

import sys

from host_tools.errors import ShoeError

NAME = "export"
HELP = "export events from the local audit store as JSON Lines or CSV"
DESCRIPTION = (
    "Write the events of the SQLite audit store (filled by `shoectl monitor` and every command "
    "that talks to a shoe) as JSON Lines (default) or CSV, to --out or stdout. --shoe limits to "
    "one shoe id, --kind to event kinds (repeatable: e.g. --kind round_result --kind round_void). "
    "Each row carries its chain check: ok, gap (an earlier event is missing) or broken."
)


def configure(p):
    p.add_argument("--db", help="audit store (SQLite); default under the user's data dir")
    p.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    p.add_argument("--out", help="output file (default: stdout)")
    p.add_argument("--shoe", help="only this shoe id")
    p.add_argument("--kind", action="append", help="only these event kinds (repeatable)")


def run(args):
    from pathlib import Path

    from host_tools.audit import AuditStore, default_path

    path = Path(args.db) if args.db else default_path()
    if not path.exists():
        raise ShoeError("no audit store at %s (run `shoectl monitor` first)" % path)
    store = AuditStore(path)
    try:
        if args.out:
            with open(args.out, "w", newline="") as f:
                n = store.export(f, args.format, args.shoe, args.kind)
            print("%d events -> %s" % (n, args.out), file=sys.stderr)
        else:
            store.export(sys.stdout, args.format, args.shoe, args.kind)
    finally:
        store.close()
    return 0
