"""What many test files share: waiting on a condition, and a virtual board with a host link.

    wait_for(cond, timeout, what)          poll until cond() is true; its value, or AssertionError
    with virtual_board(state) as board:    demo keys in `state`, the real firmware booted (SimBoard)
    with host_link(url, audit=...) as l:   a ShoeLink with the demo keys, closed afterwards

The fixtures built on them (`sim_board`, `board_link`) are in tests/conftest.py.
"""
import contextlib
import time


# A wait's timeout is a deadline, never a pace: a condition met sooner returns at once, and on a
# loaded machine (two suites on two cores) a correct shoe may take many times its quiet time. So no
# deadline is shorter than this; a smaller `timeout` only says what a quiet machine takes.
MIN_DEADLINE = 60.0


def wait_for(cond, timeout=10.0, what="condition", interval=0.01):
    """Poll `cond` until it returns something true (returned) or fail after `timeout` seconds
    (at least MIN_DEADLINE), naming `what` (a text, or a callable giving one, evaluated only on
    failure)."""
    timeout = max(timeout, MIN_DEADLINE)
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1f s waiting for %s"
                                 % (timeout, what() if callable(what) else what))
        time.sleep(interval)


@contextlib.contextmanager
def virtual_board(state, **kw):
    """The real firmware on the virtual board (host_tools.sim.simboard.SimBoard), provisioned with
    the demo keys in `state`; stopped on exit. kw go to SimBoard (power_returns, service ...)."""
    from host_tools.sim.provision_sim import ensure_demo_keys
    from host_tools.sim.simboard import SimBoard

    ensure_demo_keys(str(state))
    board = SimBoard(str(state), **kw).start()
    try:
        yield board
    finally:
        board.stop()


@contextlib.contextmanager
def host_link(url, *, open_timeout=20.0, **kw):
    """A ShoeLink to `url` with the demo shoe key, opened (unless open_timeout is None) and
    closed on exit. kw go to ShoeLink (audit, supervisor_key, resync_after ...)."""
    from host_tools.link import ShoeLink
    from host_tools.sim.provision_sim import DEMO_KEYS

    link = ShoeLink(url, DEMO_KEYS["shoe"], **kw)
    try:
        if open_timeout is not None:
            link.open(timeout=open_timeout)
        yield link
    finally:
        link.close()

