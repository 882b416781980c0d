"""shoectl gateway: the table's link holder; the table system's API; its events to MQTT."""

NAME = "gateway"
HELP = (
    "hold the link to one shoe, serve the table system on a local API, and publish its "
    "verified events to the floor's MQTT broker"
)
DESCRIPTION = (
    "Connect to the shoe (authenticated link, keys from --keys), store every event in the local "
    "audit store (--db) before acknowledging it, and publish every stored event to the broker "
    "(QoS 1, persistent session, topic floor/shoe/<id>/events, the signed payload unchanged, "
    "with this gateway's receive time in a signed envelope unless --plain-events) "
    "from that store: a broker outage or a gateway restart loses nothing, publishing resumes from "
    "the saved cursor (--state). A retained floor/shoe/<id>/state message carries the live table "
    "state. Broker: mqtt://HOST:PORT or mqtts://HOST:PORT (TLS; CA file in env SHOE_MQTT_CA); a "
    "user name in the URL takes its password from env SHOE_MQTT_PASSWORD. The table system "
    "reaches the shoe through the gateway's API (docs/floor.md): a Unix socket (default "
    "next to --db, mode 0600) and/or 127.0.0.1:--api-tcp (any --api-host under TLS: "
    "--api-tls-cert/--api-tls-key), with two credentials bound to roles: the table key (any "
    "role; --api-key FILE) and the reader key (status and events only; --api-reader-key FILE), "
    "each a fresh random key file written 0600 at each start unless given, and named clients "
    "each with its own credential and roles (--api-clients, `shoectl gateway-client`); "
    "`shoectl table`, "
    "`session --port` and `monitor` take --port gateway+unix:///PATH.sock. The gateway holds "
    "the port alone: another process opening it is refused and told to go through the API. "
    "Without --broker it holds the link and serves the API only (a bench, the hand-dealt "
    "round of the README). Runs until Ctrl-C; "
    "exits 1 with the reason if the link stops for good (its audit store failed: a full or "
    "read-only disk), logged on stderr with every other error."
)


def configure(p):
    from host_tools.commands._linkopts import add_port_arguments

    add_port_arguments(p)
    p.add_argument(
        "--broker",
        help="MQTT broker URL (mqtt://host:1883); without it the gateway "
        "only holds the link for the table system and stores every event (a bench, "
        "a table off the floor)",
    )
    p.add_argument("--state", help="file keeping the published cursor (default: next to --db)")
    p.add_argument("--name", help="MQTT client id (default gw-<shoe id>)")
    p.add_argument(
        "--api-socket",
        metavar="PATH",
        help="the table system's API on this Unix socket (default: next to --db, "
        "<db>.api.sock); 'none' for no socket",
    )
    p.add_argument(
        "--api-tcp",
        type=int,
        metavar="PORT",
        help="also (or only) on 127.0.0.1:PORT (0: a free port, printed)",
    )
    p.add_argument(
        "--api-key",
        metavar="FILE",
        help="the API credential: a key file the operator gives (mode 0600, at least "
        "16 bytes); default: a fresh random key written 0600 beside the socket "
        "(<socket without .sock>.key) at each start. It may take every role "
        "(reader, table, supervisor)",
    )
    p.add_argument(
        "--api-reader-key",
        metavar="FILE",
        help="the read-only clients' credential (monitor, display): it logs in as "
        "`reader` only; default: a fresh random key written 0600 beside the socket "
        "(<socket without .sock>.reader.key) at each start",
    )
    p.add_argument(
        "--api-host",
        default="127.0.0.1",
        metavar="ADDR",
        help="the --api-tcp listener's address (default 127.0.0.1; another address "
        "only under TLS)",
    )
    p.add_argument(
        "--api-tls-cert",
        metavar="FILE",
        help="serve --api-tcp under TLS with this certificate (chain, PEM); clients "
        "take gateway+tls://HOST:PORT?ca=FILE",
    )
    p.add_argument("--api-tls-key", metavar="FILE", help="the private key of --api-tls-cert")
    p.add_argument(
        "--api-tls-client-ca",
        metavar="FILE",
        help="mutual TLS on --api-tcp: every client presents a certificate this CA signed "
        "(gateway+tls://...&cert=FILE&certkey=FILE); a named client's certificate must "
        "carry its name as common name",
    )
    p.add_argument(
        "--api-clients",
        metavar="FILE",
        help="named clients, each its own credential and roles (`shoectl gateway-client "
        "add NAME --roles ROLES --clients FILE --out KEYFILE`); the file is read again when "
        "it changes: a removed client's connections end within a second",
    )
    p.add_argument(
        "--plain-events",
        action="store_true",
        help="publish each event as the bare signed payload, without the envelope "
        "carrying this gateway's receive time (for collectors older than the "
        "envelope, during a rollout: upgrade the collectors first)",
    )
    p.add_argument(
        "--publish-rate",
        type=_rate,
        metavar="N",
        help="publish at most N events a second from the store (default: no cap); spreads "
        "the catch-up after a broker outage when a floor's gateways reconnect at once",
    )
    # ---- ops (issue 20, item 5): metrics and store pruning (host_tools/floor/prune.py)
    p.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve /healthz and Prometheus /metrics here (e.g. 127.0.0.1:9102)",
    )
    p.add_argument(
        "--prune-after",
        type=float,
        metavar="HOURS",
        help="remove from the local store the events the broker acknowledged more "
        "than HOURS ago (keeping the last --prune-keep); default: keep everything",
    )
    p.add_argument(
        "--prune-keep",
        type=int,
        default=1000,
        metavar="N",
        help="with --prune-after: always keep the last N events (default 1000)",
    )


