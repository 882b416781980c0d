"""shoectl demo: a virtual table of six seats dealing Four Card Frenzy through the virtual shoe."""
import random
import sys
import tempfile
import time

from rich.console import Console
from rich.table import Table as RichTable

from shoe import cards
from shoe.games import engine

NAME = "demo"
HELP = "deal rounds of Four Card Frenzy to six seats on the virtual board, live"
DESCRIPTION = (
    "Start the virtual board (the real firmware on the MicroPython unix port) and the world "
    "simulator, load and check a deck, and deal --rounds rounds of Four Card Frenzy (manual "
    "shoe) to six seats and the dealer. Shows every card the shoe read and where it went, each "
    "seat's best hand, the dealer's, every wager's result and payout (example pay tables), and "
    "a summary. About one round in ten gets an injected fault; the shoe voids it and says why. "
    "Demo keys are provisioned for the virtual board: never use them on a casino floor.")

FAULT_KINDS = ("foreign", "forged", "duplicate", "extra-card", "no-read-x3", "other-back")


def configure(p):
    p.add_argument("--rounds", type=int, default=6, help="rounds to deal (default 6)")
    p.add_argument("--seed", type=int, default=7, help="seed for shuffles, wagers, faults")
    p.add_argument("--faults", type=float, default=0.1,
                   help="share of rounds with an injected fault (default 0.1, 0 = none)")
    p.add_argument("--state", help="state directory of the virtual board (default: a temp dir)")


def strategy(rnd, hands, seats):
    """A simple player: 3x with a pair of aces or better, 1x with any pair, else fold."""
    out = {}
    for seat, spec in seats.items():
        ante = spec["wagers"]["ante"]
        hand = hands.get(seat) or hands.get(int(seat)) or []
        try:
            engine.check_raise("four-card-frenzy", int(seat), hand, ante, 3 * ante)
            out[seat] = 3 * ante
            continue
        except ValueError:
            pass
        ranks = [cards.rank(cards.parse(c)) for c in hand]
        out[seat] = ante if len(set(ranks)) < len(ranks) else 0
    return out


def _wagers(rng):
    ante = rng.choice((5, 10, 25))
    w = {"ante": ante, "odds": ante}
    for k in ("prime", "four_card_bonus", "all_six"):
        if rng.random() < 0.5:
            w[k] = rng.choice((5, 10))
    return w


def _script(args):
    rng = random.Random(args.seed)
    rounds = []
    faulty = 0
    for i in range(args.rounds):
        seats = {str(s): {"wagers": _wagers(rng)} for s in range(1, 7)}
        faults = []
        if args.faults > 0 and (rng.random() < args.faults or (i == args.rounds - 1 and faulty == 0
                                                               and args.rounds >= 3)):
            faulty += 1
            kind = rng.choice(FAULT_KINDS)
            at = rng.randrange(1, 30)
            if kind == "extra-card":
                faults.append({"kind": kind})
            elif kind == "no-read-x3":
                faults.append({"kind": "no-read", "at": at, "times": 3})
            else:
                faults.append({"kind": kind, "at": at})
        rounds.append({"seats": seats, "faults": faults})
    return {"game": "four-card-frenzy", "procedure": "manual-shoe", "paytable": "fcf-public-1",
            "rules": {"ties": "player", "raise_when_dealer_not_open": "compare"},
            "seed": args.seed, "rounds": rounds}


