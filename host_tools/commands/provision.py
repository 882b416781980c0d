"""`shoectl provision`: write the shoe's identity and keys to its flash (never echoed)."""

from host_tools import deploy as _deploy
from host_tools import keys as _keys

NAME = "provision"
HELP = "write the shoe's id and keys (shoe, supervisor, card) to the board's flash"
DESCRIPTION = (
    "Write <state>/shoe.json on the board over its REPL: {version, shoe_id, keys}. Keys come "
    'from a JSON file (--keys FILE: {"shoe": HEX, "supervisor": HEX, "card": HEX} or a '
    "provisioning file) and/or "
    "the environment (SHOE_KEY_SHOE, SHOE_KEY_SUPERVISOR, SHOE_KEY_CARD), never from the command "
    "line, and are never printed. The file is written beside the old one, read back by SHA-256, "
    "then renamed over it. An existing configuration is only replaced with --force."
)


def configure(parser):
    parser.add_argument("--port", required=True, help="serial port of the board's REPL")
    parser.add_argument("--shoe-id", required=True, help="the shoe's identity, e.g. T07-SHOE-1")
    parser.add_argument("--keys", metavar="FILE", help="JSON file holding the keys (hex)")
    parser.add_argument(
        "--state-dir", default="state", help="state directory on the device (default: state)"
    )
    parser.add_argument(
        "--force", action="store_true", help="replace an existing configuration (new keys)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        help="seconds to wait for the REPL to answer (default 5)",
    )


def run(args):
    keys = _keys.for_provisioning(args.keys)
    _deploy.provision(
        args.port,
        args.shoe_id,
        keys,
        state_dir=args.state_dir,
        force=args.force,
        timeout=args.timeout,
    )
    return 0
