"""The deploy transport's read loop (host_tools/deploy/transport.py): mpremote's raw REPL reads
with a wait on the port for each byte instead of mpremote's 10 ms sleeps, the same contract
(the ending, the timeout between bytes, the overall timeout, nothing read past the ending)."""

import threading
import time

import pytest

from host_tools.deploy import transport


def _transport():
    t = transport._transport_class()("loop://", baudrate=115200, timeout=10)
    t.serial = transport._Deadline(t.serial)
    return t


def _no_sleep(s):
    raise AssertionError("read_until slept %s s instead of waiting on the port" % s)


def test_a_late_answer_is_read_as_it_comes_without_sleeping(monkeypatch):
    """The answer comes 50 ms after the wait began (a board busy compiling the command):
    read_until waits on the port, never in time.sleep (mpremote's own sleeps 10 ms whenever no
    byte is waiting: half of a deploy to an emulated Pico), and reads nothing past the ending."""
    t = _transport()
    monkeypatch.setattr(transport.time, "sleep", _no_sleep)
    timer = threading.Timer(0.05, t.serial.write, (b"OK\x04rest",))
    timer.start()
    try:
        assert t.read_until(1, b"\x04") == b"OK\x04"
        assert t.serial.read(4) == b"rest"
    finally:
        timer.cancel()
        t.close()


def test_each_byte_goes_to_the_consumer_and_the_ending_ends_it():
    t = _transport()
    got = []
    t.serial.write(b"ab\x04c")
    try:
        assert t.read_until(1, b"\x04", data_consumer=got.append) == b"\x04"
        assert got == [b"a", b"b", b"\x04"]
        assert t.serial.read(1) == b"c"
    finally:
        t.close()


@pytest.mark.parametrize("kw", [{"timeout": 0.2}, {"timeout": 10, "timeout_overall": 0.2}])
def test_a_silent_port_ends_the_wait_at_its_timeout(kw):
    """No byte: back after the timeout between bytes, or the overall one (not the port's 10 s),
    with what came."""
    t = _transport()
    t.serial.write(b"no end")
    try:
        t0 = time.monotonic()
        assert t.read_until(1, b">", **kw) == b"no end"
        assert 0.15 < time.monotonic() - t0 < 5
    finally:
        t.close()


def test_the_operations_deadline_still_ends_a_read():
    """A device that never answers: the read gives up at the operation's deadline."""
    from mpremote.transport import TransportError

    t = _transport()
    t.serial.deadline = time.monotonic() + 0.1
    try:
        with pytest.raises(TransportError):
            t.read_until(1, b">", timeout=None)
    finally:
        t.close()
