"""A TCP proxy between the host and the virtual board's host UART that misbehaves on request.

    proxy = FaultProxy(("127.0.0.1", board_port), seed=1, corrupt=0.01, drop=0.01, dup=0.01)
    proxy.start(); url = proxy.url         # give this socket:// URL to the host
    proxy.cut(3.0)                         # pull the cable for 3 s (both directions)

Faults, each direction independently, from a seeded random generator:
  corrupt  probability that a byte is replaced by a random other byte
  drop     probability that a chunk (what one read returned: usually one or a few frames) is lost
  dup      probability that a chunk is delivered twice
A cut closes both sockets and refuses connections until it ends, like an unplugged cable; the
board's side sees its peer hang up, the host's side sees a dead port and reconnects.
Counters record what was done, so a test can prove that faults really happened.
"""
import random
import select
import socket
import threading
import time


class FaultProxy:
    def __init__(self, upstream, seed=0, corrupt=0.0, drop=0.0, dup=0.0, listen_port=0):
        self.upstream = upstream
        self.rng = random.Random(seed)
        self.corrupt = corrupt
        self.drop = drop
        self.dup = dup
        self._lsock = socket.socket()
        self._lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._lsock.bind(("127.0.0.1", listen_port))
        self._lsock.listen(4)
        self.port = self._lsock.getsockname()[1]
        self._cut_until = 0.0
        self._pair = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.stats = {"bytes": 0, "corrupted": 0, "dropped": 0, "duplicated": 0, "cuts": 0,
                      "connections": 0}

    @property
    def url(self):
        return "socket://127.0.0.1:%d" % self.port

    def start(self):
        self._thread = threading.Thread(target=self._run, name="fault-proxy", daemon=True)
        self._thread.start()
        return self

    def cut(self, seconds):
        with self._lock:
            self._cut_until = time.monotonic() + seconds
            self.stats["cuts"] += 1
            self._close_pair()

    def set_faults(self, corrupt=None, drop=None, dup=None):
        with self._lock:
            if corrupt is not None:
                self.corrupt = corrupt
            if drop is not None:
                self.drop = drop
            if dup is not None:
                self.dup = dup

    def _close_pair(self):
        if self._pair:
            for s in self._pair:
                try:
                    s.close()
                except OSError:
                    pass
        self._pair = None

    def _mangle(self, data):
        with self._lock:
            c, d, u = self.corrupt, self.drop, self.dup
        self.stats["bytes"] += len(data)
        if d and self.rng.random() < d:
            self.stats["dropped"] += 1
            return b""
        if c:
            b = bytearray(data)
            for i in range(len(b)):
                if self.rng.random() < c:
                    b[i] = (b[i] + self.rng.randrange(1, 256)) & 0xFF
                    self.stats["corrupted"] += 1
            data = bytes(b)
        if u and self.rng.random() < u:
            self.stats["duplicated"] += 1
            data = data + data
        return data

    def _run(self):
        while not self._stop.is_set():
            socks = [self._lsock]
            with self._lock:
                pair = self._pair
            if pair:
                socks += list(pair)
            try:
                ready, _, _ = select.select(socks, [], [], 0.05)
            except (OSError, ValueError):
                continue
            for s in ready:
                if s is self._lsock:
                    self._accept()
                    continue
                with self._lock:
                    pair = self._pair
                if not pair or s not in pair:
                    continue
                other = pair[1] if s is pair[0] else pair[0]
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    with self._lock:
                        if self._pair is pair:
                            self._close_pair()
                    continue
                out = self._mangle(data)
                if out:
                    try:
                        other.sendall(out)
                    except OSError:
                        with self._lock:
                            if self._pair is pair:
                                self._close_pair()

    def _accept(self):
        try:
            client, _ = self._lsock.accept()
        except OSError:
            return
        with self._lock:
            refuse = time.monotonic() < self._cut_until
        if refuse:
            client.close()
            return
        try:
            up = socket.create_connection(self.upstream, timeout=2.0)
        except OSError:
            client.close()
            return
        for s in (client, up):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            self._close_pair()
            self._pair = (client, up)
            self.stats["connections"] += 1

    def close(self):
        self._stop.set()
        if self._thread:
            self._thread.join(2.0)
        with self._lock:
            self._close_pair()
        self._lsock.close()
