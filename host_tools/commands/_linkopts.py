"""The options every `shoectl` command that talks to a shoe shares (--port, the keys, --timeout,
--db) and `connect()`, which opens the link those options name. Not a command (cli.py skips
modules whose name starts with "_")."""

import sys

from host_tools import keys as keyfile
from host_tools.errors import ShoeError


def add_rtscts(p):
    """--rtscts: the host honours the shoe's RTS on a serial device."""
    p.add_argument(
        "--rtscts",
        action="store_true",
        help="hardware flow control on a serial device: send only while the shoe's RTS "
        "(wired to the adapter's CTS, as the Pico's wiring does: docs/hardware.md) says it "
        "can receive",
    )


def add_port_arguments(p, db=True):
    """The options every `shoectl` command that talks to a shoe shares."""
    p.add_argument(
        "--port",
        required=True,
        help="pyserial URL or device of the shoe's host UART "
        "(socket://127.0.0.1:PORT from `shoectl sim`, /dev/ttyACM0, ...), or the "
        "API of the `shoectl gateway` holding it: gateway+unix:///PATH.sock or "
        "gateway+tcp://127.0.0.1:PORT[?key=FILE] (gateway+tls://HOST:PORT[?ca=FILE] "
        "under TLS)",
    )
    keyfile.add_arguments(p)
    add_rtscts(p)
    p.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds to wait for the shoe to answer (default 10)",
    )
    if db:
        p.add_argument(
            "--db",
            help="audit store (SQLite) that receives the events this "
            "connection carries; default under the user's data dir",
        )


def connect(args, audit=True, read_only=False):
    """Open a ShoeLink for a CLI command: keys from --keys/--demo-keys, events into the audit
    store (so a short command never swallows events the table system has not stored).
    read_only: a command that changes nothing (status, rounds, errors without --ack) still
    answers when the audit store holds a longer log under this shoe's id (another shoe, or a
    reset journal): it warns and goes on without storing. Returns (link, keys, store); the
    caller closes link and store."""
    from host_tools.audit import AuditStore  # here: every shoectl start builds the options
    from host_tools.link import REASONS, ShoeLink, is_gateway_url, link_for

    k = keyfile.load(args)
    if is_gateway_url(args.port):  # the gateway's audit store keeps every event
        if getattr(args, "db", None):
            raise ShoeError("--db: through a gateway its own audit store keeps every event")
        link = link_for(args.port, k["shoe"], supervisor_key=k.get("supervisor"))  # no port
        try:
            link.open(timeout=args.timeout)
        except BaseException:
            link.close()
            raise
        return link, k, None
    store = AuditStore(getattr(args, "db", None)) if audit else None
    link = ShoeLink(
        args.port,
        k["shoe"],
        supervisor_key=k.get("supervisor"),
        audit=store,
        rtscts=getattr(args, "rtscts", False),
    )
    try:
        link.open(timeout=args.timeout)
    except ShoeError:
        link.close()
        if store:
            store.close()
        if not (read_only and store is not None and link.ep.refused == "sequence_reset"):
            raise
        print(
            "warning: %s; this read-only command goes on without storing events"
            % REASONS["sequence_reset"].split(": refusing")[0],
            file=sys.stderr,
        )
        return connect(args, audit=False)
    except BaseException:
        link.close()
        if store:
            store.close()
        raise
    return link, k, store
