"""shoectl floor-user: the floor view's users (argon2-hashed passwords in a 0600 file)."""

NAME = "floor-user"
HELP = "add, change or remove a floor view user (roles pit, surveillance, auditor, admin)"
DESCRIPTION = (
    "Manage the floor view's users file (--users FILE, created 0600): `add NAME --role ROLE`, "
    "`passwd NAME`, `role NAME --role ROLE`, `remove NAME`, `list`. The password is read from "
    "standard input when it is not a terminal (one line), else asked twice at a prompt; "
    "--generate makes one and prints it once. Only an argon2id hash is stored. A running "
    "`shoectl floor` picks the change up at the next request; removing a user or changing "
    "the role ends that user's sessions."
)


def configure(p):
    p.add_argument("action", choices=("add", "passwd", "role", "remove", "list"))
    p.add_argument("name", nargs="?", help="the user name")
    p.add_argument("--role", help="pit, surveillance, auditor or admin")
    p.add_argument("--users", required=True, metavar="FILE", help="the users file")
    p.add_argument(
        "--generate", action="store_true", help="generate the password and print it (once)"
    )


def _password(args):
    import getpass
    import sys

    from host_tools.errors import ShoeError
    from host_tools.floor.auth import generate_password

    if args.generate:
        pw = generate_password()
        print("password for %s: %s" % (args.name, pw))
        return pw
    if not sys.stdin.isatty():
        pw = sys.stdin.readline().rstrip("\r\n")
        if not pw:
            raise ShoeError("no password on standard input")
        return pw
    pw = getpass.getpass("password for %s: " % args.name)
    if getpass.getpass("again: ") != pw:
        raise ShoeError("the two passwords differ")
    return pw


def run(args):
    from host_tools.errors import ShoeError
    from host_tools.floor.auth import Users

    users = Users.load(args.users, create=args.action == "add")
    if args.action == "list":
        for name, u in sorted(users.users.items()):
            print("%-24s %s" % (name, u["role"]))
        return 0
    if not args.name:
        raise ShoeError("give the user NAME")
    if args.action in ("add", "role") and not args.role:
        raise ShoeError("give --role (pit, surveillance, auditor, admin)")
    if args.action == "add":
        users.add(args.name, args.role, _password(args))
    elif args.action == "passwd":
        if args.name not in users.users:
            raise ShoeError("no user %s" % args.name)
        users.set_password(args.name, _password(args))
    elif args.action == "role":
        users.set_role(args.name, args.role)
    else:
        users.remove(args.name)
    users.save()
    print("%s: %s %s" % (users.path, args.action, args.name))
    return 0