def _rate(text):
    """--publish-rate: events a second, a positive number."""
    import argparse

    try:
        v = float(text)
    except ValueError:
        v = 0.0
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError("events a second, a positive number: %r" % text)
    return v


def _drain(link, stop, failed):
    """Without a broker: take the link's events off its queue (the store has them). A link that
    stopped for good (its audit store failed: link.fatal) sets `failed`: the gateway exits."""
    from host_tools.errors import ShoeError

    while not stop.is_set():
        try:
            link.next_event(0.5)
        except ShoeError:
            if link.fatal:
                failed.set()
                return
            stop.wait(0.5)


def _failed(reason):
    """The gateway cannot do its job any more (the shoe's link stopped: its audit store
    failed): said on the log, and `shoectl gateway` exits 1 with the reason."""
    import logging

    from host_tools.errors import ShoeError

    logging.getLogger("shoe.floor.gateway").error("stopping: %s", reason)
    return ShoeError("gateway stopped: %s" % reason)


def _open_patiently(link, args):
    """A daemon waits for its shoe: a board still booting (an emulated Pico takes minutes on a
    loaded machine) or powered up after the gateway is no reason to exit. Each --timeout without
    a handshake is said on stdout and tried again; a refusal (wrong key, another protocol, this
    host's own refusal of the shoe) ends the gateway, naming it."""
    from host_tools.errors import ShoeError

    while True:
        try:
            return link.open(timeout=args.timeout)
        except ShoeError as e:
            if link.ep.refused or link.ep.peer_version or link.fatal:
                raise
            print("gateway: waiting for the shoe (%s)" % e, flush=True)