class Display:
    """Prints each card as the shoe reports it, then the round's settlement table."""

    def __init__(self, console):
        self.c = console
        self.line = []
        self.results = []
        self.voids = []
        self.cards = 0
        self.t0 = time.monotonic()

    def __call__(self, kind, body):
        c = self.c
        if kind == "deck_check":
            c.print("[bold]deck check[/] %s: %s" % (body.get("deck", ""), "OK, 52 cards + cover card"
                    if body.get("ok") else "FAILED %s" % body))
        elif kind == "round_open":
            c.rule("round %s  (deck %s, %s cards to deal)" % (body.get("round"), body.get("deck"),
                                                              body.get("cards")))
        elif kind == "card":
            self.cards += 1
            self.line.append("%s→%s" % (body.get("card"), _short(body.get("target"))))
            if len(self.line) == 7:
                self._flush()
        elif kind == "deal_complete":
            self._flush()
        elif kind in ("irregularity", "unreadable", "warning"):
            self._flush()
            c.print("[yellow]%s[/] %s" % (kind, _brief(body)))
        elif kind == "decision_refused":
            c.print("[yellow]decision refused:[/] %s" % body.get("message"))
        elif kind == "round_void":
            self._flush()
            self.voids.append(body)
            c.print("[bold red]round %s VOID[/]: %s (%s)" % (body.get("round"), body.get("reason"),
                                                           body.get("detail")))
        elif kind == "round_result":
            self._flush()
            self.results.append(body)
            self._result(body)

    def _flush(self):
        if self.line:
            self.c.print("  read: " + "  ".join(self.line))
            self.line = []

    def _result(self, r):
        d = r["dealer"]
        t = RichTable(title="round %s: dealer %s, best four %s = %s (%s)" % (
            r.get("round"), " ".join(d["cards"]), " ".join(d["best"]), d["category"],
            "opens" if d.get("opens") else "does not open"), title_justify="left",
            caption="each wager: amount → payout (odds when above 1:1); All-Six card %s" % (
                r.get("all_six_card"),),
            caption_justify="left")
        t.add_column("seat", justify="right")
        t.add_column("cards", no_wrap=True)
        t.add_column("best four", no_wrap=True)
        t.add_column("hand")
        for k, head in WAGER_COLUMNS:
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
                    cells.append("%d → %+d%s" % (x["amount"], x["payout"],
                                                 " (%s)" % _mult(x["result"]) if x["result"] > 1 else ""))
            t.add_row(seat, " ".join(s["cards"]), " ".join(s["best"]), s["category"], *cells,
                      "%+d" % s["net"])
        self.c.print(t)


WAGER_COLUMNS = (("ante", "ante"), ("odds", "odds"), ("raise", "raise"), ("prime", "prime"),
                 ("four_card_bonus", "4-card bonus"), ("all_six", "all-six"))


def _mult(x):
    return "%g:1" % x


def _short(target):
    if isinstance(target, str):
        return {"dealer": "D", "all_six": "A6", "discard": "X"}.get(target, target.replace("seat ", "S"))
    return str(target)


def _brief(body):
    keep = {k: v for k, v in body.items() if k in ("reason", "action", "round", "position", "detail")}
    return " ".join("%s=%s" % kv for kv in keep.items())


def run(args):
    from host_tools.errors import ShoeError
    from host_tools.sim.virtual_table import VirtualTable

    if not 1 <= args.rounds <= 10000:
        raise ShoeError("--rounds must be 1..10000")
    if not 0 <= args.faults <= 1:
        raise ShoeError("--faults must be between 0 and 1")
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 132)
    script = _script(args)
    console.print("[bold]Smart dealing shoe — demo[/] (virtual board: the firmware on the "
                  "MicroPython unix port)")
    console.print("Pay table [bold]fcf-public-1[/]: an EXAMPLE table from public game "
                  "descriptions; its All-Six Bonus values are ILLUSTRATIVE (no public table). "
                  "Demo keys: not for a casino floor.")
    show = Display(console)
    state = args.state or tempfile.mkdtemp(prefix="shoe-demo-")
    t0 = time.monotonic()
    with VirtualTable(state, on_event=show) as table:
        table.runner.strategy = strategy
        console.print("virtual board up in %.2f s; host %s" % (table.board.boot_seconds,
                                                               table.board.host_url))
        outcomes = table.runner.play(script)
    dt = time.monotonic() - t0
    net = sum(s["net"] for r in show.results for s in r["seats"].values())
    summary = RichTable(title="summary", title_justify="left")
    summary.add_column("what")
    summary.add_column("value", justify="right")
    summary.add_row("rounds", str(len(outcomes)))
    summary.add_row("settled", str(len(show.results)))
    summary.add_row("voided", "%d %s" % (len(show.voids), ", ".join(
        sorted({v["reason"] for v in show.voids})) if show.voids else ""))
    summary.add_row("cards read", str(show.cards))
    summary.add_row("players' net", "%+d" % net)
    summary.add_row("time", "%.1f s" % dt)
    console.print(summary)
    if len(outcomes) != args.rounds:
        raise ShoeError("%d rounds dealt but %d outcomes" % (args.rounds, len(outcomes)))
    sys.stdout.flush()
    return 0

