"""The optical code-reader driver under MicroPython, against the fake UART
(tests/fakes/machine.py)."""

from tests.mpy import json_lines, run_code

# a reader on the fake UART with a clock the script sets (T[0]); tests/security shares it
READER = """
import json, micropython
from machine import UART
from shoe.drivers.optical import OpticalReader
T = [0]
def ticks(): return T[0]
def diff(a, b): return a - b
u = UART(1)
r = OpticalReader(u, dedup_ms=250, ticks_ms=ticks, ticks_diff=diff)
"""
PRELUDE = (
    READER
    + """
def drain():
    out = []
    while True:
        x = r.poll()
        if x is None:
            return out
        out.append([x[0], x[1].decode()])
"""
)


def run(body):
    return json_lines(run_code(PRELUDE + body))


def test_codes_noread_and_garbage_are_classified():
    out = run("""
u.inject(b"3A7FRAs1d52a21b\\r\\nNOREAD\\r\\n\\r\\n3A7F\\x01s1d\\r\\n")
print(json.dumps(drain()))
print(json.dumps(r.stats()))
""")
    assert out[0] == [["card", "3A7FRAs1d52a21b"], ["noread", ""], ["garbled", "3A7F\x01s1d"]]
    assert out[1]["lines"] == 3 and out[1]["noreads"] == 1 and out[1]["garbled"] == 1


def test_double_read_inside_the_window_is_one_card_outside_it_two():
    out = run("""
u.inject(b"3A7FRAs1d52a21b\\r\\n3A7FRAs1d52a21b\\r\\n")
a = drain()
T[0] = 100
u.inject(b"3A7FRAs1d52a21b\\n")
b = drain()
T[0] = 400
u.inject(b"3A7FRAs1d52a21b\\n")
c = drain()
print(json.dumps([len(a), len(b), len(c), r.double_reads]))
""")
    assert out[0] == [1, 0, 1, 2]


def test_lines_split_across_reads_and_overlong_lines():
    out = run("""
u.inject(b"3A7FRA")
a = drain()
u.inject(b"s1d52a21b\\r")
b = drain()
u.inject(b"\\n" + b"X" * 200 + b"\\nNOREAD\\n")
c = drain()
print(json.dumps([a, b, [k for k, _ in c], r.overflows]))
""")
    assert out[0] == [[], [["card", "3A7FRAs1d52a21b"]], ["garbled", "noread"], 1]


def test_line_assembly_allocates_nothing():
    # Bytes arriving that do not finish a line: the driver must not touch the heap.
    out = run("""
u.inject(b"3A7FRAs1d52a2")
r._fill()
step = r._next_line          # bind first: creating a bound method allocates
micropython.heap_lock()
try:
    done = step()
finally:
    micropython.heap_unlock()
print(json.dumps([done, r._len]))
""")
    assert out[0] == [False, 13]


def test_async_read_waits_for_data():
    out = run("""
import asyncio
async def feeder():
    await asyncio.sleep_ms(5)
    u.inject(b"NOREAD\\r\\n")
async def main():
    asyncio.create_task(feeder())
    return await r.read()
k, d = asyncio.run(main())
print(json.dumps([k, d.decode()]))
""")
    assert out[0] == ["noread", ""]


def test_a_line_is_read_as_it_arrives_never_waiting_for_more():
    # machine.UART fills the buffer it is given, waiting timeout_char after each byte for the
    # next (2-3 ms at 9600 baud on the rp2 port): every card's line waited so on the emulated
    # Pico. The driver asks for what has arrived (any()) and awaits one byte at a time
    out = run("""
import asyncio
async def feeder():
    for part in (b"3A7F", b"RAs1d5", b"2a21b\\r", b"\\n"):
        await asyncio.sleep_ms(2)
        u.inject(part)
async def main():
    asyncio.create_task(feeder())
    return await r.read()
k, d = asyncio.run(main())
u.inject(b"NOREAD\\r\\n3A7F")
p = drain()
print(json.dumps([k, d.decode(), p, u.stalls, u.any()]))
""")
    assert out[0] == ["card", "3A7FRAs1d52a21b", [["noread", ""]], 0, 0], out


def test_a_lines_last_bytes_below_the_uarts_interrupt_level_are_read_within_a_few_ms():
    """The RP2040 wakes a sleeping chip for a UART when 4 bytes wait or one has waited 32 bit
    periods (3.3 ms at 9,600 baud): a line's last 1-3 bytes could wait that long. While a line
    is arriving the driver looks at every turn of the event loop, for a few ms after its last
    byte; with no line under way it sleeps on the stream."""
    out = run("""
import asyncio, time
u.level = 4   # the chip's interrupt at 4 bytes; the timeout never comes here
r._ticks_ms, r._ticks_diff = time.ticks_ms, time.ticks_diff   # its look is timed: a real clock
async def feeder():
    for part in (b"3A7FRA", b"s1d5", b"2a21", b"b\\r\\n"):   # 6 (read at once), 4, 4, 3
        await asyncio.sleep_ms(4)
        u.inject(part)
        T[0] = time.ticks_ms()
async def main():
    asyncio.create_task(feeder())
    return await asyncio.wait_for_ms(r.read(), 200)
k, d = asyncio.run(main())
late = time.ticks_diff(time.ticks_ms(), T[0])
u.inject(b"NO")   # a line cut off: the driver looks a few ms, then waits on the stream
polls = [0, 0]
_poll = r.poll
t0 = time.ticks_ms()
def counted():
    polls[0] += 1
    polls[1] = time.ticks_diff(time.ticks_ms(), t0)
    return _poll()
r.poll = counted
async def cut():
    try:
        await asyncio.wait_for_ms(r.read(), 100)
    except asyncio.TimeoutError:   # looked at first, then not for the rest of the 100 ms
        return [r._len, polls[0] > 2 and polls[1] < 50]
print(json.dumps([k, d.decode(), late < 50, asyncio.run(cut())]))
""")
    assert out[0] == ["card", "3A7FRAs1d52a21b", True, [2, True]], out


def test_configuration_commands_go_to_the_module():
    out = run("""
r.configure(noread=b"NR", dedup_ms=120)
u.inject(b"NR\\r\\n")
print(json.dumps([u.take().decode(), drain(), r.dedup_ms]))
""")
    assert out[0] == ["$DEDUP=120\r\n$NOREAD=NR\r\n", [["noread", ""]], 120]
