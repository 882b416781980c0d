"""Named clients of a gateway's API: each its own credential and roles, revocable one by one.

The gateway's two built-in credentials (the table key and the reader key, apiwire.CREDENTIALS)
are shared by every client that holds the file. A casino gives each table system, pit terminal
and monitor its own instead: `shoectl gateway-client add NAME --roles reader --clients FILE
--out NAME.key` records it in the gateway's clients file and writes the client's key file; the
gateway (`--api-clients FILE`) lets that client take only those roles, names it in its log, and
`shoectl gateway-client remove NAME` ends its open connections within a second and refuses its
next login. The clients file (JSON, mode 0600, written atomically):

    {"version": 1, "clients": {"pit-3": {"roles": ["reader"], "secret": "<64 hex digits>"}}}

A client's key file is one line `NAME:SECRET` (apiwire.load_credential); the client names itself
in its login and the gateway checks that credential alone. The gateway keeps the secrets (the
login is an HMAC challenge-response, apiwire): the file is as sensitive as the gateway's own key
files. A clients file that cannot be read, is open to others or does not parse grants nothing
(fail closed: every named client is refused and dropped, and the gateway says why once); the
built-in credentials are not affected.
"""

import json
import os

from host_tools.errors import ShoeError
from host_tools.link import apiwire

VERSION = 1
NAME = apiwire.CLIENT_NAME
RESERVED = tuple(apiwire.CREDENTIALS)  # the built-in credentials' names


def check_name(name):
    if not isinstance(name, str) or not NAME.match(name) or name in RESERVED:
        raise ShoeError(
            "a client name is 1-64 letters, digits, '.', '_' or '-' and not %s: %r"
            % (" or ".join(RESERVED), name)
        )
    return name


def check_roles(roles):
    roles = tuple(roles)
    bad = [r for r in roles if r not in apiwire.ROLES]
    if not roles or bad:
        raise ShoeError(
            "roles are among %s: %r" % (", ".join(apiwire.ROLES), ",".join(map(str, roles)))
        )
    return tuple(sorted(set(roles), key=apiwire.ROLES.index))


def read(path):
    """-> {name: (secret bytes, roles)}; ShoeError if the file is missing, open to others or
    not a clients file."""
    raw = apiwire.read_private(path, "the API clients file")
    try:
        doc = json.loads(raw)
        if doc.get("version") != VERSION or not isinstance(doc.get("clients"), dict):
            raise ValueError("not version %d with a map of clients" % VERSION)
        out = {}
        for name, c in doc["clients"].items():
            check_name(name)
            secret = c["secret"]
            if not isinstance(secret, str) or len(secret) < 32:
                raise ValueError("the secret of %s is shorter than 32 characters" % name)
            out[name] = (secret.encode("ascii"), check_roles(c["roles"]))
        return out
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeError, ShoeError) as e:
        raise ShoeError("the API clients file %s is not valid: %s" % (path, e)) from None


def _write_0600(path, data):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write(path, clients):
    doc = {
        "version": VERSION,
        "clients": {
            n: {"roles": list(roles), "secret": secret.decode("ascii")}
            for n, (secret, roles) in sorted(clients.items())
        },
    }
    _write_0600(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())


def add(path, name, roles, key_out):
    """Record client `name` with `roles` (a fresh secret: adding a name again replaces its
    credential, which ends its connections) and write its key file `key_out` (0600)."""
    check_name(name)
    roles = check_roles(roles)
    clients = read(path) if os.path.exists(path) else {}
    secret = os.urandom(32).hex().encode("ascii")
    _write_0600(key_out, b"%s:%s\n" % (name.encode("ascii"), secret))
    clients[name] = (secret, roles)
    write(path, clients)
    return roles


def remove(path, name):
    clients = read(path)
    if name not in clients:
        raise ShoeError("no client %s in %s" % (name, path))
    del clients[name]
    write(path, clients)


class ClientsFile:
    """The clients file as a running gateway sees it: read again whenever it changed (its
    size, time or inode), which `current()` looks at on each login and the API's watcher
    every quarter second. An unreadable or invalid file grants nothing and is said once."""

    def __init__(self, path, note=None):
        self.path = str(path)
        self.note = note or (lambda text: None)
        self._sig = None
        self._clients = {}
        self.error = None
        self.current()
        if self.error:
            raise ShoeError(self.error)

    def _signature(self):
        try:
            st = os.stat(self.path)
        except OSError as e:
            return ("missing", e.errno)
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)

    def current(self):
        """-> {name: (secret, roles)} as the file says now ({} while it is not valid)."""
        sig = self._signature()
        if sig != self._sig:
            self._sig = sig
            try:
                self._clients = read(self.path)
                if self.error:
                    self.note("API clients file %s is valid again" % self.path)
                self.error = None
            except ShoeError as e:
                self._clients = {}
                if str(e) != self.error:
                    self.note("%s: every named client is refused until it is fixed" % e)
                self.error = str(e)
        return self._clients
