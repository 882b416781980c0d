"""Logins for the floor view: users (argon2 hashes in a 0600 file), roles, sessions, throttling.

    users = Users.load("floor-users.json")      # {"version": 1, "users": {name: {role, hash}}}
    users.add("ana", "pit", password); users.save()
    users.verify("ana", password) -> "pit" | None
    sessions = Sessions(idle=1800, absolute=12 * 3600)     # in memory (one process)
    sessions = PgSessions(db_url, idle=1800, absolute=12 * 3600)   # PostgreSQL: shared by every
                                 # view process, kept across restarts; only SHA-256(token) stored
    s = sessions.create("ana", "pit"); sessions.get(s.id) -> LoginSession | None (expired/unknown)
    throttle = Throttle(limit=5, window=300); throttle.wait(keys) -> seconds until allowed

Roles (ROLES) and what each may reach are an allowlist in view.py (ROUTES); docs/floor.md.
The file holds no password, only argon2id hashes (argon2-cffi, its recommended parameters), and
is written 0600 with an atomic rename.
"""

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from pathlib import Path

from host_tools.errors import ShoeError

ROLES = ("pit", "surveillance", "auditor", "admin")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
MIN_PASSWORD = 10


def _hasher():
    from argon2 import PasswordHasher

    return PasswordHasher()


def check_name(name):
    if not isinstance(name, str) or not _NAME.match(name):
        raise ShoeError(
            "user name must be 1-64 of A-Z a-z 0-9 . _ @ - (starting with a letter "
            "or digit): %r" % (name,)
        )
    return name


def check_role(role):
    if role not in ROLES:
        raise ShoeError("role must be one of %s: %r" % (", ".join(ROLES), role))
    return role


class Users:
    def __init__(self, path=None, users=None):
        self.path = Path(path) if path else None
        self.users = dict(users or {})
        self._dummy = None

    @classmethod
    def load(cls, path, create=False):
        p = Path(path)
        if not p.exists():
            if create:
                return cls(p)
            raise ShoeError(
                "no users file %s (create one: shoectl floor-user add NAME --role "
                "ROLE --users %s)" % (p, p)
            )
        try:
            doc = json.loads(p.read_text())
            users = doc["users"]
            for name, u in users.items():
                check_name(name)
                check_role(u["role"])
                if not str(u["hash"]).startswith("$argon2"):
                    raise ShoeError("user %s: not an argon2 hash" % name)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ShoeError("users file %s is not a floor users file: %s" % (p, e)) from e
        if os.name == "posix" and p.stat().st_mode & 0o077:
            raise ShoeError("users file %s is readable by others (chmod 600 %s)" % (p, p))
        return cls(p, users)

    def save(self, path=None):
        p = Path(path or self.path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"version": 1, "users": self.users}, f, indent=1, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, p)
        self.path = p
        return p

    def add(self, name, role, password, replace=False):
        check_name(name)
        check_role(role)
        if name in self.users and not replace:
            raise ShoeError("user %s exists (use `passwd` or `remove`)" % name)
        if not isinstance(password, str) or len(password) < MIN_PASSWORD:
            raise ShoeError("password must have at least %d characters" % MIN_PASSWORD)
        self.users[name] = {
            "role": role,
            "hash": _hasher().hash(password),
            "created": int(time.time()),
        }

    def set_password(self, name, password):
        if name not in self.users:
            raise ShoeError("no user %s" % name)
        self.add(name, self.users[name]["role"], password, replace=True)

    def set_role(self, name, role):
        if name not in self.users:
            raise ShoeError("no user %s" % name)
        self.users[name]["role"] = check_role(role)

    def remove(self, name):
        if self.users.pop(name, None) is None:
            raise ShoeError("no user %s" % name)

    def verify(self, name, password):
        """The user's role if the password is right, else None (same work for unknown names)."""
        from argon2.exceptions import InvalidHashError, VerificationError

        u = self.users.get(name) if isinstance(name, str) else None
        h = u["hash"] if u else self._dummy_hash()
        try:
            ok = _hasher().verify(h, password if isinstance(password, str) else "")
        except (VerificationError, InvalidHashError):
            ok = False
        return u["role"] if (ok and u) else None

    def _dummy_hash(self):
        if self._dummy is None:
            self._dummy = _hasher().hash(secrets.token_hex(16))
        return self._dummy


