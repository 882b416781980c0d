"""shoectl table: be the table system by hand, one command at a time, on any shoe.

A technician at a bench shoe (or a newcomer at `shoectl sim`) runs rounds with it:

    shoectl table configure --game four-card-frenzy --port URL --keys FILE
    shoectl table load-deck --serial 3A7F --back R ...   (then run the deck through the reader)
    shoectl table open --seat 1:ante=10,odds=10 --seat 2:ante=5,odds=5 ...   (then deal)
    shoectl table decide 1=20 2=0 ...                     (raise per seat, 0 = fold)
    shoectl table void --detail "dropped card"            (supervisor key once a card is out)
    shoectl table ack 3 | all                             (supervisor key)
    shoectl table status

Each action is one authenticated command; the reply is printed (JSON with --json), and the
events the connection carries go to the audit store (--db) like every other command. The key
comes from the firmware's roles table (shoe.roles, docs/roles.md): the shoe (table) key where it
always does, else the supervisor key if the key file holds one; a command the key may not send
is refused by the shoe (`needs_supervisor`), changing nothing.
`shoectl monitor` in another terminal shows the events as the round goes: both go through the
`shoectl gateway` that holds the shoe's port (--port gateway+unix:///PATH.sock; one process
per port). Through a gateway the key file's supervisor key seals the supervisor's commands
here; the gateway seals the others with the table key (docs/floor.md).
"""

import json

from host_tools import events as E
from host_tools.errors import ShoeError
from shoe.games.vocab import FCF, HCF

NAME = "table"
HELP = "act as the table system by hand: configure, load a deck, open a round, decide, void, ack"
DESCRIPTION = (
    "Send one table-system command to a shoe (virtual, emulated or real) and print the reply. "
    "Actions: configure (game, pay table, procedure), load-deck (then run the deck through the "
    "reader: the shoe checks it), open (a round with its seats and wagers; then deal), decide "
    "(each seat's raise once the deal is complete; 0 folds), void (the open round; the "
    "supervisor key once a card of it is out), ack (a latched error, supervisor key), status "
    "(phase, decks, round). The key each command needs comes from the roles table "
    "(docs/roles.md): every configuration change, acknowledging errors, voiding a round once "
    "a card is out and loading again a deck the shoe holds need the supervisor key, which is "
    "used whenever the key file holds it; without it the shoe refuses them (needs_supervisor). "
    "Watch the events with `shoectl monitor` in another terminal, both through the `shoectl "
    "gateway` holding the shoe's port (--port gateway+unix:///PATH.sock)."
)

ACTIONS = ("configure", "load-deck", "open", "decide", "void", "ack", "status")


def configure(p):
    from host_tools.commands._linkopts import add_port_arguments

    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = sub.add_parser("configure", help="configure the table (game, pay table, procedure)")
    c.add_argument("--game", required=True, choices=(FCF, HCF))
    c.add_argument("--paytable", help="pay table name (default: the game's public table)")
    c.add_argument(
        "--procedure", default="manual-shoe", choices=("manual-shoe", "hand", "automated-shoe")
    )
    c.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="any other configuration key, e.g. two_deck=true, stub_every=1",
    )
    c.add_argument(
        "--supervisor",
        action="store_true",
        help="insist on the supervisor key (an error if the key file has none); "
        "without it the supervisor key is used when the key file holds one: every "
        "configuration change needs it (docs/roles.md)",
    )
    d = sub.add_parser("load-deck", help="load a deck (then run it through the reader)")
    d.add_argument("--serial", required=True, help="the deck's serial, 4 hex digits")
    d.add_argument("--back", default="R", help="back colour letter (default R)")
    o = sub.add_parser("open", help="open a round: --seat N:WAGER=AMOUNT,... per seat")
    o.add_argument(
        "--seat",
        action="append",
        required=True,
        metavar="N:ante=10,odds=10",
        help="a seat and its wagers (repeat per seat)",
    )
    de = sub.add_parser("decide", help="the seats' raises: N=AMOUNT ... (0 folds)")
    de.add_argument("raises", nargs="+", metavar="N=AMOUNT")
    v = sub.add_parser("void", help="void the open round (supervisor key once a card is out)")
    v.add_argument("--detail", required=True, help="why (recorded with the void)")
    a = sub.add_parser("ack", help="acknowledge a latched error (supervisor key)")
    a.add_argument("id", help="the error id, or all")
    s = sub.add_parser("status", help="the shoe's phase, decks and round")
    for q in (c, d, o, de, v, a, s):
        add_port_arguments(q)
        q.add_argument("--json", action="store_true", help="print the reply as JSON")


