"""shoectl floor: the live floor view in the browser (or a whole demo floor with --demo N)."""

NAME = "floor"
HELP = "serve the live floor view (every table, drill-down, alerts); --demo N runs a whole floor"
DESCRIPTION = (
    "Serve the floor page from PostgreSQL as the read-only role: every table live (phase, round, "
    "results as they settle, open irregularities and alerts, link health, age of the last "
    "event) pushed by server-sent events, a drill-down per table with its recent rounds, and the "
    "alerts page. Every page needs a login: users with argon2-hashed passwords in --users FILE "
    "(shoectl floor-user), or an upstream identity provider's header (--trust-header, only when "
    "given); roles pit, surveillance, auditor, admin (docs/floor.md). --cert/--key serve HTTPS. "
    "No key ever reaches a page. With --demo N (no --db needed) it starts an embedded MQTT "
    "broker (aedes on the pinned Node, with per-gateway and per-collector logins and the topic "
    "ACL; --broker-engine amqtt for the Python one) and PostgreSQL 16 (pgserver), N simulated "
    "shoes with their gateways and a collector, and serves their floor with a generated "
    "one-time admin login it prints."
)


def configure(p):
    p.add_argument("--db", help="PostgreSQL URL (postgresql://reader@host/db)")
    p.add_argument(
        "--http",
        default="127.0.0.1:8080",
        help="HOST:PORT to serve on (default 127.0.0.1:8080; port 0 picks a free one)",
    )
    p.add_argument(
        "--role",
        default="floor_reader",
        help="SET ROLE to this after connecting (default floor_reader; '' for none); "
        "the sessions and acknowledgements are written as floor_view (unless '')",
    )
    p.add_argument(
        "--metrics",
        metavar="HOST:PORT",
        help="serve /healthz and Prometheus /metrics here (e.g. 127.0.0.1:9103; "
        "no login: bind it where only the monitoring reaches)",
    )
    p.add_argument(
        "--users",
        metavar="FILE",
        help="the users file (shoectl floor-user add NAME --role ROLE --users FILE)",
    )
    p.add_argument(
        "--trust-header",
        metavar="HEADER",
        help="take the user from this header set by an authenticating reverse proxy "
        "(e.g. X-Remote-User); only behind a proxy that strips it from clients",
    )
    p.add_argument(
        "--trust-groups-header",
        metavar="HEADER",
        default="X-Remote-Groups",
        help="with --trust-header: the comma-separated groups header (default X-Remote-Groups)",
    )
    p.add_argument(
        "--role-map",
        metavar="GROUP=ROLE",
        action="append",
        default=[],
        help="with --trust-header: a group and the role it gives (repeat)",
    )
    p.add_argument("--cert", help="TLS certificate chain (PEM): serve HTTPS")
    p.add_argument("--key", help="TLS private key (PEM)")
    p.add_argument(
        "--idle",
        type=float,
        default=1800.0,
        help="log out after this many seconds without a request (1800)",
    )
    p.add_argument(
        "--max-age",
        type=float,
        default=43200.0,
        help="log out this many seconds after the login, whatever happens (43200)",
    )
    p.add_argument(
        "--access-log",
        metavar="FILE",
        help="append logins, failures, refusals and acknowledgements (JSON lines)",
    )
    p.add_argument("--demo", type=int, metavar="N", help="run a demo floor of N simulated tables")
    p.add_argument("--rate", type=float, default=0.5, help="demo: events/s per table (0.5)")
    p.add_argument("--dir", help="demo: working directory (default: a temporary one)")
    p.add_argument(
        "--broker-engine",
        choices=("aedes", "amqtt"),
        help="demo: the embedded MQTT broker (default aedes; amqtt if node is missing)",
    )
    p.add_argument("--open", action="store_true", help="open the page in the browser")
    p.add_argument("--seconds", type=float, help="stop after this many seconds")


def _view_options(args):
    from host_tools.errors import ShoeError

    role_map = {}
    for item in args.role_map:
        group, sep, role = item.partition("=")
        if not sep or not group or not role:
            raise ShoeError("--role-map takes GROUP=ROLE: %r" % item)
        role_map[group] = role
    if role_map and not args.trust_header:
        raise ShoeError("--role-map needs --trust-header")
    if args.trust_header and not role_map:
        raise ShoeError("--trust-header needs at least one --role-map GROUP=ROLE")
    return {
        "trust_header": args.trust_header,
        "trust_groups_header": args.trust_groups_header,
        "role_map": role_map,
        "cert": args.cert,
        "key": args.key,
        "idle": args.idle,
        "absolute": args.max_age,
        "access_log": args.access_log,
    }


def run(args):
    import tempfile
    import threading
    import webbrowser

    from host_tools.errors import ShoeError
    from host_tools.floor.auth import Users
    from host_tools.floor.runner import http_address, wait_for_signal

    host, port = http_address(args.http)
    if args.metrics:
        from host_tools.floor import metrics

        metrics.address(args.metrics)  # a bad address: refused before anything starts
    opts = _view_options(args)
    users = Users.load(args.users) if args.users else None
    floor = view = None
    if args.demo:
        from host_tools.sim.floor.harness import Floor

        floor = Floor(
            args.dir or tempfile.mkdtemp(prefix="shoe-floor-"),
            tables=args.demo,
            rate=args.rate,
            db_url=args.db,
            http_host=host,
            http_port=port,
            users=users,
            view_options=opts,
            broker_acl=True,
            broker_engine=args.broker_engine,
        ).start()
        floor.driver.start()
        view = floor.view
        print(
            "floor demo: %d simulated tables, broker %s (%s; users and ACL in %s), database %s"
            % (args.demo, floor.broker_url, floor.broker_name, floor.dir / "broker", floor.db_url),
            flush=True,
        )
        if floor.login:
            print(
                "floor demo login (DEMO ONLY, a new password each run): "
                "user %s password %s" % floor.login,
                flush=True,
            )
    else:
        if not args.db:
            raise ShoeError("give --db postgresql://... (or --demo N)")
        if users is None and not args.trust_header:
            raise ShoeError(
                "the floor needs logins: give --users FILE (shoectl floor-user add "
                "NAME --role ROLE --users FILE) or --trust-header HEADER"
            )
        from host_tools.floor.view import FloorView

        try:
            view = FloorView(
                args.db, host=host, port=port, role=args.role or None, users=users, **opts
            ).start()
        except OSError as e:
            raise ShoeError("cannot serve on %s: %s" % (args.http, e.strerror)) from None
    print("floor view: %s" % view.url, flush=True)
    msrv = None
    if args.metrics:
        from host_tools.floor import metrics

        msrv = metrics.serve(
            args.metrics, lambda: metrics.view_samples(view), lambda: metrics.view_health(view)
        )
        print("floor view metrics: %s/metrics" % msrv.url, flush=True)
    if args.open:
        webbrowser.open(view.url)
    try:
        if args.seconds:
            threading.Event().wait(args.seconds)
        else:
            wait_for_signal()
    except KeyboardInterrupt:
        pass
    finally:
        if msrv:
            msrv.stop()
        if floor:
            floor.stop()
        else:
            view.stop()
    return 0
