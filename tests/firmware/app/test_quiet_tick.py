"""The ticker's pace (App.next_tick, under MicroPython): 20 ms while anything is under way, 100
ms once the shoe is quiet. On the emulated Pico an idle .mpy shoe ticking every 20 ms kept the
chip ~10 % busy (bench/bench_pico_idle.py); the card path never waits for the ticker."""

from tests.firmware.app.appscript import CLOCKED_APP, run_clocked

SCRIPT = (
    CLOCKED_APP
    + r"""
app.boot()
out = {}
T[0] += 5000
app._prefetch = iter(())               # (a configured table's boot sets it: App._warm)
out["prefetching"] = app.next_tick()   # the first round's imports are made tick by tick
app._prefetch = None
out["hello_owed"] = app.next_tick()    # no host has answered: the first HELLO is owed
app.pump()                             # it goes out (the next, if no host answers, in 600 ms)
out["quiet"] = app.next_tick()         # the boot's events wait for a session: no timer
app.link.up = True                     # (as if a host had come)
out["boot_events"] = app.next_tick()   # in a session: they wait for its ack
app.link._txq = []                     # (as if the host had acknowledged them)
out["acked_boot"] = app.next_tick()
T[0] += 5000
app.on_read("card", card_code(5))      # a card out of any round: an event for the host
out["after_card"] = app.next_tick()
T[0] += 5000
out["event_unacked"] = app.next_tick() # its event waits for the host's ack
app.link._txq = []                     # (as if the host had acknowledged it)
out["acked"] = app.next_tick()
app._read_ms = T[0] - 999
out["card_999ms_ago"] = app.next_tick()
app._read_ms = T[0] - 1001
out["card_1001ms_ago"] = app.next_tick()
n, steps = 10, 0
app._slept = 100                       # the ticker slept quiet ticks: each counts 5
while steps < 10:                      # towards the table's own tick
    n = app.tick(n)
    steps += 1
    if n == 10:                        # the table's tick came: _TABLE_TICKS again
        break
out["table_tick_after_quiet_ticks"] = steps
print(json.dumps(out))
"""
)


def test_the_ticker_slows_down_only_when_nothing_is_under_way(tmp_path, fw_build):
    r = run_clocked(tmp_path, fw_build, SCRIPT)
    assert r["prefetching"] == 20, r
    assert r["hello_owed"] == 20 and r["quiet"] == 100, r
    assert r["boot_events"] == 20 and r["acked_boot"] == 100, r
    assert r["after_card"] == 20 and r["event_unacked"] == 20 and r["acked"] == 100, r
    assert r["card_999ms_ago"] == 20 and r["card_1001ms_ago"] == 100, r
    # a quiet tick counts five towards the table's own tick (every 10 ticks: 200 ms)
    assert r["table_tick_after_quiet_ticks"] == 2, r
