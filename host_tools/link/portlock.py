"""One host process per shoe port: an advisory lock keyed by the port, naming its holder.

    lock = PortLock(url)            # socket://127.0.0.1:7001, /dev/ttyACM0, rfc2217://...
    lock.acquire(via="gateway+unix:///var/lib/shoe/T01.api.sock")   # ShoeError if held
    ...; lock.release()

The shoe's UART has one peer: a second host process that opened it would take the link over
(the shoe starts a new session with whoever speaks last) and the first one's link would stay
down. ShoeLink therefore takes this lock before it opens the port, and holds it until close():
an exclusive flock() on `<lock dir>/<sha256 of the port's key>.lock` (the kernel drops it when
the process dies, however it dies). The file names the holder (PID, command, and the gateway's
API address when the holder is `shoectl gateway`), so the refused process can say whom to go
through. A device is opened besides with pyserial's `exclusive=True` (ShoeLink). Lock dir:
env SHOE_LOCK_DIR, default `<tmp>/shoectl-locks-<uid>` (mode 0700).

The key: a device path resolved (symlinks followed), a URL lower-cased without its query
(`socket://localhost:7001` and `socket://127.0.0.1:7001?logging=debug` are one port).
loop:// and in-process ports (ShoeLink open_port=...) are not locked: nothing else can open them.
"""

import hashlib
import os
import sys
import tempfile
import time
from urllib.parse import urlsplit

from host_tools.errors import ShoeError
from host_tools.hoststate import HeldLock

UNSHARED = ("loop", "sim", "gateway+unix", "gateway+tcp", "gateway+tls")


def lock_dir():
    d = os.environ.get("SHOE_LOCK_DIR") or os.path.join(
        tempfile.gettempdir(), "shoectl-locks-%d" % os.getuid()
    )
    os.makedirs(d, mode=0o700, exist_ok=True)
    st = os.lstat(d)
    if st.st_uid != os.getuid() or st.st_mode & 0o022 or not os.path.isdir(d) or os.path.islink(d):
        raise ShoeError(
            "the port lock directory %s is not this user's own (owner uid %d, mode "
            "%o): remove it, or set SHOE_LOCK_DIR" % (d, st.st_uid, st.st_mode & 0o7777)
        )
    return d


def port_key(url):
    """The port's identity, or None for a port no other process can open (loop://)."""
    if "://" not in url:
        return "device:" + os.path.realpath(url)
    u = urlsplit(url)
    scheme = u.scheme.lower()
    if scheme in UNSHARED:
        return None
    if scheme == "spy":  # spy://PORT: the port it wraps
        return port_key(url[len("spy://") :].split("?", 1)[0])
    host = (u.hostname or "").lower()
    if host in ("localhost", "::1", "ip6-localhost"):
        host = "127.0.0.1"
    return "%s://%s:%s%s" % (scheme, host, u.port or "", u.path if not u.hostname else "")


def command_name():
    """`shoectl <command>` for the lock file (sys.argv of the CLI)."""
    a = sys.argv
    if a and (a[0].endswith("shoectl") or a[0].endswith("__main__.py")) and len(a) > 1:
        return "shoectl " + a[1]
    return " ".join(os.path.basename(x) for x in a[:2])[:80] or "python"


class PortLock(HeldLock):
    def __init__(self, url):
        self.url = url
        self.key = port_key(url)
        super().__init__(
            os.path.join(lock_dir(), hashlib.sha256(self.key.encode()).hexdigest()[:24] + ".lock")
            if self.key
            else None,
            mode=0o600,
        )

    def acquire(self, via=None):
        if self.path is None or self.fd is not None:
            return self
        if not self.take(
            {
                "pid": os.getpid(),
                "cmd": command_name(),
                "port": self.key,
                "via": via,
                "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
        ):
            raise ShoeError(refusal(self.url, self.record()), "port_in_use")
        return self


def refusal(url, holder):
    """The one-paragraph refusal for a second opener of `url`."""
    who = "PID %s (%s, since %s)" % (
        holder.get("pid", "unknown"),
        holder.get("cmd") or "?",
        holder.get("since") or "?",
    )
    if holder.get("via"):
        return (
            "the shoe's port %s is held by %s, which serves the table system: go through "
            "it with --port %s (opening the port here would take its link over)"
            % (url, who, holder["via"])
        )
    if str(holder.get("cmd", "")).endswith("gateway"):
        return (
            "the shoe's port %s is held by %s: go through the gateway (--port "
            "gateway+unix://SOCKET, its --api-socket) instead of opening the port" % (url, who)
        )
    return (
        "the shoe's port %s is in use by another host process, %s: one process per port "
        "(a second one would take the link over); stop it, or run `shoectl gateway` and go "
        "through it with --port gateway+unix://SOCKET" % (url, who)
    )
