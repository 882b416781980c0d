"""shoectl floor-broker-config: MQTT users and topic ACLs for Mosquitto and the embedded broker."""

NAME = "floor-broker-config"
HELP = "write the broker's password file, ACL and mosquitto.conf (a user per gateway/collector)"
DESCRIPTION = (
    "From the shoes' keys (--keys: the provisioning files the collectors use) and the floor's "
    "gateways and collectors, write into --out: `passwd` (Mosquitto's PBKDF2-SHA512 hashes), "
    "`acl` (deny by default: gateway gw-X may publish only floor/shoe/X/events and /state and "
    "read floor/shoe/X/replay; collectors may read floor/shoe/+/events and /state and publish "
    "floor/shoe/+/replay), `mosquitto.conf` (no anonymous clients; --tls-* for a TLS listener, "
    "--require-certificate for client certificates whose CN is the user name), and "
    "`credentials/<user>.password` (0600; ship each host its own). Existing passwords are kept "
    "unless --rotate. The embedded broker enforces the same two files "
    "(python -m host_tools.sim.floor.amqttbroker PORT passwd acl)."
)


def configure(p):
    p.add_argument(
        "--keys",
        required=True,
        metavar="DIR",
        help="the shoes' provisioning files (the collectors' --keys)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="where to write the files")
    p.add_argument(
        "--collectors",
        default="collector-1",
        help="comma-separated collector names (their --name; default collector-1)",
    )
    p.add_argument(
        "--gateway",
        action="append",
        default=[],
        metavar="NAME=SHOE[,SHOE...]",
        help="a gateway serving these shoes (repeat); default: gw-<shoe> per shoe",
    )
    p.add_argument("--port", type=int, default=1883, help="listener port (1883; 8883 for TLS)")
    p.add_argument("--bind", default="0.0.0.0", help="listener address (0.0.0.0)")
    p.add_argument("--tls-ca", help="CA file (clients' certificates are checked against it)")
    p.add_argument("--tls-cert", help="the broker's certificate (PEM)")
    p.add_argument("--tls-key", help="the broker's private key (PEM)")
    p.add_argument(
        "--require-certificate",
        action="store_true",
        help="with --tls-*: clients must present a certificate; its CN is the user",
    )
    p.add_argument(
        "--data",
        default="/var/lib/mosquitto",
        help="Mosquitto's persistence directory (/var/lib/mosquitto)",
    )
    p.add_argument("--rotate", action="store_true", help="new passwords for every user")
    p.add_argument("--prefix", default="floor", help="topic prefix (floor)")


def run(args):
    from host_tools.errors import ShoeError
    from host_tools.floor import brokerauth, keyring

    ring = keyring.load(args.keys)
    gateways = None
    if args.gateway:
        gateways = {}
        for g in args.gateway:
            name, sep, shoes = g.partition("=")
            if not sep or not name or not shoes:
                raise ShoeError("--gateway takes NAME=SHOE[,SHOE...]: %r" % g)
            gateways[name] = [s for s in shoes.split(",") if s]
    collectors = [c for c in args.collectors.split(",") if c]
    plan = brokerauth.Plan.build(ring.shoes(), collectors, gateways, prefix=args.prefix)
    tls = None
    parts = (args.tls_ca, args.tls_cert, args.tls_key)
    if any(parts):
        if not all(parts):
            raise ShoeError("TLS needs --tls-ca, --tls-cert and --tls-key")
        tls = {
            "ca": args.tls_ca,
            "cert": args.tls_cert,
            "key": args.tls_key,
            "require_certificate": args.require_certificate,
        }
    elif args.require_certificate:
        raise ShoeError("--require-certificate needs --tls-ca, --tls-cert and --tls-key")
    files = brokerauth.write(
        args.out, plan, port=args.port, bind=args.bind, tls=tls, rotate=args.rotate, data=args.data
    )
    print("%d gateways, %d collectors" % (len(plan.gateways), len(plan.collectors)))
    for k in ("conf", "passwd", "acl", "credentials"):
        print("%-12s %s" % (k, files[k]))
    return 0
