"""A live display of a table's events on a terminal (rich): every card the shoe read and where it
went, irregularities and voids, each round's settlement table, and a closing summary. The demo
shows its rounds with it; it takes the events of any board.

A card of an open round is face down: the shoe sends only its commitment, so the display shows
the deal as it goes (how many cards, to whom) and each card once the round is revealed (when
the decisions close, or the round is voided); reveal_mismatch alerts (host_tools/reveal.py)
are shown in red.

    show = RoundDisplay(Console())
    runner = TableRunner(..., on_event=show)       # show(kind, body) for every event
    show.summary(rounds, seconds)
"""

import time

from rich.table import Table as RichTable

from host_tools import events as E
from host_tools.livetable import LiveTable


class RoundDisplay:
    """Prints each card as the shoe reports it, then the round's settlement table."""

    def __init__(self, console):
        self.c = console
        self.line = []
        self.results = []
        self.voids = []
        self.table = LiveTable()  # what the events say of the table (one model)
        self.t0 = time.monotonic()

    @property
    def cards(self):
        return self.table.cards_read

    def __call__(self, kind, body):
        c = self.c
        t = self.table
        t.apply(kind, body)
        if kind == E.DECK_CHECK:
            c.print(
                "[bold]deck check[/] %s: %s"
                % (
                    body.get("deck", ""),
                    "OK, 52 cards + cover card" if body.get("ok") else "FAILED %s" % body,
                )
            )
        elif kind == E.ROUND_OPEN:
            c.rule(
                "round %s  (deck %s, %s cards to deal)"
                % (body.get("round"), body.get("deck"), body.get("cards"))
            )
        elif kind == E.DEAL_COMPLETE:
            c.print(
                "  dealt %d cards face down (the shoe sends each as a commitment)"
                % body.get("cards", t.dealt)
            )
        elif kind == E.REVEAL:
            for _, card, target in t.revealed or ():
                self.line.append("%s→%s" % (card, _short(target)))
                if len(self.line) == 7:
                    self._flush()
            self._flush()
        elif kind == E.REVEAL_MISMATCH:
            c.print(
                "[bold red]REVEAL MISMATCH[/] round %s: %s"
                % (body.get("round"), body.get("detail"))
            )
        elif kind in (E.IRREGULARITY, E.UNREADABLE, E.WARNING):
            self._flush()
            c.print("[yellow]%s[/] %s" % (kind, _brief(body)))
        elif kind == E.DECISION_REFUSED:
            c.print("[yellow]decision refused:[/] %s" % body.get("message"))
        elif kind == E.ROUND_VOID:
            self._flush()
            self.voids.append(body)
            c.print(
                "[bold red]round %s VOID[/]: %s (%s)"
                % (body.get("round"), body.get("reason"), body.get("detail"))
            )
        elif kind == E.ROUND_RESULT:
            self._flush()
            self.results.append(t.result)
            self._result(t.result)

    def _flush(self):
        if self.line:
            self.c.print("  read: " + "  ".join(self.line))
            self.line = []

    def _result(self, r):
        d = r["dealer"]
        t = RichTable(
            title="round %s: dealer %s, best four %s = %s (%s)"
            % (
                r.get("round"),
                " ".join(d["cards"]),
                " ".join(d["best"]),
                d["category"],
                "opens" if d.get("opens") else "does not open",
            ),
            title_justify="left",
            caption="each wager: amount → payout (odds when above 1:1); All-Six card %s"
            % (r.get("all_six_card"),),
            caption_justify="left",
        )
        t.add_column("seat", justify="right")
        t.add_column("cards", no_wrap=True)
        t.add_column("best four", no_wrap=True)
        t.add_column("hand")
        for _k, head in WAGER_COLUMNS:
            t.add_column(head, justify="right")
        t.add_column("net", justify="right")
        for seat, s in sorted(r["seats"].items(), key=lambda kv: int(kv[0])):
            w = s["wagers"]
            cells = []
            for k, _ in WAGER_COLUMNS:
                x = w.get(k)
                if x is None:
                    cells.append("")
                elif k == "raise" and x["amount"] == 0:
                    cells.append("fold")
                else:
                    cells.append(
                        "%d → %+d%s"
                        % (
                            x["amount"],
                            x["payout"],
                            " (%s)" % _mult(x["result"]) if x["result"] > 1 else "",
                        )
                    )
            t.add_row(
                seat,
                " ".join(s["cards"]),
                " ".join(s["best"]),
                s["category"],
                *cells,
                "%+d" % s["net"],
            )
        self.c.print(t)

    def summary(self, rounds, seconds):
        """The closing table: rounds, settled, voided (with reasons), cards, net, time."""
        net = sum(s["net"] for r in self.results for s in r["seats"].values())
        t = RichTable(title="summary", title_justify="left")
        t.add_column("what")
        t.add_column("value", justify="right")
        t.add_row("rounds", str(rounds))
        t.add_row("settled", str(len(self.results)))
        t.add_row(
            "voided",
            "%d %s"
            % (
                len(self.voids),
                ", ".join(sorted({v["reason"] for v in self.voids})) if self.voids else "",
            ),
        )
        t.add_row("cards read", str(self.cards))
        t.add_row("players' net", "%+d" % net)
        t.add_row("time", "%.1f s" % seconds)
        self.c.print(t)


WAGER_COLUMNS = (
    ("ante", "ante"),
    ("odds", "odds"),
    ("raise", "raise"),
    ("prime", "prime"),
    ("four_card_bonus", "4-card bonus"),
    ("all_six", "all-six"),
)


def _mult(x):
    return "%g:1" % x


def _short(target):
    if isinstance(target, str):
        return {"dealer": "D", "all_six": "A6", "discard": "X"}.get(
            target, target.replace("seat ", "S")
        )
    return str(target)


def _brief(body):
    keep = {
        k: v for k, v in body.items() if k in ("reason", "action", "round", "position", "detail")
    }
    return " ".join("%s=%s" % kv for kv in keep.items())
