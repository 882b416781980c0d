"""A machine.UART look-alike for the virtual board: a TCP listening socket on 127.0.0.1.

One peer at a time (a newer connection replaces the older one, as re-plugging a cable would).
With no peer attached, written bytes are lost, like a UART with nothing on the other end.
Only the sim board builds these; the firmware sees the usual any()/readinto()/write() and, as
with machine.UART, the stream poll ioctl, so asyncio's StreamReader can await it.
"""
import io
import select
import socket
import errno

_POLLOUT_WAIT_MS = 200
_MP_STREAM_POLL = 3
_MP_STREAM_ERROR = -1    # any other request (e.g. "your file descriptor": there is none fixed)


class SocketUART(io.IOBase):
    def __init__(self, port, host="127.0.0.1"):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(socket.getaddrinfo(host, port)[0][-1])
        s.listen(1)
        s.setblocking(False)
        self._listener = s
        self._peer = None
        self._poll = None
        self.port = port
        self.connects = 0

    def _accept(self):
        try:
            peer, _ = self._listener.accept()
        except OSError:
            return
        self._drop()
        peer.setblocking(False)
        self._peer = peer
        self._poll = select.poll()
        self._poll.register(peer, select.POLLIN)
        self.connects += 1

    def _drop(self):
        if self._peer is not None:
            try:
                self._peer.close()
            except OSError:
                pass
        self._peer = None
        self._poll = None

    def connected(self):
        self._accept()
        return self._peer is not None

    def any(self):
        self._accept()
        if self._poll is None:
            return 0
        return 1 if self._poll.poll(0) else 0

    def ioctl(self, req, arg):
        if req != _MP_STREAM_POLL:
            return _MP_STREAM_ERROR
        ready = arg & select.POLLOUT     # written bytes never wait (lost with no peer)
        if arg & select.POLLIN and self.any():
            ready |= select.POLLIN       # bytes, or the peer hung up (readinto then drops it)
        return ready

    def readinto(self, buf):
        self._accept()
        if self._peer is None:
            return None
        try:
            n = self._peer.readinto(buf)
        except OSError as e:
            if e.errno == errno.EAGAIN:
                return None
            self._drop()
            return None
        if n == 0:              # the peer hung up
            self._drop()
            return None
        return n

    def write(self, data):
        self._accept()
        if self._peer is None:
            return len(data)
        mv = memoryview(data)
        sent = 0
        while sent < len(mv):
            try:
                n = self._peer.write(mv[sent:])
            except OSError as e:
                if e.errno != errno.EAGAIN:
                    self._drop()
                    return len(data)
                n = None
            if n:
                sent += n
                continue
            p = select.poll()
            p.register(self._peer, select.POLLOUT)
            if not p.poll(_POLLOUT_WAIT_MS):
                self._drop()            # the peer stopped reading: treat as unplugged
                return len(data)
        return len(data)

    def close(self):
        self._drop()
        self._listener.close()
