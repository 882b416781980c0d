"""The gateway's table-system API on the wire: addresses, frames, the credential and its proof.

Address (what `--port` takes): `gateway+unix:///PATH/TO/SOCKET`, `gateway+tcp://127.0.0.1:PORT`
(localhost only) or `gateway+tls://HOST:PORT` (the TCP listener under TLS; `?ca=FILE` or env
SHOE_GATEWAY_CA: the CA that signed the gateway's certificate), optionally `?key=FILE`: the API
credential file. Credentials are bound to roles (CREDENTIALS): the table credential (default: env
SHOE_GATEWAY_KEY, else for a socket X.sock the file X.key beside it) may log in as any role, the
reader credential (env SHOE_GATEWAY_READER_KEY, else X.reader.key) only as `reader`; a reader
client with no reader key file of its own falls back to the table one. A named client's key file
(`NAME:SECRET`, host_tools/floor/apiclients.py) makes the client name itself in its login, and
the gateway grants it the roles its clients file gives that name. Under TLS a client may present
its own certificate (`?cert=FILE&certkey=FILE`), which a gateway with a client CA requires.

Frame: a 4-byte big-endian length, then one map in the link's payload codec (a canonical CBOR
subset, docs/protocol.md section 6), at most MAX_FRAME bytes. Proof of the credential
(never sent): the gateway sends a 16-byte nonce, the client answers HMAC-SHA256(secret,
"shoe-gateway-api/1 client" 0 nonce cnonce role) with its own nonce `cnonce`, the gateway answers
HMAC-SHA256(secret, "shoe-gateway-api/1 server" 0 nonce cnonce role): each side knows the other
holds the secret. The whole exchange: docs/floor.md, "The table system through the gateway".
"""

import hashlib
import hmac
import os
import re
import socket
import stat
import struct
from urllib.parse import parse_qs, urlsplit

from host_tools.errors import ShoeError
from shoe.link import codec

VERSION = 1
MAX_FRAME = 1 << 20
ROLES = ("reader", "table", "supervisor")
# credential -> the roles a client proving it may take (the gateway's allowlist)
CREDENTIALS = {"table": ("reader", "table", "supervisor"), "reader": ("reader",)}
ENV_KEY = "SHOE_GATEWAY_KEY"
ENV_READER_KEY = "SHOE_GATEWAY_READER_KEY"
ENV_CA = "SHOE_GATEWAY_CA"
ENV_CLIENT_CERT = "SHOE_GATEWAY_CLIENT_CERT"
ENV_CLIENT_KEY = "SHOE_GATEWAY_CLIENT_KEY"
CLIENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TAG = b"shoe-gateway-api/%d " % VERSION


class WireError(Exception):
    """The peer closed the connection or sent something that is not a frame of this API."""


def is_gateway_url(url):
    return isinstance(url, str) and url.startswith(
        ("gateway+unix://", "gateway+tcp://", "gateway+tls://")
    )


def parse_url(url):
    """-> (family, address, key file or None): ("unix", path), ("tcp" | "tls", (host, port))."""
    u = urlsplit(url)
    key = (parse_qs(u.query).get("key") or [None])[0]
    if u.scheme == "gateway+unix":
        path = u.path
        if not path or not path.startswith("/") or u.netloc:
            raise ShoeError("a gateway socket is gateway+unix:///ABSOLUTE/PATH, not %r" % url)
        return "unix", path, key
    if u.scheme in ("gateway+tcp", "gateway+tls"):
        try:
            port = u.port
        except ValueError:
            port = None
        if not u.hostname or not port:
            raise ShoeError("a gateway port is %s://HOST:PORT, not %r" % (u.scheme, url))
        return u.scheme[len("gateway+") :], (u.hostname, port), key
    raise ShoeError("not a gateway address: %r" % url)


def key_path(url, role="table"):
    """The credential file for `url` and `role`: ?key=, then for the reader role env
    SHOE_GATEWAY_READER_KEY or X.reader.key beside X.sock (when it exists), then env
    SHOE_GATEWAY_KEY or X.key beside X.sock."""
    family, addr, key = parse_url(url)
    if key:
        return key
    base = (addr[:-5] if addr.endswith(".sock") else addr) if family == "unix" else None
    if role == "reader":
        if os.environ.get(ENV_READER_KEY):
            return os.environ[ENV_READER_KEY]
        if base and os.path.exists(base + ".reader.key"):
            return base + ".reader.key"
    if os.environ.get(ENV_KEY):
        return os.environ[ENV_KEY]
    if base:
        return base + ".key"
    raise ShoeError(
        "%s: give the gateway's API key file (?key=FILE in the address, or env %s)"
        % (url, ENV_READER_KEY if role == "reader" else ENV_KEY)
    )


