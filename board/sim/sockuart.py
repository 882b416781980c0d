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
        self._buf = bytearray(1024)
        self._buf_mv = memoryview(self._buf)
        self._held = bytearray()    # received from the peer, not read yet (any())

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
        self._held = bytearray()
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

    def _pull(self):
        # what the peer has sent, into _held (a socket cannot say how much waits without
        # reading it); False if the peer hung up or failed (dropped)
        try:
            n = self._peer.readinto(self._buf)
        except OSError as e:
            if e.errno == errno.EAGAIN:
                return True
            self._drop()
            return False
        if n == 0:              # the peer hung up
            self._drop()
            return False
        if n:
            self._held.extend(self._buf_mv[:n])
        return True

    def any(self):
        """Bytes received and not read yet, as machine.UART.any() counts them."""
        self._accept()
        if self._peer is not None and not self._held and self._poll.poll(0):
            self._pull()
        return len(self._held)

    def ioctl(self, req, arg):
        if req != _MP_STREAM_POLL:
            return _MP_STREAM_ERROR
        ready = arg & select.POLLOUT     # written bytes never wait (lost with no peer)
        if arg & select.POLLIN:
            self._accept()
            if self._held or (self._poll is not None and self._poll.poll(0)):
                ready |= select.POLLIN   # bytes, or the peer hung up (readinto then drops it)
        return ready

    def readinto(self, buf, nbytes=-1):
        self._accept()
        if not self._held:
            if self._peer is None or not self._pull() or not self._held:
                return None
        n = len(self._held)
        if n > len(buf):
            n = len(buf)
        if 0 <= nbytes < n:
            n = nbytes
        buf[:n] = self._held[:n]
        self._held[:n] = b""
        return n

    def txdone(self):
        """machine.UART's: nothing left to send (write() returns once the socket took all)."""
        return True

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
