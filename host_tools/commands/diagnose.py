"""shoectl diagnose: read quality per card, per deck and per position, from the audit store."""

import json

from host_tools import events as E
from host_tools.errors import ShoeError

NAME = "diagnose"
HELP = "read-quality diagnostics (misread, double-read, no-read rates) and a PNG chart"
DESCRIPTION = (
    "Compute read quality from the events in the audit store (what `shoectl monitor`, `session` "
    "or any command with --db stored): every card read (each named from its round's reveal: "
    "a card event holds only a commitment), every unreadable card (no read or a "
    "garbled code, with its position) and every double read the reader de-duplicated. Prints "
    "the rates per deck and per draw position and the worst cards, so a technician can tell a "
    "worn deck from a dirty sensor, and with --chart writes a PNG of read quality over time."
)


def configure(p):
    p.add_argument("--db", help="audit store (SQLite file); default under the user's data dir")
    p.add_argument("--shoe", help="only this shoe id (default: every shoe in the store)")
    p.add_argument("--chart", metavar="PNG", help="write a chart of read quality over time")
    p.add_argument(
        "--worst", type=int, default=10, help="how many worst cards to list (default 10)"
    )
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")


def records(events):
    """Audit-store events -> read records for host_tools.diagnose (pure; tested). A card of a
    round is known from the round's reveal (its card event holds only a commitment), so is a
    double read named by its round and position; a card event from firmware that sent cards
    in clear is taken as it is."""
    deck_of = {}
    revealed = {}
    for ev in events:
        b = ev["body"]
        if ev["kind"] == E.REVEAL and isinstance(b.get("cards"), list):
            revealed[(ev.get("shoe"), b.get("round"))] = b["cards"]

    def card_at(shoe, b):
        if b.get("card"):
            return b["card"]
        cards, p = revealed.get((shoe, b.get("round"))), b.get("position")
        if cards and isinstance(p, int) and 0 <= p < len(cards):
            return cards[p]
        return None

    out = []
    for ev in events:
        kind, b, t = ev["kind"], ev["body"], ev["received"]
        shoe = ev.get("shoe")
        if kind == E.ROUND_OPEN:
            deck_of[(shoe, b.get("round"))] = b.get("deck")
        elif kind == E.CARD:
            out.append(
                {
                    "t": t,
                    "outcome": E.OK,
                    "deck": deck_of.get((shoe, b.get("round"))),
                    "card": card_at(shoe, b),
                    "position": b.get("position"),
                }
            )
        elif kind == E.UNREADABLE:
            out.append(
                {
                    "t": t,
                    "outcome": E.read_outcome(b.get("reason")),
                    "deck": deck_of.get((shoe, b.get("round"))),
                    "position": b.get("position"),
                }
            )
        elif kind == E.DOUBLE_READ:
            for _ in range(int(b.get("count", 1))):
                out.append(
                    {
                        "t": t,
                        "outcome": E.DOUBLE_READ,
                        "deck": b.get("deck"),
                        "card": card_at(shoe, b),
                        "position": b.get("position"),
                    }
                )
    return out


def run(args):
    from rich.console import Console
    from rich.table import Table as RichTable

    from host_tools import diagnose
    from host_tools.audit import AuditStore

    store = AuditStore(args.db)
    try:
        evs = store.events(
            args.shoe, kinds=[E.ROUND_OPEN, E.CARD, E.REVEAL, E.UNREADABLE, E.DOUBLE_READ]
        )
    finally:
        store.close()
    recs = records(evs)
    if not recs:
        raise ShoeError(
            "no card reads in the audit store%s"
            % (" for shoe %s" % args.shoe if args.shoe else "")
        )
    rep = diagnose.summarize(recs, worst=args.worst)
    if args.chart:
        diagnose.chart(recs, args.chart)
    if args.json:
        print(json.dumps(rep, sort_keys=True, default=str))
        return 0
    c = Console(highlight=False)
    tot = rep["overall"]
    c.print(
        "%d read attempts: misread %.2f%%, double read %.2f%%, no read %.2f%%"
        % (
            tot["reads"],
            100 * tot["misread_rate"],
            100 * tot["double_read_rate"],
            100 * tot["no_read_rate"],
        )
    )
    worst_pos = sorted(rep["per_position"].items(), key=lambda kv: -kv[1]["problem_rate"])
    sections = (
        ("per deck", sorted(rep["per_deck"].items(), key=lambda kv: str(kv[0]))),
        ("worst cards", [(w["card"], w) for w in rep["worst_cards"]]),
        ("worst draw positions", [kv for kv in worst_pos if kv[1]["problem_rate"] > 0][:8]),
    )
    for title, rows in sections:
        if not rows:
            continue
        t = RichTable(title=title, title_justify="left")
        for col in ("", "reads", "misread", "double read", "no read"):
            t.add_column(col, justify="right" if col else "left")
        for k, r in rows:
            t.add_row(
                str(k),
                str(r["reads"]),
                "%.2f%%" % (100 * r["misread_rate"]),
                "%.2f%%" % (100 * r["double_read_rate"]),
                "%.2f%%" % (100 * r["no_read_rate"]),
            )
        c.print(t)
    if args.chart:
        c.print("chart written to %s" % args.chart)
    return 0
