"""Optical code-reader module on a UART (the sensor the virtual board simulates).

The module is triggered by the card passing the read window and sends one line per trigger:

    3A7FRAs1d52a21b\r\n      a decoded code (interfaces.md section 1)
    NOREAD\r\n               the trigger fired but no code was decoded (configurable text)

Some modules report one card twice (a "double read"). With `dedup` on, the driver drops a line
identical to the previous one when it arrives within `dedup_ms` of the first read of that code
(the window does not slide with dropped repeats: a code repeated every 200 ms passes again after
`dedup_ms`): one card, one read, counted in `double_reads`. A cloned card read within the window
is dropped the same way, so the app turns `dedup` on only where that cannot hide a clone: with
a card-exit beam (a clone breaks the beam without a read), or where the table's configuration
says this reader double-reads (docs/irregularities.md, "Double reads and cloned cards"). With
`dedup` off every line is a read: the deck ledger sees the second read as a duplicate card.

    reader = OpticalReader(uart)            # uart: machine.UART or a stream with any(),
                                            # readinto(buf, nbytes), write() and the poll ioctl
                                            # (read() awaits it, no polling)
    kind, data = await reader.read()        # ("card", b"3A7FRAs1d52a21b") or ("noread", b"")
                                            # or ("garbled", raw) for an over-long/binary line

Lines are assembled in a preallocated buffer; bytes are only allocated for a finished code.
Counters (lines, double_reads, noreads, garbled, overflows) feed the read-quality diagnostics.
Configuration commands (`configure()`) set the module's no-read text and same-code delay.
"""
import asyncio
import time
from micropython import const

_LINE_MAX = const(48)
_CHUNK = const(32)
_LOOK_MS = const(6)   # a line arriving: look at every turn for up to this long after its last byte


class OpticalReader:
    def __init__(self, uart, dedup_ms=250, noread=b"NOREAD", ticks_ms=time.ticks_ms,
                 ticks_diff=time.ticks_diff):
        self._uart = uart
        self.dedup_ms = dedup_ms
        self.dedup = True    # set by the app (App.reader_policy)
        self.noread = noread
        self._stream = None  # asyncio stream over the UART, made by the first read()
        self._ticks_ms = ticks_ms
        self._ticks_diff = ticks_diff
        self._chunk = bytearray(_CHUNK)
        self._chunk_mv = memoryview(self._chunk)
        self._one = self._chunk_mv[:1]
        self._pos = 0        # next unread byte in _chunk
        self._end = 0        # bytes held in _chunk
        self._got = 0        # bytes taken from the UART (read(): has a line's next byte come?)
        self._line = bytearray(_LINE_MAX)
        self._len = 0
        self._overflow = False
        self._last = bytearray(_LINE_MAX)
        self._last_len = -1
        self._last_t = 0
        self.lines = 0
        self.double_reads = 0
        self.noreads = 0
        self.garbled = 0
        self.overflows = 0

    def configure(self, noread=None, dedup_ms=None):
        """Send the module its settings (same-code delay in ms, no-read text)."""
        if dedup_ms is not None:
            self.dedup_ms = int(dedup_ms)
            self._uart.write(b"$DEDUP=%d\r\n" % self.dedup_ms)
        if noread is not None:
            self.noread = bytes(noread)
            self._uart.write(b"$NOREAD=" + self.noread + b"\r\n")

    def _fill(self):
        # only what has arrived: machine.UART's readinto fills the whole buffer, waiting up to
        # timeout_char after each byte for the next (on the rp2 port at least 13 bit times,
        # 2 ms at 9600 baud, spinning), which held every card's line 3-5 ms on the emulated Pico
        u = self._uart
        n = u.any()
        if not n:
            return False
        n = u.readinto(self._chunk_mv, n if n < _CHUNK else _CHUNK)
        if not n:
            return False
        self._pos = 0
        self._end = n
        self._got += n
        return True

    def _next_line(self):
        """Consume buffered bytes; return True when a complete line sits in _line[:_len]."""
        while self._pos < self._end:
            b = self._chunk[self._pos]
            self._pos += 1
            if b == 10 or b == 13:          # \n or \r ends a line
                if self._len or self._overflow:
                    return True
                continue                    # empty line (the \n after \r)
            if self._len < _LINE_MAX:
                self._line[self._len] = b
                self._len += 1
            else:
                self._overflow = True
        return False

    def _classify(self):
        n = self._len
        line = memoryview(self._line)[:n]
        self.lines += 1
        if self._overflow:
            self._overflow = False
            self.overflows += 1
            self.garbled += 1
            return "garbled", bytes(line)
        now = self._ticks_ms()
        if self.dedup and n == self._last_len and line == memoryview(self._last)[:n] and \
                self._ticks_diff(now, self._last_t) < self.dedup_ms:
            self.double_reads += 1     # the window stays where the first read opened it
            return None
        self._last[:n] = line
        self._last_len = n
        self._last_t = now
        if line == self.noread:
            self.noreads += 1
            return "noread", b""
        if n and (min(line) < 33 or max(line) > 126):   # not printable ASCII (C loops)
            self.garbled += 1
            return "garbled", bytes(line)
        return "card", bytes(line)

    def poll(self):
        """Non-blocking: the next read if a full line has arrived, else None."""
        while True:
            if self._next_line():
                out = self._classify()
                self._len = 0
                if out is not None:
                    return out
                continue
            if not self._fill():
                return None

    async def read(self):
        """The next read; sleeps in the event loop (the UART's poll ioctl) until bytes come.

        While a line is arriving it looks at the UART at every turn of the event loop instead
        (the other tasks run between looks): a chip asleep is woken by the UART's interrupt
        alone, which the RP2040's PL011 raises when its receive FIFO holds 4 bytes or when a
        byte has waited 32 bit periods (3.3 ms at 9,600 baud) with none after it, so a line's
        last 1-3 bytes could wait that long (card -> frame 10 ms instead of 6-7 in a third of
        the cards on the emulated Pico, once its rig modelled that interrupt); a look every ms
        still found the line's end ~0.5 ms late on average. Up to _LOOK_MS after the line's
        last byte so far (a line takes ~17 ms at 9,600 baud: the chip is busy that long a
        card); then the stream again (a line cut off waits for more without keeping the chip
        busy)."""
        if self._stream is None:
            self._stream = asyncio.StreamReader(self._uart)
        t_got = None
        while True:
            got = self._got
            r = self.poll()
            if r is not None:
                return r
            if self._len:
                now = self._ticks_ms()
                if self._got != got or t_got is None:
                    t_got = now
                if self._ticks_diff(now, t_got) <= _LOOK_MS:
                    await asyncio.sleep_ms(0)
                    continue
            # one byte: it is there when the stream wakes (a longer read would wait for the
            # rest, _fill); poll() emptied the chunk, the byte goes to its start
            n = await self._stream.readinto(self._one)
            if n:
                self._pos = 0
                self._end = n
                self._got += n

    def stats(self):
        return {"lines": self.lines, "double_reads": self.double_reads, "noreads": self.noreads,
                "garbled": self.garbled, "overflows": self.overflows}
