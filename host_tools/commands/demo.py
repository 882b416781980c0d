"""shoectl demo: a virtual table of six seats dealing Four Card Frenzy through the virtual shoe.

Wiring only: the players and their script are the simulator's (host_tools/sim/demo.py), the
screen is host_tools/display.py."""

import sys
import tempfile
import time

NAME = "demo"
HELP = "deal rounds of Four Card Frenzy to six seats on the virtual board, live"
DESCRIPTION = (
    "Start the virtual board (the real firmware on the MicroPython unix port) and the world "
    "simulator, load and check a deck, and deal --rounds rounds of Four Card Frenzy (manual "
    "shoe) to six seats and the dealer. The players decide from their own cards on the table; "
    "the shoe sends each card face down (a commitment) and reveals them when the last player "
    "has decided. Shows every card the shoe read and where it went (once revealed), each "
    "seat's best hand, the dealer's, every wager's result and payout (example pay tables), and "
    "a summary. About one round in ten gets an injected fault; the shoe voids it and says why. "
    "Demo keys are provisioned for the virtual board: never use them on a casino floor."
)


def configure(p):
    p.add_argument("--rounds", type=int, default=6, help="rounds to deal (default 6)")
    p.add_argument("--seed", type=int, default=7, help="seed for shuffles, wagers, faults")
    p.add_argument(
        "--faults",
        type=float,
        default=0.1,
        help="share of rounds with an injected fault (default 0.1, 0 = none)",
    )
    p.add_argument("--state", help="state directory of the virtual board (default: a temp dir)")


def run(args):
    from host_tools.display import RoundDisplay
    from host_tools.errors import ShoeError
    from host_tools.sim.demo import demo_script, strategy
    from host_tools.sim.virtual_table import VirtualTable

    if not 1 <= args.rounds <= 10000:
        raise ShoeError("--rounds must be 1..10000")
    if not 0 <= args.faults <= 1:
        raise ShoeError("--faults must be between 0 and 1")
    from rich.console import Console

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 132)
    script = demo_script(args.rounds, args.seed, args.faults)
    console.print(
        "[bold]Smart dealing shoe — demo[/] (virtual board: the firmware on the "
        "MicroPython unix port)"
    )
    console.print(
        "Pay table [bold]fcf-public-1[/]: an EXAMPLE table from public game "
        "descriptions; its All-Six Bonus values are ILLUSTRATIVE (no public table). "
        "Demo keys: not for a casino floor."
    )
    show = RoundDisplay(console)
    state = args.state or tempfile.mkdtemp(prefix="shoe-demo-")
    t0 = time.monotonic()
    with VirtualTable(state, on_event=show) as table:
        table.runner.strategy = strategy
        console.print(
            "virtual board up in %.2f s; host %s"
            % (table.board.boot_seconds, table.board.host_url)
        )
        outcomes = table.runner.play(script)
    show.summary(len(outcomes), time.monotonic() - t0)
    if len(outcomes) != args.rounds:
        raise ShoeError("%d rounds dealt but %d outcomes" % (args.rounds, len(outcomes)))
    sys.stdout.flush()
    return 0
