"""shoectl world: play the dealer at a virtual board's code-reader endpoint."""

import time

from host_tools.errors import ShoeError

NAME = "world"
HELP = "be the dealer: draw cards past the virtual board's code reader"
DESCRIPTION = (
    "Connect to the code-reader endpoint of a running virtual board (`shoectl sim` prints it) "
    "and draw cards from a deck in the shoe, as a dealer would: a deck check (all 52 cards and "
    "the cover card) and/or N cards, at a human pace (--pace seconds per card). Reader faults "
    "can be injected: --fault AT:KIND (misread, double-read, no-read, foreign, forged, "
    "other-back, duplicate)."
)


def configure(p):
    p.add_argument("--reader", required=True, help="socket://127.0.0.1:PORT of the reader UART")
    p.add_argument("--seed", type=int, default=1, help="shuffle seed for the deck (default 1)")
    p.add_argument("--serial", default="3A7F", help="deck serial, 4 hex digits (default 3A7F)")
    p.add_argument("--back", choices=["R", "B"], default="R", help="back colour (default R)")
    p.add_argument(
        "--deck-check", action="store_true", help="first run the whole deck + cover card"
    )
    p.add_argument("--cards", type=int, default=0, help="cards to draw (default 0)")
    p.add_argument(
        "--skip",
        type=int,
        default=0,
        help="cards of this shuffle already dealt (by an earlier call): start after them",
    )
    p.add_argument(
        "--stub",
        action="store_true",
        help="last, run the stub (the undealt cards) and the cover card, as the shoe "
        "asks after the decisions of a round",
    )
    p.add_argument("--pace", type=float, default=0.5, help="seconds between cards (default 0.5)")
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="AT:KIND",
        help="inject a fault on the card drawn at position AT",
    )
    p.add_argument(
        "--keys",
        metavar="FILE",
        help="the shoe's provisioning file: its card key signs the printed codes "
        "(default: the virtual board's demo card key; an emulated or bench shoe "
        "provisioned with its own keys needs its file)",
    )


def _addr(url):
    if not url.startswith("socket://"):
        raise ShoeError(
            "--reader must be socket://HOST:PORT (the virtual board's reader endpoint)"
        )
    host, _, port = url[len("socket://") :].rpartition(":")
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        raise ShoeError("bad port in %s" % url) from None


def card_key(args):
    """{"card_key": bytes} from --keys (only the card key is read), or {} for the demo key."""
    if not args.keys:
        return {}
    from host_tools import keys as keyfile

    return {"card_key": keyfile.load(args, environ={})["card"]}


def run(args):
    from host_tools.sim.world import Deck, ReaderPort, World, WorldError

    try:
        serial = int(args.serial, 16)
    except ValueError:
        raise ShoeError("--serial must be 4 hex digits") from None
    if not 0 <= serial <= 0xFFFF or not 0 <= args.cards <= 52 or args.pace < 0:
        raise ShoeError("--serial must be 0000..FFFF, --cards 0..52, --pace >= 0")
    if not 0 <= args.skip <= 52 - args.cards:
        raise ShoeError("--skip must be 0..%d (with --cards %d)" % (52 - args.cards, args.cards))
    faults = {}
    for f in args.fault:
        at, _, kind = f.partition(":")
        try:
            faults[int(at)] = {"kind": kind}
        except ValueError:
            raise ShoeError("--fault must look like 7:no-read, got %r" % f) from None
    try:
        port = ReaderPort(*_addr(args.reader))
        world = World(port, gap_s=args.pace, **card_key(args))
        deck = Deck(serial, args.back, seed=args.seed)
        if args.deck_check:
            world.deck_check(deck)
            print("deck check: 52 cards + cover card sent")
        world.new_round()
        deck.pos = args.skip
        for i in range(args.cards):
            world.draw(deck, faults.get(i))
            print(
                "card %2d: %s%s"
                % (i, port.sent[-1].decode(), "  (%s)" % faults[i]["kind"] if i in faults else "")
            )
        if args.stub:
            n = len(deck.remaining())
            world.stub(deck)
            print("stub: %d cards + cover card sent" % n)
        time.sleep(0.05)
        port.close()
    except WorldError as e:
        raise ShoeError(str(e)) from None
    return 0
