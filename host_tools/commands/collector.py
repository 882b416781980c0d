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
    "shoes and catch up. Runs until Ctrl-C.")


def configure(p):
    p.add_argument("--broker", help="MQTT broker URL (mqtt://host:1883, mqtts://)")
    p.add_argument("--db", required=True, help="PostgreSQL URL (postgresql://user@host/db)")
    p.add_argument("--keys", metavar="DIR", required=False,
                   help="directory of the shoes' provisioning files (or one file)")
    p.add_argument("--name", help="this collector's name and MQTT client id (default: host-pid)")
    p.add_argument("--migrate-only", action="store_true",
                   help="apply the migrations (as the database owner) and exit")
    p.add_argument("--no-migrate", action="store_true",
                   help="do not apply migrations (the login may not create tables or roles)")
    p.add_argument("--role", default="floor_collector",
                   help="SET ROLE to this after connecting (default floor_collector; '' for none)")


def run(args):
    import os
    import socket

    from host_tools.floor import keyring
    from host_tools.floor.collector import Collector
    from host_tools.floor.runner import wait_for_signal

    from host_tools.errors import ShoeError
    if not args.migrate_only and not (args.keys and args.broker):
        raise ShoeError("give --broker URL and --keys DIR (the shoes' provisioning files)")
    if args.migrate_only:
        from host_tools.floor import pg
        done = pg.migrate(args.db)
        print("migrations applied: %s" % (", ".join(map(str, done)) or "none (up to date)"))
        return 0
    ring = keyring.load(args.keys)
    name = args.name or "collector-%s-%d" % (socket.gethostname(), os.getpid())
    c = Collector(args.broker, args.db, ring, name, role=args.role or None,
                  migrate=not args.no_migrate).start()
    print("collector %s: %d shoe keys, %s -> PostgreSQL" % (name, len(ring), args.broker),
          flush=True)
    try:
        wait_for_signal(lambda: print("collector %s: %s, %d shoes held" % (
            name, c.counts, len(c.owned)), flush=True), every=30.0)
    finally:
        c.stop()
    return 0