def generate_password():
    return secrets.token_urlsafe(15)


def run_admin(path):
    """A users file at `path` with one admin whose password is made for this run (the demo
    floor, the test harness, the process bench) -> (Users, ("admin", password))."""
    users = Users(path)
    login = ("admin", generate_password())
    users.add(login[0], "admin", login[1], replace=True)
    users.save()
    return users, login


class LoginSession:
    __slots__ = ("id", "csrf", "user", "role", "created", "last", "via", "checked")

    def __init__(self, user, role, via="password", token=None):
        self.id = token or secrets.token_urlsafe(32)
        # bound to the token (one-way): nothing to store, the same in every view process
        self.csrf = hmac.new(self.id.encode(), b"floor-csrf", hashlib.sha256).hexdigest()
        self.user = user
        self.role = role
        self.via = via
        self.created = self.last = time.monotonic()
        self.checked = None

    def csrf_ok(self, token):
        return isinstance(token, str) and hmac.compare_digest(token.encode(), self.csrf.encode())


class Sessions:
    """In memory: a restart of the view logs everyone out."""

    def __init__(self, idle=1800.0, absolute=12 * 3600.0, clock=time.monotonic):
        self.idle = idle
        self.absolute = absolute
        self.clock = clock
        self._s = {}
        self._lock = threading.Lock()

    def create(self, user, role, via="password"):
        s = LoginSession(user, role, via)
        s.created = s.last = self.clock()
        with self._lock:
            self._prune()
            self._s[s.id] = s
        return s

    def alive(self, s):
        now = self.clock()
        return now - s.last <= self.idle and now - s.created <= self.absolute

    def get(self, sid, touch=True):
        if not isinstance(sid, str):
            return None
        with self._lock:
            s = self._s.get(sid)
            if s is None:
                return None
            if not self.alive(s):
                del self._s[sid]
                return None
            if touch:
                s.last = self.clock()
            return s

    def valid(self, s):
        """Still logged in (not logged out, not expired): the event stream asks this."""
        with self._lock:
            return self._s.get(s.id) is s and self.alive(s)

    def drop(self, sid):
        with self._lock:
            self._s.pop(sid, None)

    def retain(self, keep):
        with self._lock:
            for k in [k for k, s in self._s.items() if not keep(s)]:
                del self._s[k]

    def _prune(self):
        for k in [k for k, s in self._s.items() if not self.alive(s)]:
            del self._s[k]

    def __len__(self):
        return len(self._s)


def token_hash(token):
    return hashlib.sha256(token.encode()).digest()


