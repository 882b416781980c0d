"""The RFID shoe's boot on the emulated Pico (the `.mpy` deploy, the default wiring) leaves at
least 20 qstrs of room in its last qstr pool: the next name interned past it allocates the next
pool (7.7 KB at that size, docs/hardware.md section 8).

How the margin is computed: MicroPython (py/qstr.c, the same in the unix and rp2 ports) keeps
the names it interns at run time in pools chained after the firmware's const pool, whose `alloc`
is 10 (the frozen pool's too: tools/mpy-tool.py); each new pool has twice the entries of the one
before, so the n-th run-time pool holds 20 * 2**(n-1) and n pools hold 20 * (2**n - 1).
`micropython.qstr_info()` prints n_pool (run-time pools only) and n_qstr (names in them): the
margin is 20 * (2**n_pool - 1) - n_qstr. tests/firmware/test_qstr_pools.py checks that rule on
the unix port (interning until a pool is added)."""

import re

from host_tools.sim import emu as _emu

MARGIN = 20


def margin(text):
    m = re.search(r"n_pool=(\d+), n_qstr=(\d+)", text)
    assert m, text
    n_pool, n_qstr = int(m.group(1)), int(m.group(2))
    return 20 * (2**n_pool - 1) - n_qstr, n_pool, n_qstr


def test_the_rfid_boot_leaves_room_in_the_last_qstr_pool(pico_shoe):
    dev = _emu.service_repl(pico_shoe)  # service jumper: main.py builds, the REPL is ours
    with dev:
        # the app as main.py's run() makes it (REPL names that are already interned)
        out = dev.run(
            "import main, gc, micropython\nhw = main.build()\nfrom shoe import app\n"
            "app = app.App(hw)\napp.boot()\ngc.collect()\nmicropython.qstr_info()\n"
            "print('free', gc.mem_free())\n",
            "qstr_info",
        )
    room, n_pool, n_qstr = margin(out)
    print(
        "RFID boot on the emulated Pico: %d qstrs in %d pools, %d of room; %s"
        % (n_qstr, n_pool, room, out.strip().splitlines()[-1])
    )
    assert room >= MARGIN, (n_pool, n_qstr, room)
