"""shoectl monitor: watch a shoe live, store every event once, re-check every result."""

import json
import sys
import time
from collections import deque

from host_tools import events as E
from host_tools import keys as keyfile
from host_tools.errors import ShoeError

NAME = "monitor"
HELP = "watch a shoe live: table state, cards, results, errors; audit every event"
DESCRIPTION = (
    "Connect to a shoe on any port (/dev/ttyACM0, socket://127.0.0.1:PORT from `shoectl sim`, "
    "loop://), authenticate with its key, and show the table live: phase, round, cards dealt to "
    "each seat and the dealer, results and latched errors. Every event is stored exactly once in "
    "the SQLite audit store (--db; default under the user's data dir) after its MAC and the hash "
    "chain are checked. The cards of an open round are face down: the shoe sends each as a "
    "commitment, and the view shows them once the round's reveal (when the decisions close, or "
    "a void) has opened every commitment; a reveal that does not match (a card changed after "
    "it was dealt, a missing position, a result with other cards) is flagged. Every round "
    "result is re-evaluated from the revealed cards with the engine: any disagreement is "
    "flagged. A shoe configured with an inline pay table reports it "
    "by name and SHA-256 only: give the document with --paytable FILE (its digest must match) "
    "to re-evaluate against it. Through a gateway (--port gateway+unix:///PATH.sock) it "
    "watches as the reader role and the gateway's audit store keeps the events. Stops on "
    "Ctrl-C, or after --seconds / --count."
)


def _table(config, inline):
    """The pay table to re-evaluate with: the preset name, or the --paytable document when its
    digest is the one the shoe reports (else the name, which then fails to re-evaluate)."""
    if config.get("paytable_inline") and inline is not None:
        from shoe.games.paytable import digest

        if digest(inline) == config.get("paytable_sha256"):
            return inline
    return config.get("paytable")


def configure(p):
    from host_tools.commands._linkopts import add_rtscts

    p.add_argument(
        "--port",
        required=True,
        help="pyserial URL or device of the shoe's host "
        "UART, or the API of the `shoectl gateway` holding it: "
        "gateway+unix:///PATH.sock or gateway+tcp://127.0.0.1:PORT[?key=FILE]",
    )
    keyfile.add_arguments(p)
    add_rtscts(p)
    p.add_argument("--db", help="audit store (SQLite file); default under the user's data dir")
    p.add_argument("--no-store", action="store_true", help="do not write the audit store")
    p.add_argument(
        "--json", action="store_true", help="one JSON line per event instead of a live table"
    )
    p.add_argument("--seconds", type=float, help="stop after this many seconds")
    p.add_argument("--count", type=int, help="stop after this many events")
    p.add_argument(
        "--paytable",
        metavar="FILE",
        help="the inline pay table the shoe is configured with (JSON document)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds to wait for the shoe to answer (default 10)",
    )


class TableView:
    """The table's state as the events tell it (host_tools.livetable.LiveTable), drawn."""

    def __init__(self):
        from host_tools.livetable import LiveTable

        self.table = LiveTable()
        self.log = deque(maxlen=10)
        self.flags = []
        self.shoe = None

    @property
    def phase(self):
        return "?" if self.table.phase is None else self.table.phase

    @property
    def round(self):
        return self.table.last_round

    @property
    def deck(self):
        return self.table.deck

    @property
    def hands(self):
        """{position: [card, or "··" while face down]}"""
        return {t: ["··" if c is None else c for c in cs] for t, cs in self.table.hands.items()}

    @property
    def results(self):
        r = self.table.outcome_of_round()
        if r is None:
            return {}
        if self.table.last_result["outcome"] == "void":
            return {"dealer": "VOID: %s" % r.get("reason")}
        out = {
            seat: "%s  net %+d" % (s.get("category"), s.get("net", 0))
            for seat, s in r.get("seats", {}).items()
        }
        out["dealer"] = r["dealer"].get("category")
        return out

    @property
    def latched(self):
        return {
            i: "%s (%s)" % (b.get("reason"), b.get("action"))
            for i, b in self.table.latched.items()
        }

    def apply(self, kind, body):
        self.table.apply(kind, body)
        if kind == E.HELLO:
            self.shoe = "%s (%s, firmware %s)" % (
                body.get("shoe_id"),
                body.get("board"),
                body.get("firmware"),
            )
        elif kind == E.REVEAL_MISMATCH:
            self.flags.append(
                "REVEAL MISMATCH round %s: %s" % (body.get("round"), body.get("detail"))
            )
        self.log.append(line(kind, body))

    def render(self):
        from rich.console import Group
        from rich.table import Table as RichTable

        t = RichTable(
            title="shoe %s — phase %s, round %s, deck %s"
            % (self.shoe or "?", self.phase, self.round, self.deck),
            title_justify="left",
        )
        t.add_column("position")
        t.add_column("cards")
        t.add_column("result")
        hands, results = self.hands, self.results
        for who in sorted(hands, key=lambda k: (not k.isdigit(), k)):
            t.add_row(
                "seat " + who if who.isdigit() else who, " ".join(hands[who]), results.get(who, "")
            )
        parts = [t]
        if self.latched:
            parts.append(
                "[bold red]latched errors:[/] "
                + "; ".join("#%s %s" % kv for kv in sorted(self.latched.items()))
            )
        for f in self.flags[-3:]:
            parts.append(
                "[bold red]%s[/] " % ("ALERT" if f.startswith("REVEAL") else "DISAGREEMENT") + f
            )
        parts.append("\n".join(self.log))
        return Group(*parts)


