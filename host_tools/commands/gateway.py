"""shoectl gateway: the table's gateway, one shoe's events from its audit store to MQTT."""
NAME = "gateway"
HELP = "hold the link to one shoe and publish its verified events to the floor's MQTT broker"
DESCRIPTION = (
    "Connect to the shoe (authenticated link, keys from --keys), store every event in the local "
    "audit store (--db) before acknowledging it, and publish every stored event to the broker "
    "(QoS 1, persistent session, topic floor/shoe/<id>/events, the signed payload unchanged) "
    "from that store: a broker outage or a gateway restart loses nothing, publishing resumes from "
    "the saved cursor (--state). A retained floor/shoe/<id>/state message carries the live table "
    "state. Broker: mqtt://HOST:PORT or mqtts://HOST:PORT (TLS; CA file in env SHOE_MQTT_CA); a "
    "user name in the URL takes its password from env SHOE_MQTT_PASSWORD. Runs until Ctrl-C.")


def configure(p):
    from host_tools.link import add_port_arguments
    add_port_arguments(p)
    p.add_argument("--broker", required=True, help="MQTT broker URL (mqtt://host:1883)")
    p.add_argument("--state", help="file keeping the published cursor (default: next to --db)")
    p.add_argument("--name", help="MQTT client id (default gw-<shoe id>)")
    # ---- ops (issue 20, item 5): metrics and store pruning (host_tools/floor/prune.py)
    p.add_argument("--metrics", metavar="HOST:PORT",
                   help="serve /healthz and Prometheus /metrics here (e.g. 127.0.0.1:9102)")
    p.add_argument("--prune-after", type=float, metavar="HOURS",
                   help="remove from the local store the events the broker acknowledged more "
                   "than HOURS ago (keeping the last --prune-keep); default: keep everything")
    p.add_argument("--prune-keep", type=int, default=1000, metavar="N",
                   help="with --prune-after: always keep the last N events (default 1000)")


def run(args):
    from pathlib import Path

    from host_tools.audit import AuditStore
    from host_tools.errors import ShoeError
    from host_tools.floor.gateway import Gateway
    from host_tools.floor.runner import wait_for_signal
    from host_tools import keys as keyfile
    from host_tools.link import ShoeLink

    k = keyfile.load(args)
    store = AuditStore(args.db)
    # the table key only: the gateway reads (status) and stores; it never needs the supervisor
    link = ShoeLink(args.port, k["shoe"], audit=store)
    gw = None
    try:
        link.open(timeout=args.timeout)
        shoe = link.shoe_id or k.get("shoe_id")
        if not shoe:
            raise ShoeError("the shoe did not say its id")
        state = Path(args.state) if args.state else store.path.with_suffix(".published.json")
        gw = Gateway(args.broker, args.name or "gw-%s" % shoe, cursor_path=state,
                     fetch_config=True)
        gw.add(shoe, link, store)
        _ops(args, gw)     # ops: pruning, /metrics (host_tools/floor/prune.py, metrics.py)
        gw.start()
        print("gateway: shoe %s on %s -> %s (store %s)" % (shoe, args.port, args.broker,
                                                         store.path), flush=True)
        wait_for_signal(lambda: print("gateway: %d published, cursor %d, link %s" % (
            gw.published, gw.tables[shoe].cursor, "up" if link.up() else "down"), flush=True),
            every=30.0)
    finally:
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
        gw.metrics_server = metrics.serve(args.metrics, lambda: metrics.gateway_samples(gw),
                                          lambda: metrics.gateway_health(gw))
    return gw.metrics_server