def _int(text, what):
    try:
        v = int(text)
    except ValueError:
        raise ShoeError("%s must be a whole number, not %r" % (what, text)) from None
    if v < 0:
        raise ShoeError("%s must be >= 0" % what)
    return v


def parse_seat(text):
    """'1:ante=10,odds=10' -> ('1', {'ante': 10, 'odds': 10})"""
    seat, sep, rest = text.partition(":")
    if not sep or not seat.strip().isdigit() or not rest:
        raise ShoeError("--seat must look like 1:ante=10,odds=10, not %r" % text)
    wagers = {}
    for part in rest.split(","):
        k, eq, v = part.partition("=")
        if not eq or not k.strip():
            raise ShoeError("--seat %s: wagers are NAME=AMOUNT, not %r" % (seat, part))
        wagers[k.strip()] = _int(v.strip(), "seat %s %s" % (seat, k.strip()))
    return str(int(seat)), wagers


def parse_raises(items):
    out = {}
    for it in items:
        seat, eq, amount = it.partition("=")
        if not eq or not seat.strip().isdigit():
            raise ShoeError("decide takes SEAT=AMOUNT, not %r" % it)
        seat = str(int(seat))
        if seat in out:
            raise ShoeError("seat %s given twice" % seat)
        out[seat] = _int(amount, "seat %s raise" % seat)
    return out


def build(args):
    """-> (command kind, body, supervisor) for the action; supervisor None: the key the roles
    table asks for (ShoeLink.command)."""
    a = args.action
    if a == "configure":
        cfg = {
            "game": args.game,
            "procedure": args.procedure,
            "paytable": args.paytable or ("fcf-public-1" if args.game == FCF else "hcf-public-1"),
        }
        for item in args.set:
            k, eq, v = item.partition("=")
            if not eq or not k:
                raise ShoeError("--set takes KEY=JSON, not %r" % item)
            try:
                cfg[k] = json.loads(v)
            except ValueError:
                raise ShoeError("--set %s: %r is not JSON (strings in quotes)" % (k, v)) from None
        return "configure", cfg, (True if args.supervisor else None)
    if a == "load-deck":
        return "load_deck", {"serial": args.serial.upper(), "back": args.back}, None
    if a == "open":
        seats = {}
        for text in args.seat:
            seat, wagers = parse_seat(text)
            if seat in seats:
                raise ShoeError("seat %s given twice" % seat)
            seats[seat] = {"wagers": wagers}
        return "open_round", {"seats": seats}, None
    if a == "decide":
        return "decisions", parse_raises(args.raises), None
    if a == "void":
        return "void_round", {"detail": args.detail}, None
    if a == "ack":
        body = {"all": True} if args.id == "all" else {"id": _int(args.id, "error id")}
        return "ack_error", body, None
    return "status", {}, None


def run(args):
    from host_tools.commands._linkopts import connect

    kind, body, supervisor = build(args)
    link, keys, store = connect(args, read_only=(kind == "status"))
    try:
        rep = link.command(kind, body, timeout=args.timeout, supervisor=supervisor)
    finally:
        link.close()
        if store:
            store.close()
    if args.json:
        print(json.dumps(rep, sort_keys=True, default=E.json_default))
        return 0
    if kind == "status":
        rnd = rep.get("round")
        print(
            "phase %s  rounds %s  latched %d"
            % (rep.get("phase"), rep.get("rounds"), len(rep.get("latched") or []))
        )
        for dk in rep.get("decks") or []:
            print(
                "deck slot %s: %s back %s, %s"
                % (dk.get("slot"), dk.get("deck"), dk.get("back"), dk.get("status"))
            )
        if rnd:
            print(
                "round %s: %s, %s/%s cards, decided %s"
                % (
                    rnd.get("round"),
                    rnd.get("stage"),
                    rnd.get("dealt"),
                    rnd.get("cards"),
                    ",".join(rnd.get("decided") or []) or "none",
                )
            )
        for e in rep.get("latched") or []:
            print("LATCHED #%s %s (%s)" % (e.get("id"), e.get("reason"), e.get("action")))
        return 0
    if kind == "load_deck":
        print(
            "deck %s loaded in slot %s: run it through the reader (52 cards, then the cover "
            "card)" % (body["serial"], rep.get("slot"))
        )
    elif kind == "open_round":
        print("round %s open: deal %s cards" % (rep.get("round"), rep.get("cards")))
    else:
        print("%s: ok" % kind)
    return 0
