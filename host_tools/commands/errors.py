"""shoectl errors: list a shoe's latched errors; acknowledge them with the supervisor key."""

import json

from host_tools.errors import ShoeError

NAME = "errors"
HELP = "list latched errors; --ack ID|all clears them (needs the supervisor key)"
DESCRIPTION = (
    "Latched errors (irregularities) survive resets and block play until a supervisor "
    "acknowledges them. Without --ack: list them. With --ack ID (repeatable) or --ack all: send "
    "`ack_error`, MAC'd with the supervisor key from the key file; the shoe refuses it (bad_mac) "
    "with any other key. Exit code 1 if the shoe refuses."
)


def configure(p):
    from host_tools.commands._linkopts import add_port_arguments

    add_port_arguments(p)
    p.add_argument(
        "--ack",
        action="append",
        metavar="ID|all",
        help="acknowledge latched error ID (repeat for several) or all of them",
    )
    p.add_argument("--json", action="store_true", help="JSON output")


def run(args):
    from host_tools.commands._linkopts import connect

    link, keys, store = connect(args, read_only=not args.ack)
    try:
        if not args.ack:
            st = link.command("status", {}, timeout=args.timeout)
            latched = st.get("latched") or []
            more = (st.get("latched_count") or len(latched)) - len(latched)
            if args.json:
                print(json.dumps(latched, sort_keys=True))
            elif not latched:
                print("no latched errors")
            for e in [] if args.json else latched:
                print(
                    "#%s %s (%s)%s"
                    % (
                        e.get("id"),
                        e.get("reason"),
                        e.get("action"),
                        "  " + str(e.get("detail")) if e.get("detail") else "",
                    )
                )
            if more > 0 and not args.json:
                print(
                    "... and %d more (the oldest are shown; acknowledge them to see the rest)"
                    % more
                )
            return 0
        if not keys.get("supervisor"):
            raise ShoeError("acknowledging errors needs the supervisor key (not in the key file)")
        if "all" in args.ack:
            body = {"all": True}
        else:
            try:
                body = {"ids": [int(x) for x in args.ack]}
            except ValueError:
                raise ShoeError("--ack takes error ids (numbers) or `all`") from None
        rep = link.command("ack_error", body, timeout=args.timeout, supervisor=True)
        cleared = rep.get("cleared", [])
        print(
            json.dumps(rep, sort_keys=True)
            if args.json
            else "cleared %s" % (", ".join("#%s" % i for i in cleared) or "nothing")
        )
        return 0
    finally:
        link.close()
        if store:
            store.close()
