"""What many test files share: waiting on a condition, and a virtual board with a host link.

    wait_for(cond, timeout, what)        poll until cond() is true; its value, or AssertionError
    with virtual_board(state) as board:  demo keys in `state`, the real firmware booted (SimBoard)
    with host_link(url, audit=...) as l: a ShoeLink with the demo keys, closed afterwards
    built_once(tmp_path_factory, name, build)
                                         a directory made once for the whole run (all workers)

The fixtures built on them (`sim_board`, `board_link`) are in tests/conftest.py.
"""

import contextlib
import fcntl
import json
import os
import shutil
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
            raise AssertionError(
                "timed out after %.1f s waiting for %s"
                % (timeout, what() if callable(what) else what)
            )
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


def built_once(tmp_path_factory, name, build):
    """A directory `name` that build(dir) fills once for the whole test run, shared by every
    pytest-xdist worker (the first to ask builds it under a lock, the others wait for it and read
    it): for expensive read-only fixtures (the deployed emulated Pico's flash). build returns a
    JSON-able dict; built_once returns it (to each worker) with "dir" added."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's directory, above popen-gw0, popen-gw1 ..
    d = base / name
    with open(base / (name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (also if build fails)
        done = d / "built.json"
        if not done.exists():
            shutil.rmtree(d, ignore_errors=True)  # a build that failed half-way
            d.mkdir()
            done.write_text(json.dumps(build(d)))
        return dict(json.loads(done.read_text()), dir=str(d))
