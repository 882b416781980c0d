"""shoectl session: play a session script on a virtual board, or on any board over its port."""

import json
import sys
import tempfile

from host_tools import events as E
from host_tools.errors import ShoeError

NAME = "session"
HELP = "play a session script (stacked decks, faults) on a virtual board or any board's port"
DESCRIPTION = (
    "Without --port: start a virtual board and a world simulator, play the script "
    "(interfaces.md section 5) at full speed, print every event the host receives (JSON Lines "
    "with --json) and exit 0 when the script is done. With --port URL: play it against a board "
    "that runs already (`shoectl sim`, the emulated Pico, a real shoe on /dev/ttyACM0) with the "
    "keys of its provisioning file (--keys); the dealer is the world simulator writing into "
    "--reader URL, or, without --reader, a person at the shoe told what to do (give a long "
    "--event-timeout). The cards of an open round are face down: each card event carries its "
    "commitment, and the round's reveal (once the decisions close, or at a void) prints every "
    "card; a reveal that does not match its commitments is printed as reveal_mismatch. Every "
    "round ends in exactly one round_result or round_void; if the board powers up again "
    "mid-session the runner carries on from the shoe's status. Faults: "
    'misread, double-read, no-read (optional "times"), foreign, duplicate, forged, other-back, '
    'extra-card, power-cut, link-drop (optional "seconds"). Optional script keys besides those '
    "of the interface: two_deck, stub_every, represent_max, jam_timeout_s, offered, "
    "shuffle_check (false for scripts that deal the same stacked order twice)."
)


def configure(p):
    from host_tools import keys as keyfile

    p.add_argument("--script", required=True, help="the session script (JSON file)")
    p.add_argument(
        "--port",
        help="the host UART of a running board (pyserial URL), or the API "
        "of the `shoectl gateway` holding it (gateway+unix:///PATH.sock, "
        "gateway+tcp://127.0.0.1:PORT[?key=FILE]); default: start a virtual board",
    )
    p.add_argument(
        "--reader",
        help="with --port: the board's reader endpoint "
        "(socket://HOST:PORT) for the world simulator; without it a person deals",
    )
    keyfile.add_arguments(p)
    p.add_argument(
        "--event-timeout",
        type=float,
        default=20.0,
        help="seconds to wait for each event (default 20; a person needs more)",
    )
    p.add_argument("--json", action="store_true", help="print every event as a JSON line")
    p.add_argument("--state", help="state directory of the virtual board (default: a temp dir)")
    p.add_argument(
        "--db",
        help="also store every event in this audit store (SQLite), e.g. for `shoectl diagnose`",
    )


def _human(kind, body, shown):
    """One printed line per event. A card is face down until its round's reveal (the shoe
    sends its commitment): the card line says where it went; the reveal prints every card."""
    got = shown.feed(kind, body)
    if kind == E.CARD:
        return "round %s card %2s  face down -> %s" % (
            body.get("round"),
            body.get("position"),
            body.get("target"),
        )
    if kind == E.REVEAL:
        return "round %s REVEAL %s" % (
            body.get("round"),
            "  ".join("%s %s->%s" % (p, c, t) for p, c, t in got or ()),
        )
    if kind == E.ROUND_RESULT:
        seats = body.get("seats", {})
        return "round %s RESULT dealer %s %s; %s" % (
            body.get("round"),
            " ".join(body.get("dealer", {}).get("cards", [])),
            body.get("dealer", {}).get("category"),
            ", ".join(
                "seat %s %s net %+d" % (k, v.get("category"), v.get("net", 0))
                for k, v in sorted(seats.items())
            ),
        )
    if kind == E.ROUND_VOID:
        return "round %s VOID %s (%s)" % (
            body.get("round"),
            body.get("reason"),
            body.get("detail"),
        )
    return "%s %s" % (kind, json.dumps(body, sort_keys=True, default=E.json_default))


def run(args):
    from host_tools.reveal import Shown
    from host_tools.sim.session import load_script
    from host_tools.sim.virtual_table import VirtualTable

    script = load_script(args.script)
    shown = Shown()

    def show(kind, body):
        if args.json:
            print(json.dumps({"event": kind, **body}, sort_keys=True, default=E.json_default))
        else:
            print(_human(kind, body, shown))
        sys.stdout.flush()

    if args.port:
        from host_tools import keys as keyfile
        from host_tools.sim.remote import RemoteTable, check_script_for

        if args.state:
            raise ShoeError("--state is for the virtual board: a board on --port has its own")
        check_script_for(script, person=not args.reader)
        keys = keyfile.load(args)
        from host_tools.link import is_gateway_url

        if args.db and is_gateway_url(args.port):
            raise ShoeError("--db: through a gateway its own audit store keeps every event")
        with RemoteTable(
            args.port,
            keys,
            args.reader,
            on_event=show,
            event_timeout=args.event_timeout,
            db=args.db,
        ) as table:
            outcomes = table.runner.play(script)
    else:
        if args.reader:
            raise ShoeError("--reader goes with --port (a board that runs already)")
        state = args.state or tempfile.mkdtemp(prefix="shoe-session-")
        with VirtualTable(
            state, on_event=show, db=args.db, event_timeout=args.event_timeout
        ) as table:
            outcomes = table.runner.play(script)
    n_res = sum(1 for o in outcomes if o[1] == E.ROUND_RESULT)
    n_void = len(outcomes) - n_res
    if len(outcomes) != len(script["rounds"]):
        raise ShoeError(
            "%d rounds in the script but %d round outcomes"
            % (len(script["rounds"]), len(outcomes))
        )
    print(
        (
            '{"event": "session_done", "rounds": %d, "results": %d, "voids": %d}'
            if args.json
            else "session done: %d rounds, %d results, %d voids"
        )
        % (len(outcomes), n_res, n_void)
    )
    return 0
