"""MicroPython side of tests.mpy.run_checks: run every check of a script in turn, whatever the
others did, and print one JSON line per check, so pytest can give each its own test.

    from mpycheck import run
    run([check_a, check_b, ("b_with_uid4", lambda: check_b(UID4))])

Each line: {"ran": name, "ok": true} or {"ran": name, "ok": false, "error": "<traceback>"};
the last line {"done": n}. A check's own data lines ({"check": ...}) come before its result.
"""

import gc
import io
import json
import sys

import micropython


def _name(c):
    if isinstance(c, tuple):
        return c[0], c[1]
    n = c.__name__
    return (n[6:] if n.startswith("check_") else n), c


def _unlock():
    """Unlock the heap if a failing check left it locked (heap_lock(); assert ...)."""
    for _ in range(8):
        try:
            bytearray(8)
            return
        except MemoryError:
            micropython.heap_unlock()


def run(checks):
    n = 0
    for c in checks:
        name, fn = _name(c)
        try:
            fn()
            print(json.dumps({"ran": name, "ok": True}))
        except Exception as e:  # noqa: BLE001 (every failure is reported, then the next check)
            _unlock()
            buf = io.StringIO()
            sys.print_exception(e, buf)
            print(json.dumps({"ran": name, "ok": False, "error": buf.getvalue()}))
        n += 1
        gc.collect()
    print(json.dumps({"done": n}))
