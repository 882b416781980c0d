"""One step of a scripted table session at time `now`, the same under CPython (test_state,
test_micropython) and under MicroPython (mpy_table.py, which finds this file on its path):
["cmd", kind, body(, role)] | ["card", serial, back, id] | ["reject", reason] | ["tick"] (at
now + 10). A refused command raises CommandError to the caller. A command's role is the
supervisor's unless the step names one (tests/firmware/test_roles.py names them)."""


def apply(t, st, now):
    if st[0] == "cmd":
        t.command(st[1], st[2], now, st[3] if len(st) > 3 else "supervisor")
    elif st[0] == "card":
        t.card(st[1], st[2], st[3], now)
    elif st[0] == "reject":
        t.reject(st[1], now)
    else:
        t.tick(now + 10)
