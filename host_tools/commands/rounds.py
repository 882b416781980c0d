"""shoectl rounds: recall the rounds the shoe keeps (the last 100 at least)."""

import json

from host_tools import events as E

NAME = "rounds"
HELP = "recall rounds from the shoe: the list, or one round's full record"
DESCRIPTION = (
    "The shoe keeps at least its last 100 round results and voids on flash. Without --round: "
    "list the recallable round numbers. With --round N: print that round's record (one JSON "
    "line with --json). Recalled records can be compared with the audit store (`shoectl "
    "export`), which holds every event as it arrived."
)


def configure(p):
    from host_tools.commands._linkopts import add_port_arguments

    add_port_arguments(p)
    p.add_argument("--round", type=int, help="the round to recall")
    p.add_argument("--json", action="store_true", help="JSON output")


def run(args):
    from host_tools.commands._linkopts import connect

    link, _, store = connect(args, read_only=True)
    try:
        body = {} if args.round is None else {"round": args.round}
        rep = link.command("recall", body, timeout=args.timeout)
    finally:
        link.close()
        if store:
            store.close()
    if args.round is None:
        nos = rep.get("rounds", [])
        if args.json:
            print(json.dumps(nos))
        else:
            span = ": %s .. %s" % (nos[0], nos[-1]) if nos else ""
            print("%d rounds recallable%s" % (len(nos), span))
        return 0
    kind, rec = rep["record"]
    kind, rec = E.decode(kind, rec)
    if args.json:
        print(
            json.dumps(
                {"round": args.round, "kind": kind, "record": rec},
                sort_keys=True,
                default=E.json_default,
            )
        )
    else:
        print("round %s: %s" % (args.round, kind))
        print(json.dumps(rec, sort_keys=True, indent=2, default=E.json_default))
    return 0
