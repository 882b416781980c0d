"""MQTT users and topic ACLs for the floor: one credential per gateway and per collector.

    plan = Plan.build(shoes, collectors=["collector-1"], gateways=None)   # gw-<shoe> per shoe
    files = write(outdir, plan, port=1883, tls=None)   # passwd, acl, mosquitto.conf,
                                                       # credentials/<user>.password (0600 each)
    acl = Acl.parse(text); acl.allows(user, "write", "floor/shoe/T001/events")

The same two files drive Mosquitto (`password_file`, `acl_file`), the embedded aedes broker
(broker_js/floorauth.mjs: this module's grammar and rules in JavaScript, tested on the same cases)
and the embedded amqtt broker (FloorAuth and FloorTopics below, loaded by
amqttbroker.EmbeddedBroker(passwd=, acl=)): one list of users and one set of rules, deny by
default. A gateway may publish only its own shoes'
events and state and read only their replay topic; a collector may read every shoe's events and
state and publish replay requests; nobody else may do anything. Passwords are generated (24
random bytes); the password file holds Mosquitto's PBKDF2-SHA512 hashes ($7$). Mosquitto's
default 101 iterations are kept: the secrets are random, not chosen by people, so stretching
adds nothing, and a broker restart re-checks every gateway's password at once.
"""

import base64
import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

from host_tools.errors import ShoeError
from host_tools.floor.mqtt import PREFIX

_USER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ITERATIONS = 101
# $7$ITERATIONS$SALT$DK in canonical base64: the same expression as broker_js/floorauth.mjs
_B64 = r"((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)"
_HASH = re.compile(r"\$7\$([0-9]{1,8})\$%s\$%s\Z" % (_B64, _B64))


def check_user(name):
    if not isinstance(name, str) or not _USER.match(name):
        raise ShoeError("MQTT user names are 1-64 of A-Z a-z 0-9 . _ - : %r" % (name,))
    return name


# ---- Mosquitto's password hashes ($7$: PBKDF2-SHA512) ----------------------------------------
def hash_password(password, iterations=ITERATIONS, salt=None):
    salt = salt or os.urandom(12)
    dk = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    return "$7$%d$%s$%s" % (
        iterations,
        base64.b64encode(salt).decode(),
        base64.b64encode(dk).decode(),
    )


def verify_password(password, hashed):
    m = _HASH.match(hashed) if isinstance(hashed, str) else None
    if not m or not 1 <= int(m.group(1)) <= 10_000_000:
        return False
    want = base64.b64decode(m.group(3))
    got = hashlib.pbkdf2_hmac(
        "sha512", (password or "").encode(), base64.b64decode(m.group(2)), int(m.group(1))
    )
    return hmac.compare_digest(got, want)


def read_passwd(path):
    users = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, h = line.partition(":")
        if not sep or not h.startswith("$7$"):
            raise ShoeError("%s line %d: not `user:$7$...`" % (path, n))
        users[user] = h
    return users


# ---- ACLs (the part of Mosquitto's acl_file the floor writes) ----------------------------------
def _matches(pattern, topic):
    """MQTT filter `pattern` matches the concrete `topic`."""
    p, t = pattern.split("/"), topic.split("/")
    for i, level in enumerate(p):
        if level == "#":
            return True
        if i >= len(t) or (level != "+" and level != t[i]):
            return False
    return len(p) == len(t)


def _covers(pattern, sub):
    """Every topic the subscription filter `sub` matches is matched by `pattern`."""
    p, s = pattern.split("/"), sub.split("/")
    for i, level in enumerate(p):
        if level == "#":
            return True
        if i >= len(s) or s[i] == "#":
            return False
        if level == "+":
            continue
        if s[i] == "+" or s[i] != level:
            return False
    return len(p) == len(s)


class Acl:
    def __init__(self, rules=None):
        self.rules = rules or {}  # user -> [(access, pattern)]; access read|write|readwrite

    @classmethod
    def parse(cls, text):
        rules, user = {}, None
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            if words[0] == "user" and len(words) == 2:
                user = check_user(words[1])
                rules.setdefault(user, [])
            elif (
                words[0] == "topic"
                and user
                and len(words) == 3
                and words[1] in ("read", "write", "readwrite")
            ):
                rules[user].append((words[1], words[2]))
            else:
                raise ShoeError(
                    "ACL line %d not understood (only `user NAME` and `topic "
                    "read|write|readwrite TOPIC` under a user): %s" % (n, line)
                )
        return cls(rules)

    def allows(self, user, action, topic):
        """action: "write" (publish), "read" (receive a message on `topic`), "subscribe"."""
        if not user or not topic or topic.startswith("$"):
            return False
        for access, pattern in self.rules.get(user, ()):
            if action == "write" and access in ("write", "readwrite") and _matches(pattern, topic):
                return True
            if action == "read" and access in ("read", "readwrite") and _matches(pattern, topic):
                return True
            if (
                action == "subscribe"
                and access in ("read", "readwrite")
                and _covers(pattern, topic)
            ):
                return True
        return False

    def text(self):
        out = ["# floor ACL (shoectl floor-broker-config): deny by default"]
        for user in sorted(self.rules):
            out.append("")
            out.append("user %s" % user)
            out += ["topic %s %s" % r for r in self.rules[user]]
        return "\n".join(out) + "\n"