class PgSessions:
    """Sessions in PostgreSQL (table view_sessions, migrations/005_view_state.sql), as the
    `floor_view` role: every view process sees the same ones and a restart keeps them. Only
    SHA-256 of a token is stored, so a database reader cannot log in with a row. Times are
    `clock()` seconds (wall clock: shared between processes). The last use is written at most
    every `touch_every` seconds of a session; valid() (the event stream, every tick) asks the
    database at most every `recheck` seconds."""

    def __init__(
        self,
        db_url,
        idle=1800.0,
        absolute=12 * 3600.0,
        clock=time.time,
        role="floor_view",
        touch_every=5.0,
        recheck=2.0,
    ):
        self.db_url = db_url
        self.idle = idle
        self.absolute = absolute
        self.clock = clock
        self.role = role
        self.touch_every = touch_every
        self.recheck = recheck
        self._conn = None  # one connection for every request thread (tiny queries):
        self._lock = threading.Lock()  # not one more connection per request

    def _sql(self, sql, args=()):
        from host_tools.floor import pg

        with self._lock:
            for attempt in (0, 1):
                c = self._conn
                try:
                    if c is None or c.closed:
                        c = self._conn = pg.connect(self.db_url)
                        if self.role:
                            pg.set_role(c, self.role)
                    cur = c.execute(sql, args)
                    return cur.fetchall() if cur.description else cur.rowcount
                except Exception:
                    if c is not None and not c.closed and not c.broken:
                        raise  # the statement failed; the connection is fine
                    self._conn = None
                    if attempt:
                        raise

    def close(self):
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def alive(self, s):
        now = self.clock()
        return now - s.last <= self.idle and now - s.created <= self.absolute

    def acknowledge(self, alert_id, user, role, addr):
        """Record an acknowledgement of an alert (alert_acks: insert-only, as the same role
        and on the same connection as the sessions; the view's `acknowledge` answers it)."""
        self._sql(
            "INSERT INTO alert_acks (alert, user_name, role, addr) VALUES (%s, %s, %s, %s)",
            (alert_id, user, role, addr),
        )

    def create(self, user, role, via="password"):
        s = LoginSession(user, role, via)
        s.created = s.last = self.clock()
        self._sql(
            "INSERT INTO view_sessions (token_hash, user_name, role, via, created_at, "
            "last_at) VALUES (%s, %s, %s, %s, to_timestamp(%s), to_timestamp(%s))",
            (token_hash(s.id), user, role, via, s.created, s.last),
        )
        if s.created - getattr(self, "_pruned", 0.0) > 60.0:  # expired ones, now and then
            self._pruned = s.created
            self._sql(
                "DELETE FROM view_sessions WHERE last_at < to_timestamp(%s) OR "
                "created_at < to_timestamp(%s)",
                (s.created - self.idle, s.created - self.absolute),
            )
        return s

    def get(self, sid, touch=True):
        if not isinstance(sid, str) or not sid or len(sid) > 200:
            return None
        h = token_hash(sid)
        rows = self._sql(
            "SELECT user_name, role, via, extract(epoch FROM created_at)::float8, "
            "extract(epoch FROM last_at)::float8 FROM view_sessions WHERE "
            "token_hash = %s",
            (h,),
        )
        if not rows:
            return None
        s = LoginSession(rows[0][0], rows[0][1], rows[0][2], token=sid)
        s.created, s.last = rows[0][3], rows[0][4]
        if not self.alive(s):
            self._sql("DELETE FROM view_sessions WHERE token_hash = %s", (h,))
            return None
        now = self.clock()
        if touch and now - s.last >= min(self.touch_every, self.idle / 4.0):
            self._sql(
                "UPDATE view_sessions SET last_at = to_timestamp(%s) WHERE token_hash = %s"
                " AND last_at < to_timestamp(%s)",
                (now, h, now),
            )
            s.last = now
        s.checked = time.monotonic()
        return s

    def valid(self, s):
        """Still logged in (not logged out, not expired, in any view process)."""
        mono = time.monotonic()  # how long ago the database was asked (not the clock)
        if s.checked is not None and mono - s.checked < self.recheck and self.alive(s):
            return True
        fresh = self.get(s.id, touch=False)
        if fresh is None or fresh.user != s.user or fresh.role != s.role:
            return False
        s.last, s.checked = fresh.last, mono
        return True

    def drop(self, sid):
        if isinstance(sid, str):
            self._sql("DELETE FROM view_sessions WHERE token_hash = %s", (token_hash(sid),))

    def retain(self, keep):
        rows = self._sql("SELECT token_hash, user_name, role, via FROM view_sessions")
        for h, user, role, via in rows:
            s = LoginSession(user, role, via, token="-")
            if not keep(s):
                self._sql("DELETE FROM view_sessions WHERE token_hash = %s", (h,))

    def __len__(self):
        return self._sql("SELECT count(*) FROM view_sessions")[0][0]


class Throttle:
    """At most `limit` failed logins per key (user name, client address) in `window` seconds."""

    def __init__(self, limit=5, window=300.0, clock=time.monotonic):
        self.limit = limit
        self.window = window
        self.clock = clock
        self._fails = {}
        self._lock = threading.Lock()

    def wait(self, keys):
        """Seconds until a login may be tried for all of `keys` (0: now)."""
        now = self.clock()
        worst = 0.0
        with self._lock:
            for k in keys:
                f = [t for t in self._fails.get(k, ()) if now - t < self.window]
                if f:
                    self._fails[k] = f
                else:
                    self._fails.pop(k, None)
                if len(f) >= self.limit:
                    worst = max(worst, f[-self.limit] + self.window - now)
        return worst

    def fail(self, keys):
        now = self.clock()
        with self._lock:
            if len(self._fails) > 100000:  # a flood of names: forget the oldest half
                for k in list(self._fails)[:50000]:
                    del self._fails[k]
            for k in keys:
                self._fails.setdefault(k, []).append(now)
