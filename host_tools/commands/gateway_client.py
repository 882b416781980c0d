"""shoectl gateway-client: the named clients of a gateway's API (floor/apiclients.py)."""

NAME = "gateway-client"
HELP = "add, remove or list the named clients of a gateway's API, each its own key and roles"
DESCRIPTION = (
    "Manage a gateway's clients file (--clients FILE, created 0600; the gateway takes it as "
    "--api-clients): `add NAME --roles reader[,table,supervisor] --out KEYFILE` records the "
    "client with a fresh credential and writes its key file (0600, one line NAME:SECRET: give "
    "it to that client only, as ?key=KEYFILE in its gateway address); adding a name again "
    "replaces its credential. `remove NAME` revokes it: a running gateway ends its connections "
    "within a second and refuses its next login. `list` prints each name and its roles, never "
    "a secret."
)


def configure(p):
    p.add_argument("action", choices=("add", "remove", "list"))
    p.add_argument("name", nargs="?", help="the client's name (letters, digits, . _ -)")
    p.add_argument("--clients", required=True, metavar="FILE", help="the gateway's clients file")
    p.add_argument("--roles", help="comma-separated: reader, table, supervisor")
    p.add_argument("--out", metavar="KEYFILE", help="where `add` writes the client's key file")


def run(args):
    import os

    from host_tools.errors import ShoeError
    from host_tools.floor import apiclients

    if args.action == "list":
        for name, (_, roles) in sorted(apiclients.read(args.clients).items()):
            print("%-24s %s" % (name, ",".join(roles)))
        return 0
    if not args.name:
        raise ShoeError("give the client's NAME")
    if args.action == "add":
        if not args.roles or not args.out:
            raise ShoeError("add needs --roles and --out KEYFILE")
        if os.path.abspath(args.out) == os.path.abspath(args.clients):
            raise ShoeError("--out is the client's key file, not the clients file")
        roles = apiclients.add(args.clients, args.name, args.roles.split(","), args.out)
        print(
            "%s: added %s (%s); its key file: %s"
            % (args.clients, args.name, ",".join(roles), args.out)
        )
    else:
        apiclients.remove(args.clients, args.name)
        print("%s: removed %s" % (args.clients, args.name))
    return 0
