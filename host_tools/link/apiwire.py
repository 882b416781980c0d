"""The gateway's table-system API on the wire: addresses, frames, the credential and its proof.

Address (what `--port` takes): `gateway+unix:///PATH/TO/SOCKET` or `gateway+tcp://127.0.0.1:PORT`
(localhost only), optionally `?key=FILE`: the API credential file (default: env
SHOE_GATEWAY_KEY, else for a socket X.sock the file X.key beside it, which the gateway writes).

Frame: a 4-byte big-endian length, then one map in the link's payload codec (a canonical CBOR
subset, docs/protocol.md section 6), at most MAX_FRAME bytes. Proof of the credential
(never sent): the gateway sends a 16-byte nonce, the client answers HMAC-SHA256(secret,
"shoe-gateway-api/1 client" 0 nonce cnonce role) with its own nonce `cnonce`, the gateway answers
HMAC-SHA256(secret, "shoe-gateway-api/1 server" 0 nonce cnonce role): each side knows the other
holds the secret. The whole exchange: docs/floor.md, "The table system through the gateway".
"""
import hmac
import hashlib
import os
import socket
import stat
import struct
from urllib.parse import parse_qs, urlsplit

from host_tools.errors import ShoeError
from shoe.link import codec

VERSION = 1
MAX_FRAME = 1 << 20
ROLES = ("reader", "table", "supervisor")
ENV_KEY = "SHOE_GATEWAY_KEY"
_TAG = b"shoe-gateway-api/%d " % VERSION


class WireError(Exception):
    """The peer closed the connection or sent something that is not a frame of this API."""


def is_gateway_url(url):
    return isinstance(url, str) and url.startswith(("gateway+unix://", "gateway+tcp://"))


def parse_url(url):
    """-> (family, address, key file or None): ("unix", path) or ("tcp", (host, port))."""
    u = urlsplit(url)
    key = (parse_qs(u.query).get("key") or [None])[0]
    if u.scheme == "gateway+unix":
        path = u.path
        if not path or not path.startswith("/") or u.netloc:
            raise ShoeError("a gateway socket is gateway+unix:///ABSOLUTE/PATH, not %r" % url)
        return "unix", path, key
    if u.scheme == "gateway+tcp":
        try:
            port = u.port
        except ValueError:
            port = None
        if not u.hostname or not port:
            raise ShoeError("a gateway port is gateway+tcp://127.0.0.1:PORT, not %r" % url)
        return "tcp", (u.hostname, port), key
    raise ShoeError("not a gateway address: %r" % url)


def key_path(url):
    """The credential file for `url`: ?key=, env SHOE_GATEWAY_KEY, or X.key beside X.sock."""
    family, addr, key = parse_url(url)
    key = key or os.environ.get(ENV_KEY)
    if key:
        return key
    if family == "unix":
        return addr[:-5] + ".key" if addr.endswith(".sock") else addr + ".key"
    raise ShoeError("%s: give the gateway's API key file (?key=FILE in the address, or env %s)"
                    % (url, ENV_KEY))


def load_secret(path):
    """The credential in `path` (its bytes, whitespace stripped); ShoeError if it is missing,
    shorter than 16 bytes, or readable by anyone but its owner."""
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            secret = f.read().strip()
    except OSError as e:
        raise ShoeError("the gateway's API key file %s: %s" % (path, e.strerror or e)) from None
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise ShoeError("the gateway's API key file %s is open to others (mode %o): chmod 600 it"
                        % (path, stat.S_IMODE(st.st_mode)))
    if len(secret) < 16:
        raise ShoeError("the gateway's API key file %s holds less than 16 bytes" % path)
    return secret


def new_secret_file(path):
    """Write a fresh random credential (64 hex digits) to `path`, mode 0600, atomically."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        os.unlink(tmp)           # left by a killed gateway of the same PID
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
    return hmac.new(secret, _TAG + b"client\0" + nonce + cnonce + role.encode(),
                    hashlib.sha256).digest()


def server_proof(secret, nonce, cnonce, role):
    return hmac.new(secret, _TAG + b"server\0" + nonce + cnonce + role.encode(),
                    hashlib.sha256).digest()


def connect(url, timeout):
    family, addr, _ = parse_url(url)
    s = socket.socket(socket.AF_UNIX if family == "unix" else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(addr)
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
        raise WireError("a frame must be a map with a type \"t\"")
    return obj