def run(args):
    import logging
    import threading
    from pathlib import Path

    from host_tools import keys as keyfile
    from host_tools.audit import AuditStore
    from host_tools.errors import ShoeError
    from host_tools.floor.apiclients import ClientsFile
    from host_tools.floor.gateway import Gateway
    from host_tools.floor.runner import wait_for_signal
    from host_tools.floor.tableapi import TableAPI
    from host_tools.link import ShoeLink, apiwire

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )  # the daemon's log on stderr (floor/errlog.py)
    k = keyfile.load(args)
    if apiwire.is_gateway_url(args.port):
        raise ShoeError("the gateway holds the shoe's port itself: --port is the UART")
    store = AuditStore(args.db)
    sock = (
        None
        if args.api_socket == "none"
        else Path(args.api_socket or store.path.with_suffix(".api.sock")).absolute()
    )
    if sock is None and args.api_tcp is None:
        raise ShoeError(
            "--api-socket none needs --api-tcp PORT: the table system must reach "
            "the shoe through the gateway"
        )
    base = (
        sock.with_suffix("")
        if sock and sock.suffix == ".sock"
        else Path(str(sock or store.path.with_suffix(".api")))
    )
    secrets, key_files = {}, {}
    for cred, given in (("table", args.api_key), ("reader", args.api_reader_key)):
        if given:
            secrets[cred], key_files[cred] = apiwire.load_secret(given), given
        else:
            key_files[cred] = str(base) + (".key" if cred == "table" else ".reader.key")
            secrets[cred] = apiwire.new_secret_file(key_files[cred])
    if (args.api_tls_cert is None) != (args.api_tls_key is None):
        raise ShoeError("TLS on the API needs both --api-tls-cert and --api-tls-key")
    if args.api_tls_client_ca and not args.api_tls_cert:
        raise ShoeError("--api-tls-client-ca needs TLS: give --api-tls-cert and --api-tls-key")
    tls = (
        apiwire.server_tls(args.api_tls_cert, args.api_tls_key, args.api_tls_client_ca)
        if args.api_tls_cert
        else None
    )
    if tls is not None and args.api_tcp is None:
        raise ShoeError("--api-tls-cert is for the TCP listener: give --api-tcp PORT")
    note = lambda text: print("gateway: %s" % text, flush=True)  # noqa: E731
    named = ClientsFile(args.api_clients, note) if args.api_clients else None
    # the table key only: the gateway reads (status), stores and forwards; the supervisor's
    # commands come sealed by the supervisor's own client (docs/floor.md)
    link = ShoeLink(args.port, k["shoe"], audit=store, rtscts=args.rtscts)
    link.port_via = (
        ("gateway+unix://%s" % sock)
        if sock
        else "gateway+%s://%s:%s"
        % ("tls" if tls else "tcp", args.api_host, args.api_tcp or "PORT")
    )
    gw = api = None
    stop = threading.Event()
    failed = threading.Event()
    try:
        _open_patiently(link, args)
        shoe = link.shoe_id or k.get("shoe_id")
        if not shoe:
            raise ShoeError("the shoe did not say its id")
        api = TableAPI(
            link,
            secrets,
            unix_path=sock,
            tcp_port=args.api_tcp,
            tcp_host=args.api_host,
            tls=tls,
            note=note,
            clients=named,
        ).start()
        for url in api.urls():
            print(
                "gateway: table system API on %s (key %s, reader key %s)"
                % (url, key_files["table"], key_files["reader"]),
                flush=True,
            )
        if not args.broker:  # the store has every event: the link's queue is not needed
            drain = threading.Thread(target=_drain, args=(link, stop, failed), daemon=True)
            drain.start()
            print(
                "gateway: shoe %s on %s, no broker (store %s)" % (shoe, args.port, store.path),
                flush=True,
            )
            wait_for_signal(
                lambda: print("gateway: link %s" % ("up" if link.up() else "down"), flush=True),
                every=30.0,
                until=failed,
            )
            if failed.is_set():
                raise _failed(link.fatal)
            return 0
        state = Path(args.state) if args.state else store.path.with_suffix(".published.json")
        gw = Gateway(
            args.broker,
            args.name or "gw-%s" % shoe,
            cursor_path=state,
            fetch_config=True,
            timed=not args.plain_events,
            publish_rate=args.publish_rate,
        )
        gw.add(shoe, link, store)
        _ops(args, gw)  # ops: pruning, /metrics (host_tools/floor/prune.py, metrics.py)
        gw.start()
        print(
            "gateway: shoe %s on %s -> %s (store %s)" % (shoe, args.port, args.broker, store.path),
            flush=True,
        )
        wait_for_signal(
            lambda: print(
                "gateway: %d published, cursor %d, link %s"
                % (gw.published, gw.tables[shoe].cursor, "up" if link.up() else "down"),
                flush=True,
            ),
            every=30.0,
            until=gw.failed,
        )
        if gw.failed.is_set():
            raise _failed(gw.fatal)
    finally:
        stop.set()
        if api:
            api.stop()
        if gw and getattr(gw, "metrics_server", None):
            gw.metrics_server.stop()
        if gw:
            gw.stop()
        link.close()
        store.close()
    return 0


def _ops(args, gw):
    """--prune-after and --metrics: the pruner on the gateway, the metrics server started."""
    from host_tools.errors import ShoeError

    if args.prune_after is not None:
        from host_tools.floor.prune import Pruner

        if args.prune_after <= 0:
            raise ShoeError("--prune-after must be a positive number of hours")
        gw.pruner = Pruner(keep_s=args.prune_after * 3600.0, keep=args.prune_keep)
    gw.metrics_server = None
    if args.metrics:
        from host_tools.floor import metrics

        gw.metrics_server = metrics.serve(
            args.metrics, lambda: metrics.gateway_samples(gw), lambda: metrics.gateway_health(gw)
        )
    return gw.metrics_server
