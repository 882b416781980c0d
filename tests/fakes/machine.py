"""Fake hardware for firmware tests on the MicroPython unix port.

On MICROPYPATH this module stands in for `machine`: it first imports everything the unix port's
built-in `machine` has (Signal, PinBase, idle, ...) and then adds Pin, UART, SPI and WDT with the
real API shape. Tests drive them from the outside: `pin.drive(v)` fires the IRQ handler like an
edge would, `uart.inject(b)` puts bytes on the wire, `spi` forwards every transfer to a device
model object (`device.transfer(tx, rx)`), `WDT.fed` counts feeds.
"""

import sys

_saved = sys.path[:]
sys.path.clear()
try:
    from machine import *  # noqa: F401,F403  the built-in module of the unix port
finally:
    sys.path.extend(_saved)
del _saved

import io

_MP_STREAM_POLL = const(3)
_POLL_RD = const(1)
_POLL_WR = const(4)
_HISTORY = const(32)


def disable_irq():
    return 0


def enable_irq(state=0):
    return None


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, id, mode=IN, pull=None, value=None):
        self.id = id
        self.mode = mode
        self.pull = pull
        self._value = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            self._value = 1 if value else 0
        self._handler = None
        self._trigger = 0
        self.history = []  # the last _HISTORY levels written (bounded: 64 KB heaps)

    def init(self, mode=None, pull=None, value=None):
        if mode is not None:
            self.mode = mode
        if value is not None:
            self(value)

    def value(self, v=None):
        if v is None:
            return self._value
        self._value = 1 if v else 0
        h = self.history
        if type(h) is list and len(h) >= _HISTORY:
            h.pop(0)
        h.append(self._value)

    __call__ = value

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING, hard=False):
        self._handler = handler
        self._trigger = trigger

    def drive(self, v):
        """Test side: set the input level; call the IRQ handler on a matching edge."""
        old, self._value = self._value, 1 if v else 0
        if self._handler is None or old == self._value:
            return
        edge = Pin.IRQ_RISING if self._value else Pin.IRQ_FALLING
        if self._trigger & edge:
            self._handler(self)


class UART(io.IOBase):
    """A UART whose far end is the test: inject() bytes to receive, take() what was written."""

    CTS = 1  # flow= values of the rp2 port
    RTS = 2

    def __init__(self, id=0, baudrate=115200, **kw):
        self.id = id
        self.baudrate = baudrate
        self._rx = bytearray()
        self._tx = bytearray()
        self.txbuf = kw.get("txbuf", 256)  # the rp2 port's default transmit buffer
        # reads asked for more bytes than had arrived while some had: the rp2 port's UART
        # then waits timeout_char (at least 13 bit times) after each byte for the next,
        # spinning, before it returns what came (ports/rp2/machine_uart.c)
        self.stalls = 0
        self.on_wire = 0  # bytes written that are still going out (txdone() False): tests set it
        # the RP2040's receive interrupt, which alone wakes a chip asleep in select.poll:
        # raised at `level` bytes waiting (pico-sdk: 4) or once one has waited 32 bit periods
        # (`timed_out`, set by a test); 0: every byte wakes it (the default)
        self.level = 0
        self.timed_out = False

    def init(self, baudrate=115200, **kw):
        self.baudrate = baudrate

    # far end
    def inject(self, data):
        self._rx.extend(data)

    def take(self):
        out = bytes(self._tx)
        self._tx[:] = b""
        return out

    # device side
    def any(self):
        return len(self._rx)

    def read(self, n=-1):
        if not self._rx:
            return None
        if n is None or n < 0 or n > len(self._rx):
            self.stalls += 1
            n = len(self._rx)
        out = bytes(self._rx[:n])
        self._rx[:n] = b""
        return out

    def readinto(self, buf, n=-1):
        if not self._rx:
            return None
        n = min(len(buf), n) if n >= 0 else len(buf)
        if n > len(self._rx):
            self.stalls += 1
            n = len(self._rx)
        buf[:n] = self._rx[:n]
        self._rx[:n] = b""
        return n

    def readline(self):
        if not self._rx:
            return None
        i = self._rx.find(b"\n")
        return self.read(len(self._rx) if i < 0 else i + 1)

    def write(self, data):
        self._tx.extend(data)
        return len(data)

    def txdone(self):
        # the rp2 port's: its transmit buffer and the UART's shift register are empty
        return not self.on_wire

    def ioctl(self, req, arg):
        if req == _MP_STREAM_POLL:
            ready = 0
            if arg & _POLL_RD and self._rx and (len(self._rx) >= self.level or self.timed_out):
                ready |= _POLL_RD
            if arg & _POLL_WR:
                ready |= _POLL_WR
            return ready
        return -1  # MP_STREAM_ERROR: no file descriptor (0 would make select.poll watch stdin)


class SPI:
    """SPI bus forwarding every transfer to a device model: device.transfer(tx, rx_or_None)."""

    MSB = 0

    def __init__(self, id=0, baudrate=1000000, polarity=0, phase=0, device=None, **kw):
        self.id = id
        self.baudrate = baudrate
        self.device = device

    def init(self, baudrate=1000000, **kw):
        self.baudrate = baudrate

    def write(self, buf):
        self.device.transfer(buf, None)

    def read(self, n, write=0):
        rx = bytearray(n)
        self.device.transfer(bytes([write]) * n, rx)
        return bytes(rx)

    def readinto(self, buf, write=0):
        self.device.transfer(bytes([write]) * len(buf), buf)

    def write_readinto(self, wbuf, rbuf):
        self.device.transfer(wbuf, rbuf)


class WDT:
    """Watchdog: counts feeds; the test decides when the timeout has passed (expired())."""

    instances = []

    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.fed = 0
        WDT.instances.append(self)

    def feed(self):
        self.fed += 1