def client_tls(url):
    """The TLS context for a gateway+tls:// address: the CA from ?ca= or env SHOE_GATEWAY_CA
    (else the system's), the gateway's name checked against its certificate; the client's own
    certificate from ?cert=&certkey= or env SHOE_GATEWAY_CLIENT_CERT / SHOE_GATEWAY_CLIENT_KEY
    (for a gateway started with --api-tls-client-ca)."""
    import ssl

    q = parse_qs(urlsplit(url).query)
    ca = (q.get("ca") or [None])[0] or os.environ.get(ENV_CA)
    ctx = ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    cert = (q.get("cert") or [None])[0] or os.environ.get(ENV_CLIENT_CERT)
    if cert:
        key = (q.get("certkey") or [None])[0] or os.environ.get(ENV_CLIENT_KEY)
        _load_chain(ctx, cert, key, "this client's")
    return ctx


def _load_chain(ctx, cert, key, whose):
    import ssl

    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:
        raise ShoeError(
            "cannot load %s TLS certificate/key (%s, %s): %s" % (whose, cert, key, e)
        ) from None


def server_tls(cert, key, client_ca=None):
    """The gateway's TLS context for its TCP listener (certificate chain and its key); with
    `client_ca`, a client must present a certificate that CA signed (mutual TLS)."""
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_chain(ctx, cert, key, "the API's")
    if client_ca:
        try:
            ctx.load_verify_locations(cafile=client_ca)
        except (OSError, ssl.SSLError) as e:
            raise ShoeError("cannot load the API's client CA %s: %s" % (client_ca, e)) from None
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def peer_name(sock):
    """The common name of the certificate a TLS client presented, or None."""
    getpeercert = getattr(sock, "getpeercert", None)
    cert = getpeercert() if getpeercert else None
    for rdn in (cert or {}).get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                return v
    return None


def read_private(path, what="the gateway's API key file"):
    """The bytes of a file only its owner may read; ShoeError (naming `what`) if it is missing
    or open to group or others."""
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ShoeError("%s %s: %s" % (what, path, e.strerror or e)) from None
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise ShoeError(
            "%s %s is open to others (mode %o): chmod 600 it"
            % (what, path, stat.S_IMODE(st.st_mode))
        )
    return raw


def load_secret(path):
    """The credential in `path` (its bytes, whitespace stripped); ShoeError if it is missing,
    shorter than 16 bytes, or readable by anyone but its owner."""
    secret = read_private(path).strip()
    if len(secret) < 16:
        raise ShoeError("the gateway's API key file %s holds less than 16 bytes" % path)
    return secret


def load_credential(path):
    """-> (client name or None, secret) from a key file: a named client's (`shoectl
    gateway-client add`) is one line NAME:SECRET, the gateway's own key files the secret alone."""
    raw = load_secret(path)
    if b":" not in raw:
        return None, raw
    name, _, secret = raw.partition(b":")
    try:
        name = name.decode("ascii")
    except UnicodeError:
        name = ""
    if not CLIENT_NAME.match(name) or len(secret) < 16:
        raise ShoeError(
            "the API key file %s is neither a key nor a client's NAME:SECRET line" % path
        )
    return name, secret


def new_secret_file(path):
    """Write a fresh random credential (64 hex digits) to `path`, mode 0600, atomically."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.unlink(tmp)  # left by a killed gateway of the same PID
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, os.urandom(32).hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return load_secret(path)


def client_proof(secret, nonce, cnonce, role):
    return hmac.new(
        secret, _TAG + b"client\0" + nonce + cnonce + role.encode(), hashlib.sha256
    ).digest()


def server_proof(secret, nonce, cnonce, role):
    return hmac.new(
        secret, _TAG + b"server\0" + nonce + cnonce + role.encode(), hashlib.sha256
    ).digest()


def connect(url, timeout):
    family, addr, _ = parse_url(url)
    s = socket.socket(socket.AF_UNIX if family == "unix" else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(addr)
        if family == "tls":  # a certificate the CA did not sign fails here (ssl.SSLError)
            s = client_tls(url).wrap_socket(s, server_hostname=addr[0])
    except OSError:
        s.close()
        raise
    return s


def send(sock, obj):
    data = codec.encode(obj)
    sock.sendall(struct.pack(">I", len(data)) + data)


def _exactly(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise WireError("closed")
        buf += chunk
    return bytes(buf)


def recv(sock):
    """One frame -> its map; WireError if closed, too long or not a map of the codec."""
    n = struct.unpack(">I", _exactly(sock, 4))[0]
    if n > MAX_FRAME:
        raise WireError("frame of %d bytes (at most %d)" % (n, MAX_FRAME))
    try:
        obj = codec.decode(_exactly(sock, n))
    except codec.CodecError as e:
        raise WireError("not a frame of the API (%s)" % e.reason) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("t"), str):
        raise WireError('a frame must be a map with a type "t"')
    return obj
