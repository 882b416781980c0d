"""shoectl status: one look at a shoe (table phase, decks, round, latched errors, link)."""

import json

from host_tools import events as E
from host_tools.errors import ShoeError

NAME = "status"
HELP = "show a shoe's state: phase, decks, round in progress, latched errors, link figures"
DESCRIPTION = (
    "Connect to the shoe (authenticated link), ask for its status and print it: firmware, board "
    "and shoe id, boot count, table phase, decks and their age, the round in progress, latched "
    "errors, and the link's counters. Events the shoe re-sends while connected are stored in "
    "the audit store (--db). Exit code 1 if the shoe does not answer or refuses the key."
)


def configure(p):
    from host_tools.commands._linkopts import add_port_arguments

    add_port_arguments(p)
    p.add_argument("--json", action="store_true", help="print the status as one JSON object")


def run(args):
    from host_tools.commands._linkopts import connect

    link, _, store = connect(args, read_only=True)
    try:
        st = link.command("status", {}, timeout=args.timeout)
        stats = link.stats()
    finally:
        link.close()
        if store:
            store.close()
    if args.json:
        print(json.dumps({"status": st, "link": stats}, sort_keys=True, default=E.json_default))
        return 0
    if not isinstance(st, dict):
        raise ShoeError("status: unexpected reply %r" % (st,))
    print(
        "shoe %s  board %s  firmware %s  boot %s%s"
        % (
            st.get("shoe_id", stats["shoe_id"]),
            st.get("board", "?"),
            st.get("firmware", "?"),
            st.get("boot", "?"),
            "" if st.get("provisioned", True) else "  (NOT PROVISIONED)",
        )
    )
    if st.get("demo"):
        print("demo: true  (published demo keys: never on a casino floor)")
    cfg = st.get("config")
    if cfg:
        print(
            "%s, pay table %s%s"
            % (
                cfg.get("game"),
                cfg.get("paytable"),
                (" (inline, sha256 %s)" % str(cfg.get("paytable_sha256"))[:16])
                if cfg.get("paytable_inline")
                else "",
            )
        )
    print(
        "phase %s  rounds %s  mem_free %s"
        % (st.get("phase", "?"), st.get("rounds", "?"), st.get("mem_free", "?"))
    )
    for d in st.get("decks") or []:
        print(
            "deck slot %s: %s back %s, %s, %ss old"
            % (d.get("slot"), d.get("deck"), d.get("back"), d.get("status"), d.get("age_s"))
        )
    rnd = st.get("round")
    if rnd:
        print(
            "round %s: %s, %s/%s cards dealt, next -> %s"
            % (
                rnd.get("round"),
                rnd.get("stage"),
                rnd.get("dealt"),
                rnd.get("cards"),
                rnd.get("next"),
            )
        )
    latched = st.get("latched") or []
    if latched:
        for e in latched:
            print("LATCHED #%s %s (%s)" % (e.get("id"), e.get("reason"), e.get("action")))
    else:
        print("no latched errors")
    errs = {k: v for k, v in stats["errors"].items() if k not in ("sessions",)}
    print(
        "link: up, %d reconnects, last event %s, counters %s"
        % (
            stats["reconnects"],
            stats["delivered"],
            json.dumps(errs, sort_keys=True) if errs else "clean",
        )
    )
    return 0
