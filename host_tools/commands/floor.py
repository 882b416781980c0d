"""shoectl floor: the live floor view in the browser (or a whole demo floor with --demo N)."""
NAME = "floor"
HELP = "serve the live floor view (every table, drill-down, alerts); --demo N runs a whole floor"
DESCRIPTION = (
    "Serve the floor page from PostgreSQL as the read-only role: every table live (phase, round, "
    "results as they settle, open irregularities and alerts, link health, age of the last "
    "event) pushed by server-sent events, a drill-down per table with its recent rounds, and the "
    "alerts page. No key ever reaches a page. With --demo N (no --db needed) it starts an "
    "embedded MQTT broker (amqtt) and PostgreSQL 16 (pgserver), N simulated shoes with their "
    "gateways and a collector, and serves their floor.")


def configure(p):
    p.add_argument("--db", help="PostgreSQL URL (postgresql://reader@host/db)")
    p.add_argument("--http", default="127.0.0.1:8080", help="HOST:PORT to serve on "
                   "(default 127.0.0.1:8080; port 0 picks a free one)")
    p.add_argument("--role", default="floor_reader",
                   help="SET ROLE to this after connecting (default floor_reader; '' for none)")
    p.add_argument("--demo", type=int, metavar="N", help="run a demo floor of N simulated tables")
    p.add_argument("--rate", type=float, default=0.5, help="demo: events/s per table (0.5)")
    p.add_argument("--dir", help="demo: working directory (default: a temporary one)")
    p.add_argument("--open", action="store_true", help="open the page in the browser")
    p.add_argument("--seconds", type=float, help="stop after this many seconds")


def run(args):
    import tempfile
    import threading
    import webbrowser

    from host_tools.errors import ShoeError
    from host_tools.floor.runner import http_address, wait_for_signal

    host, port = http_address(args.http)
    floor = view = None
    if args.demo:
        from host_tools.floor.harness import Floor
        floor = Floor(args.dir or tempfile.mkdtemp(prefix="shoe-floor-"), tables=args.demo,
                      rate=args.rate, db_url=args.db, http_host=host, http_port=port).start()
        floor.driver.start()
        view = floor.view
        print("floor demo: %d simulated tables, broker %s, database %s" % (
            args.demo, floor.broker_url, floor.db_url), flush=True)
    else:
        if not args.db:
            raise ShoeError("give --db postgresql://... (or --demo N)")
        from host_tools.floor.view import FloorView
        try:
            view = FloorView(args.db, host=host, port=port, role=args.role or None).start()
        except OSError as e:
            raise ShoeError("cannot serve on %s: %s" % (args.http, e.strerror))
    print("floor view: %s" % view.url, flush=True)
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
        if floor:
            floor.stop()
        else:
            view.stop()
    return 0