def line(kind, body):
    if kind == E.CARD:
        return "card #%s -> %s (round %s, face down)" % (
            body.get("position"),
            body.get("target"),
            body.get("round"),
        )
    if kind == E.REVEAL:
        return "reveal round %s: %s" % (body.get("round"), " ".join(body.get("cards") or []))
    short = {k: v for k, v in body.items() if not isinstance(v, (dict, list, bytes))}
    return "%s %s" % (kind, " ".join("%s=%s" % kv for kv in sorted(short.items())))


def run(args):
    from rich.console import Console
    from rich.live import Live

    from host_tools.audit import AuditStore
    from host_tools.engine.reeval import disagreements
    from host_tools.events import decode
    from host_tools.link import is_gateway_url, link_for

    k = keyfile.load(args)
    via = is_gateway_url(args.port)  # the gateway's audit store keeps every event
    if via and args.db:
        raise ShoeError("--db: through a gateway its own audit store keeps every event")
    store = None if (args.no_store or via) else AuditStore(args.db)
    console = Console(highlight=False)
    view = TableView()
    seen = 0
    deadline = time.monotonic() + args.seconds if args.seconds else None
    inline = None
    if args.paytable:
        with open(args.paytable) as f:
            inline = json.load(f)
    # it reads: the table key will do (through a gateway: the reader role)
    link = link_for(args.port, k["shoe"], audit=store, role="reader", rtscts=args.rtscts)
    live = None
    try:
        link.open(timeout=args.timeout)
        if via:  # the shoe's hello went to the gateway, not to us
            view.shoe = "%s (through %s)" % (link.shoe_id, args.port)
        config = link.command("status", {}, timeout=args.timeout).get("config") or {}
        if not args.json and console.is_terminal:
            live = Live(view.render(), console=console, refresh_per_second=8)
            live.start()
        reconnects, gaps = getattr(link, "reconnects", 0), 0
        while args.count is None or seen < args.count:
            if deadline and time.monotonic() > deadline:
                break
            ev = link.next_event(0.2)
            # the link made again (a gateway restarted: its events caught up), and any range
            # of events no longer there to catch up: said, never hidden
            notes = []
            if getattr(link, "reconnects", 0) > reconnects:
                reconnects = link.reconnects
                notes.append({"event": "link_reconnected", "via": args.port})
            for a, b in list(getattr(link, "gaps", ()))[gaps:]:
                gaps += 1
                notes.append({"event": "events_missed", "first": a, "last": b})
            for n in notes:
                if args.json:
                    print(json.dumps(n, sort_keys=True))
                    sys.stdout.flush()
                elif n["event"] == "events_missed":
                    view.flags.append(
                        "events %d-%d missed: no longer in the gateway's store (the floor has "
                        "them)" % (n["first"], n["last"])
                    )
                elif not live:
                    console.print("(the link to %s was made again)" % args.port)
            if ev is None:
                continue
            kind, body = decode(ev[0], ev[1])
            seen += 1
            if kind == E.ROUND_RESULT:
                problems = disagreements(
                    body,
                    body.get("paytable") or _table(config, inline),
                    body.get("rules", config.get("rules")),
                    link.watch.hands(body.get("round")),
                )
                if problems:
                    body = dict(body, disagreement=problems)
                    view.flags.extend(problems)
            if kind == E.PHASE and body.get("phase") == "open_round":
                config = link.command("status", {}, timeout=args.timeout).get("config") or config
            view.apply(kind, body)
            if args.json:
                print(
                    json.dumps(
                        {"event": kind, "eseq": ev[2], **body},
                        sort_keys=True,
                        default=E.json_default,
                    )
                )
                sys.stdout.flush()
            elif live:
                live.update(view.render())
            else:
                console.print(
                    line(kind, body)
                    + (
                        "  DISAGREEMENT: %s" % body["disagreement"]
                        if "disagreement" in body
                        else ""
                    )
                )
    except KeyboardInterrupt:
        pass
    finally:
        if live:
            live.stop()
        link.close()
        if store:
            store.close()
    if view.flags:
        raise ShoeError(
            "%d alert(s): result(s) disagreeing with the engine or reveals that "
            "do not match" % len(view.flags)
        )
    return 0