# ---- the plan: who is who ---------------------------------------------------------------------
class Plan:
    def __init__(self, gateways, collectors, prefix=PREFIX):
        self.gateways = {check_user(g): sorted(s) for g, s in gateways.items()}
        self.collectors = [check_user(c) for c in collectors]
        self.prefix = prefix
        both = set(self.gateways) & set(self.collectors)
        if both:
            raise ShoeError("a name is both a gateway and a collector: %s" % sorted(both))

    @classmethod
    def build(cls, shoes, collectors, gateways=None, prefix=PREFIX):
        """gateways: {name: [shoe, ...]}; default one gateway per shoe, named gw-<shoe>."""
        shoes = sorted(shoes)
        if gateways is None:
            gateways = {"gw-%s" % s: [s] for s in shoes}
        known = set(shoes)
        for g, ss in gateways.items():
            unknown = sorted(set(ss) - known)
            if unknown:
                raise ShoeError("gateway %s names shoes with no key: %s" % (g, unknown))
        return cls(gateways, collectors, prefix)

    def users(self):
        return sorted(self.gateways) + sorted(self.collectors)

    def acl(self):
        rules = {}
        p = self.prefix
        for g, shoes in self.gateways.items():
            r = rules[g] = []
            for s in shoes:
                r += [
                    ("write", "%s/shoe/%s/events" % (p, s)),
                    ("write", "%s/shoe/%s/state" % (p, s)),
                    ("read", "%s/shoe/%s/replay" % (p, s)),
                ]
        for c in self.collectors:
            rules[c] = [
                ("read", "%s/shoe/+/events" % p),
                ("read", "%s/shoe/+/state" % p),
                ("write", "%s/shoe/+/replay" % p),
            ]
        return Acl(rules)


def _write_private(path, text):
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


def write(
    outdir, plan, port=1883, bind="0.0.0.0", tls=None, rotate=False, data="/var/lib/mosquitto"
):
    """Write passwd, acl, mosquitto.conf and credentials/<user>.password into `outdir`.

    Existing credentials are kept (a re-run after adding a table changes nothing for the others)
    unless rotate. tls: {"ca": path, "cert": path, "key": path, "require_certificate": bool}."""
    out = Path(outdir)
    cred = out / "credentials"
    cred.mkdir(parents=True, exist_ok=True)
    os.chmod(cred, 0o700)
    lines = []
    for user in plan.users():
        f = cred / ("%s.password" % user)
        if f.exists() and not rotate:
            pw = f.read_text().strip()
        else:
            pw = secrets.token_urlsafe(24)
            _write_private(f, pw + "\n")
        lines.append("%s:%s" % (user, hash_password(pw)))
    for stale in cred.glob("*.password"):  # a gateway or collector taken off the floor
        if stale.name[: -len(".password")] not in plan.users():
            stale.unlink()
    passwd = _write_private(out / "passwd", "\n".join(lines) + "\n")
    acl = _write_private(out / "acl", plan.acl().text())
    conf = [
        "# Mosquitto for the floor (shoectl floor-broker-config); docs/floor.md",
        "per_listener_settings false",
        "allow_anonymous false",
        "password_file %s" % passwd.resolve(),
        "acl_file %s" % acl.resolve(),
        "persistence true",
        "persistence_location %s/" % str(data).rstrip("/"),
        "max_queued_messages 0",
        "max_inflight_messages 200",
        "",
    ]
    if tls:
        conf += [
            "listener %d %s" % (port, bind),
            "cafile %s" % Path(tls["ca"]).resolve(),
            "certfile %s" % Path(tls["cert"]).resolve(),
            "keyfile %s" % Path(tls["key"]).resolve(),
            "tls_version tlsv1.2",
        ]
        if tls.get("require_certificate"):
            # the client certificate's CN is the MQTT user name the ACL applies to
            conf += ["require_certificate true", "use_identity_as_username true"]
    else:
        conf += ["listener %d %s" % (port, bind)]
    mconf = out / "mosquitto.conf"
    mconf.write_text("\n".join(conf) + "\n")
    return {"passwd": passwd, "acl": acl, "conf": mconf, "credentials": cred}


# ---- the embedded broker (amqtt) enforces the same files --------------------------------------
def _amqtt_plugins():
    from dataclasses import dataclass

    from amqtt.contexts import Action
    from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin

    class FloorAuth(BaseAuthPlugin):
        """A CONNECT is accepted only with a user and password from the password file."""

        @dataclass
        class Config:
            password_file: str = ""

        def __init__(self, context):
            super().__init__(context)
            self.users = read_passwd(self.config.password_file)

        async def authenticate(self, *, session):
            h = self.users.get(session.username or "")
            ok = bool(h) and verify_password(session.password or "", h)
            if not ok:
                self.context.logger.warning("refused MQTT login %r", session.username)
            return ok

    class FloorTopics(BaseTopicPlugin):
        """Publish, subscribe and delivery by the ACL file; deny by default."""

        @dataclass
        class Config:
            acl_file: str = ""

        def __init__(self, context):
            super().__init__(context)
            self.acl = Acl.parse(Path(self.config.acl_file).read_text())

        async def topic_filtering(self, *, session=None, topic=None, action=None):
            user = getattr(session, "username", None)
            what = {
                Action.PUBLISH: "write",
                Action.SUBSCRIBE: "subscribe",
                Action.RECEIVE: "read",
            }.get(action)
            return bool(what) and self.acl.allows(user, what, topic)

    return FloorAuth, FloorTopics


def __getattr__(name):  # amqtt imports the plugins by dotted name; load amqtt lazily
    global FloorAuth, FloorTopics
    if name in ("FloorAuth", "FloorTopics"):
        FloorAuth, FloorTopics = _amqtt_plugins()
        return globals()[name]
    raise AttributeError(name)
