"""shoectl collector: the floor's events from MQTT into PostgreSQL, verified again."""

NAME = "collector"
HELP = "verify every shoe event again and store it once in PostgreSQL (several may run)"
DESCRIPTION = (
    "Subscribe to every shoe's events on the broker, verify each event's MAC with the shoe's key "
    "(--keys: a directory of provisioning files, one per shoe) and each shoe's hash chain against "
    "the database, store each event once keyed by (shoe, event number), re-evaluate every round "
    "result with the engine, and record gaps, chain breaks, forgeries and disagreements as "
    "alerts. Applies the versioned migrations first. Several collectors share a floor: each "
    "takes a fair share of the shoes (advisory-lock leases); when one dies the others take its "
    "shoes and catch up. Runs until Ctrl-C."
)


def configure(p):
    p.add_argument("--broker", help="MQTT broker URL (mqtt://host:1883, mqtts://)")
    p.add_argument("--db", help="PostgreSQL URL (postgresql://user@host/db)")
    p.add_argument(
        "--keys",
        metavar="DIR",
        required=False,
        help="directory of the shoes' provisioning files (or one file)",
    )
    p.add_argument(
        "--name",
        help="this collector's name and MQTT client id, the same at every "
        "restart so the broker's persistent session is taken up again (default: "
        "collector-<host name>; give each collector on one host its own)",
    )
    p.add_argument(
        "--forget-session",
        metavar="CLIENT_ID",
        action="append",
        help="end the persistent session a retired or renamed collector left on the "
        "broker, and exit (repeatable)",
    )
    p.add_argument(
        "--per-lease",
        action="store_true",
        help="subscribe to the events of this collector's leased shoes only (not to "
        "every shoe's events, dropping the others'); the state messages of all",
    )
    p.add_argument(
        "--replay-alert",
        type=int,
        default=1000,
        metavar="N",
        help="alert when one table's events arrive again N times within a minute "
        "(default 1000; each one is counted anyway)",
    )
    p.add_argument(
        "--migrate-only",
        action="store_true",
        help="apply the migrations (as the database owner) and exit",
    )
    p.add_argument(
        "--no-migrate",
        action="store_true",
        help="do not apply migrations (the login may not create tables or roles)",
    )
    p.add_argument(
        "--role",
        default="floor_collector",
        help="SET ROLE to this after connecting (default floor_collector; '' for none)",
    )
    p.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve /healthz and Prometheus /metrics here (e.g. 127.0.0.1:9101)",
    )
    p.add_argument(
        "--syslog",
        metavar="HOST:PORT|PATH",
        help="forward every alert to syslog (UDP HOST:PORT, or a socket like /dev/log)",
    )
    p.add_argument(
        "--webhook",
        metavar="URL",
        help="forward alerts as JSON POSTs to this URL (retried, bounded queue; "
        "never delays a commit)",
    )
    p.add_argument(
        "--skew-alert",
        type=float,
        default=5.0,
        metavar="S",
        help="alert when a gateway's clock is more than S seconds off this one's "
        "(default 5; 0: never)",
    )
    p.add_argument(
        "--partitions-ahead",
        type=int,
        default=3,
        metavar="DAYS",
        help="create the daily event partitions this many days ahead (default 3)",
    )


def run(args):
    import logging

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )  # the daemon's log on stderr (floor/errlog.py)
    from host_tools.errors import ShoeError
    from host_tools.floor import keyring
    from host_tools.floor.collector import Collector
    from host_tools.floor.runner import wait_for_signal

    if args.forget_session:
        from host_tools.floor import mqtt

        if not args.broker:
            raise ShoeError("give --broker URL")
        for cid in args.forget_session:
            had = mqtt.forget_session(args.broker, cid)
            print("session %s: %s" % (cid, "ended" if had else "none on the broker"))
        return 0
    if not args.db:
        raise ShoeError("give --db postgresql://...")
    if not args.migrate_only and not (args.keys and args.broker):
        raise ShoeError("give --broker URL and --keys DIR (the shoes' provisioning files)")
    if args.migrate_only:
        from host_tools.floor import pg

        done = pg.migrate(args.db)
        print("migrations applied: %s" % (", ".join(map(str, done)) or "none (up to date)"))
        return 0
    ring = keyring.load(args.keys)
    fw = srv = None
    if args.syslog or args.webhook:
        from host_tools.floor.forward import Forwarder

        fw = Forwarder(syslog=args.syslog, webhook=args.webhook)
    if args.metrics:
        from host_tools.floor import metrics

        metrics.address(args.metrics)  # a bad address: refused before anything starts
    if not 1 <= args.partitions_ahead <= 60:
        raise ShoeError("--partitions-ahead must be 1..60 days")
    c = Collector(
        args.broker,
        args.db,
        ring,
        args.name,
        role=args.role or None,
        migrate=not args.no_migrate,
        replay_alert=args.replay_alert,
        per_lease=args.per_lease,
        forward=fw,
        skew_alert=args.skew_alert,
        partitions_ahead=args.partitions_ahead,
    ).start()
    name = c.name
    try:
        if args.metrics:
            srv = metrics.serve(
                args.metrics,
                lambda: metrics.collector_samples(c),
                lambda: metrics.collector_health(c),
            )
        print(
            "collector %s: %d shoe keys, %s -> PostgreSQL%s"
            % (name, len(ring), args.broker, ", metrics %s/metrics" % srv.url if srv else ""),
            flush=True,
        )
        wait_for_signal(
            lambda: print(
                "collector %s: %s, %d shoes held" % (name, c.counts, len(c.owned)), flush=True
            ),
            every=30.0,
        )
    finally:
        if srv:
            srv.stop()
        c.stop()
        if fw:
            fw.close()
    return 0
