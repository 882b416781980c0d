"""shoectl par: the par sheet of a pay table (host_tools.par, docs/par.md)."""

import json
import os
import sys

from host_tools.errors import ShoeError

NAME = "par"
HELP = "par sheet of a pay table: every wager's outcomes, return and house edge, exact"
DESCRIPTION = (
    "Compute the par sheet of a pay table: for every wager it offers, each outcome's "
    "combinations, probability, pay and contribution to the return, and the house edge (per "
    "unit wagered and per hand), exactly (enumeration or combinatorics, the method beside each "
    "figure; the main game under the best raise strategy, stated), cross-checked by a seeded "
    "simulation through the firmware's own engine (agreement within 3 standard errors is "
    "reported). --paytable takes a preset name (fcf-public-1, hcf-public-1, hcf-public-2), a "
    "JSON file or inline JSON, so a table can be checked before it is configured; a bad table "
    "is refused with the firmware's message naming the field. Takes 10-60 s."
)


def configure(p):
    p.add_argument(
        "--paytable",
        required=True,
        metavar="NAME|FILE|JSON",
        help="a preset name, a pay table JSON file, or the JSON itself",
    )
    p.add_argument(
        "--format",
        choices=("md", "json", "html"),
        default="md",
        help="Markdown tables (default), JSON (every number) or one HTML page",
    )
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a rule variant, e.g. ties=push or raise_when_dealer_not_open=win "
        "(Four Card Frenzy; default: the PA rules)",
    )
    p.add_argument(
        "--sim-rounds",
        type=int,
        default=None,
        metavar="N",
        help="rounds of six seats for the engine cross-check (default: 30000 FCF, "
        "20000 HCF; 0: none)",
    )
    p.add_argument("--seed", type=int, default=1, help="simulation seed (default 1)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def read_paytable(arg):
    """--paytable's value -> a preset name (str) or a document (dict)."""
    text = None
    if arg.lstrip().startswith("{"):
        text = arg
    elif os.path.exists(arg):
        try:
            with open(arg, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise ShoeError("cannot read pay table %s: %s" % (arg, e)) from None
    if text is None:
        return arg
    try:
        return json.loads(text)
    except ValueError as e:
        raise ShoeError(
            "pay table %s is not JSON: %s" % ("(inline)" if text is arg else arg, e)
        ) from None


def _rules(pairs):
    out = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k or not v:
            raise ShoeError("--rule wants NAME=VALUE, not %r" % p)
        out[k] = v
    return out


def run(args):
    from host_tools import par

    if args.sim_rounds is not None and args.sim_rounds < 0:
        raise ShoeError("--sim-rounds must be 0 or more")
    s = par.sheet(
        read_paytable(args.paytable), _rules(args.rule), sim_rounds=args.sim_rounds, seed=args.seed
    )
    text = par.render(s, args.format)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise ShoeError("cannot write %s: %s" % (args.output, e.strerror)) from None
    else:
        sys.stdout.write(text)
    sim = s.get("simulation")
    print(
        "par sheet %s: exact %.1f s, simulation %.1f s%s"
        % (
            s["paytable"]["name"],
            s["seconds"]["exact"],
            s["seconds"]["simulation"],
            ""
            if not sim
            else "; simulation agrees within %d SE: %s"
            % (sim["sigmas"], "yes" if sim["agrees"] else "NO"),
        ),
        file=sys.stderr,
    )
    return 0 if not sim or sim["agrees"] else 1
