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
Counters record what was done, so a test can prove that faults really happened; with
`ensure=True` each kind asked for happens at least once whatever the draws (one the draws have
not made yet is forced on a chunk after the first ENSURE_FROM), so a test asserts the outcome, not
luck.

Hostile mode (`hostile=FrameMitm(rule)`): an attacker on the cable who understands frames but
holds no key. FrameMitm decodes every COBS frame in each direction ("up" = host -> shoe, "down" =
shoe -> host) and lets `rule(direction, frame, mitm)` forward, drop, alter, replay, reorder or
inject frames; everything it sends gets a correct CRC. `Hostile(seed, rate)` is such a rule that
does all of these at random (the soak's attacker). The same FrameMitm drives the in-process
attack tests (tests/security/test_attacks.py), which call `feed(direction, data)` directly.
"""

import random
import select
import socket
import struct
import threading
import time

from shoe.link import cobs
from shoe.link.crc import crc32
from shoe.link.frame import VERSION

UP, DOWN = "up", "down"
DATA, ACK, HELLO, REFUSE, PING, MORE = 1, 2, 3, 4, 5, 6


class Frame:
    """One decoded frame as the attacker sees it (no key: the MAC is just 8 bytes to it)."""

    def __init__(self, version, ftype, seq, ack, payload=b"", mac=bytes(8)):
        self.version, self.ftype, self.seq, self.ack = version, ftype, seq, ack
        self.payload, self.mac = bytes(payload), bytes(mac)

    @classmethod
    def parse(cls, wire_part):
        """A frame from the bytes between two delimiters, or None (noise, bad CRC)."""
        try:
            raw = cobs.decode(wire_part)
        except ValueError:
            return None
        if len(raw) < 18 or struct.unpack(">I", raw[-4:])[0] != crc32(raw[:-4]):
            return None
        return cls(
            raw[0], raw[1], (raw[2] << 8) | raw[3], (raw[4] << 8) | raw[5], raw[6:-12], raw[-12:-4]
        )

    def copy(self, **changes):
        f = Frame(self.version, self.ftype, self.seq, self.ack, self.payload, self.mac)
        for k, v in changes.items():
            setattr(f, k, v)
        return f

    def wire(self):
        """COBS + a correct CRC-32 + delimiter: what a keyless attacker can always make."""
        raw = (
            bytes(
                [
                    self.version,
                    self.ftype,
                    self.seq >> 8,
                    self.seq & 0xFF,
                    self.ack >> 8,
                    self.ack & 0xFF,
                ]
            )
            + self.payload
            + self.mac
        )
        return cobs.encode(raw + struct.pack(">I", crc32(raw))) + b"\x00"


def forge(ftype, seq=0, ack=0, payload=b"", mac=bytes(8), version=VERSION):
    """The wire bytes of a frame made up by the attacker."""
    return Frame(version, ftype, seq, ack, payload, mac).wire()


class FrameMitm:
    """Frame-aware man in the middle. `rule(direction, frame, mitm)` returns None (forward the
    frame unchanged) or a list of Frames / wire bytes to send instead (empty: drop it). Bytes that
    are not a whole valid frame (line noise) pass unchanged. `seen[direction]` keeps every frame
    that passed (for replays); `mitm.inject[direction]` is a list of wire bytes sent before the
    next frame in that direction."""

    def __init__(self, rule=None, keep=400):
        self.rule = rule
        self.keep = keep
        self.seen = {UP: [], DOWN: []}
        self.inject = {UP: [], DOWN: []}
        self._buf = {UP: bytearray(), DOWN: bytearray()}
        self.stats = {"frames": 0, "altered": 0, "dropped": 0, "injected": 0}

    def feed(self, direction, data):
        buf = self._buf[direction]
        buf.extend(data)
        out = bytearray()
        while True:
            j = buf.find(b"\x00")
            if j < 0:
                break
            part = bytes(buf[:j])
            del buf[: j + 1]
            for w in self.inject[direction]:
                out += b"\x00" + w
                self.stats["injected"] += 1
            self.inject[direction] = []
            if not part:
                continue
            f = Frame.parse(part)
            if f is None:
                out += b"\x00" + part + b"\x00"  # noise stays noise
                continue
            self.stats["frames"] += 1
            seen = self.seen[direction]
            seen.append(f)
            if len(seen) > self.keep:
                del seen[: len(seen) - self.keep]
            res = self.rule(direction, f, self) if self.rule else None
            if res is None:
                out += b"\x00" + part + b"\x00"
                continue
            if not res:
                self.stats["dropped"] += 1
            for x in res:
                if isinstance(x, Frame):
                    x = x.wire()
                else:
                    x = bytes(x)
                    x = x if x.endswith(b"\x00") else x + b"\x00"
                self.stats["altered"] += 1
                out += b"\x00" + x.lstrip(b"\x00")
        return bytes(out)


class Hostile:
    """The soak's attacker: with probability `rate` per frame, one of: inject a junk DATA frame
    with the next sequence number, a forged ACK or PING, a REFUSE, a bit-flipped copy (MAC or
    payload) instead of the frame, a replay of an earlier frame (HELLOs of old sessions
    included), or hold the frame back and send it after the next one (reordering)."""

    KINDS = ("junk_data", "forged_ack", "refuse", "flip", "replay", "reorder", "ping")

    def __init__(self, seed=0, rate=0.02, ensure=False):
        self.rng = random.Random(seed)
        self.rate = rate
        self.done = {k: 0 for k in self.KINDS}
        self._held = {UP: None, DOWN: None}
        # ensure: every kind at least once: each 1/rate-th frame does a kind not done yet
        self.ensure = ensure
        self._period = max(1, round(1 / rate)) if rate else 20
        self._frames = 0

    def __call__(self, direction, f, mitm):
        r = self.rng
        held = self._held[direction]
        self._held[direction] = None
        out = [f] if held is None else [f, held]
        self._frames += 1
        hit = r.random() < self.rate
        due = (
            [k for k in self.KINDS if not self.done[k]]
            if self.ensure and self._frames % self._period == 0
            else []
        )
        if not hit and not due:
            return out if held is not None else None
        k = r.choice(self.KINDS) if hit else due[0]
        self.done[k] += 1
        junk = bytes(r.randrange(256) for _ in range(r.randrange(0, 40)))
        if k == "junk_data":
            out.insert(
                0, Frame(VERSION, DATA, (f.seq + 1) & 0xFFFF, f.ack, junk, junk[:8].ljust(8))
            )
        elif k == "forged_ack":
            out.insert(0, Frame(VERSION, ACK, 0, (f.seq + r.randrange(1, 9)) & 0xFFFF))
        elif k == "ping":
            out.insert(0, Frame(VERSION, PING, 0, r.randrange(65536)))
        elif k == "refuse":
            out.insert(0, Frame(VERSION, REFUSE, 0, 0, b"\xa1freason\x67bad_key"))
        elif k == "flip":
            g = f.copy()
            if g.payload and r.random() < 0.5:
                b = bytearray(g.payload)
                b[r.randrange(len(b))] ^= 1 << r.randrange(8)
                g.payload = bytes(b)
            else:
                m = bytearray(g.mac)
                m[r.randrange(8)] ^= 1 << r.randrange(8)
                g.mac = bytes(m)
            out[0] = g  # the genuine frame is lost; its altered copy goes instead
        elif k == "replay":
            pool = mitm.seen[direction] + mitm.seen[UP if direction == DOWN else DOWN]
            hellos = [x for x in pool if x.ftype == HELLO]
            out.append(r.choice(hellos if hellos and r.random() < 0.5 else pool))
        elif k == "reorder" and held is None:
            self._held[direction] = f
            return []
        return out


class FaultProxy:
    ENSURE_FROM = 20  # ensure=True: this many chunks pass untouched first (the link is up)

    def __init__(
        self,
        upstream,
        seed=0,
        corrupt=0.0,
        drop=0.0,
        dup=0.0,
        listen_port=0,
        hostile=None,
        ensure=False,
    ):
        self.upstream = upstream
        self.hostile = hostile  # a FrameMitm: the attacker, before the line noise
        self.rng = random.Random(seed)
        self.corrupt = corrupt
        self.drop = drop
        self.dup = dup
        self.ensure = ensure
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
        self.stats = {
            "bytes": 0,
            "chunks": 0,
            "corrupted": 0,
            "dropped": 0,
            "duplicated": 0,
            "cuts": 0,
            "connections": 0,
        }

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

    def _close_pair(self):
        if self._pair:
            for s in self._pair:
                try:
                    s.close()
                except OSError:
                    pass
        self._pair = None

    def _due(self, c, d, u):
        """ensure=True: the kind this chunk must get because the draws have not made it yet."""
        if not self.ensure or self.stats["chunks"] < self.ENSURE_FROM:
            return None
        for kind, p, n in (
            ("drop", d, "dropped"),
            ("corrupt", c, "corrupted"),
            ("dup", u, "duplicated"),
        ):
            if p and not self.stats[n]:
                return kind
        return None

    def _mangle(self, data):
        with self._lock:
            c, d, u = self.corrupt, self.drop, self.dup
        self.stats["bytes"] += len(data)
        due = self._due(c, d, u)
        self.stats["chunks"] += 1
        if d and (self.rng.random() < d or due == "drop"):
            self.stats["dropped"] += 1
            return b""
        if c:
            b = bytearray(data)
            for i in range(len(b)):
                if self.rng.random() < c or (due == "corrupt" and i == len(b) // 2):
                    b[i] = (b[i] + self.rng.randrange(1, 256)) & 0xFF
                    self.stats["corrupted"] += 1
            data = bytes(b)
        if u and (self.rng.random() < u or due == "dup"):
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
                if self.hostile is not None:
                    data = self.hostile.feed(UP if s is pair[0] else DOWN, data)
                out = self._mangle(data) if data else b""
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
