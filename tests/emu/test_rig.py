"""The rig closes the gaps of stock rp2040js: flash program/erase (persisted, timed, power cuts
inside a write), unique id, reset. Runs the stock MicroPython UF2 (no firmware of ours)."""

import contextlib
import os
import random
import socket
import threading
import time

import pytest

from host_tools.deploy import Device
from host_tools.errors import ShoeError


def repl(emu, timeout=20.0):
    return Device(emu.urls["repl"], timeout=timeout, op_timeout=120.0)


@contextlib.contextmanager
def far_end(emu, uart, script):
    """The far end of the rig's `uart` (a socket) while `script` runs at the chip's REPL in a
    thread: yields (socket, out); out["got"] is what the script printed, once the block ends."""
    host, port = emu.urls[uart][len("socket://") :].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as s, repl(emu) as dev:
        s.settimeout(120)
        out = {}
        t = threading.Thread(target=lambda: out.update(got=dev.run(script)))
        t.start()
        yield s, out
        t.join(300)


def test_flash_is_a_filesystem_that_survives_a_power_cut(emulator):
    with repl(emulator) as dev:
        st = dev.value("os.statvfs('/')")
        uid = dev.value("machine.unique_id()")
        dev.write_file("kept.txt", b"dealt before the power cut\n" * 40)
    assert st[0] == 4096 and st[2] > 300  # littlefs on the 1.4 MB filesystem region
    assert uid != bytes(8)
    emulator.power_cut()  # SIGKILL: no goodbye, no flush
    emulator.start()
    with repl(emulator) as dev:
        assert dev.value("open('kept.txt','rb').read()") == b"dealt before the power cut\n" * 40
        assert dev.value("machine.unique_id()") == uid


def test_program_and_erase_cost_emulated_time(emulator):
    with repl(emulator) as dev:
        before = emulator.control("flash")
        us = int(
            dev.run(
                "import time\nt0 = time.ticks_us()\nf = open('t.bin', 'wb')\n"
                "f.write(bytes(20000))\nf.close()\n"
                "print(time.ticks_diff(time.ticks_us(), t0))"
            )
        )
        after = emulator.control("flash")
    erases = after["erases"] - before["erases"]
    pages = after["pages"] - before["pages"]
    assert erases >= 4 and pages >= 78
    # W25Q16JV typical: 45 ms per 4 KB sector erase, 0.4 ms per page program
    assert us >= erases * 45000 + pages * 400


def test_power_cut_in_the_middle_of_a_flash_write_loses_nothing_committed(emulator):
    rng = random.Random(int(os.environ.get("SHOE_EMU_SEED", "5")))
    with repl(emulator) as dev:
        dev.write_file("ledger.txt", b"A" * 3000)
        emulator.control("cut", after=rng.randrange(0, 6))
        with pytest.raises(ShoeError):
            dev.write_file("ledger.txt", b"B" * 3000)  # the power goes during this write
    assert emulator.wait_dead(60), "the rig did not cut the power inside the flash write"
    emulator.start()
    with repl(emulator) as dev:
        got = dev.value("open('ledger.txt','rb').read()")
        assert got in (b"A" * 3000, b"B" * 3000)  # the old file or the new, never a mix
        assert dev.value("os.statvfs('/')")[3] > 0


def test_machine_reset_recreates_the_chip_on_the_same_flash(emulator):
    with repl(emulator) as dev:
        dev.write_file("x.txt", b"still here")
        dev.op_timeout = 3.0  # the REPL goes away with the reset
        with pytest.raises(ShoeError):
            dev.run("machine.reset()")
    deadline = time.monotonic() + 60
    while emulator.control("stats")["resets"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    with repl(emulator) as dev:
        assert dev.value("open('x.txt').read()") == "still here"


def test_an_unfed_watchdog_resets_the_chip_and_the_rig_goes_on(emulator):
    """machine.WDT not fed: the chip is reset (cause watchdog) and the control channel keeps
    answering; stock rp2040js re-armed the expired alarm at the same instant and the rig hung."""
    with repl(emulator) as dev:
        dev.op_timeout = 3.0
        dev.run("import machine\nw = machine.WDT(timeout=1000)")
    deadline = time.monotonic() + 120
    while emulator.control("stats")["resets"] < 1:
        assert time.monotonic() < deadline, "no reset after the watchdog ran out"
        time.sleep(0.2)
    assert emulator.control("stats")["reset_causes"].get("watchdog", 0) >= 1
    assert emulator.control("clock")["ns"] > 0  # still answering
    # where the starved chip was (control `watchdog`): its registers and the return addresses on
    # its stack, in flash, for addr2line on the image's ELF
    dog = emulator.control("watchdog")["starved"]
    assert dog and dog[0]["stack"], dog
    assert all(0x10000000 <= a < 0x10200000 and a & 1 for a in dog[0]["stack"]), dog
    with repl(emulator) as dev:
        assert dev.value("1 + 1") == 2


def test_a_card_put_down_while_the_chip_sleeps_wakes_it_before_later_alarms(emulator):
    """An alarm due at once (a card put down while the chip sleeps) is taken, and the chip runs,
    before the clock moves on. The rig took "due now" for "no alarm" and moved the clock by the
    whole of its lag behind the wall clock in one tick, firing every alarm on the way with the
    chip asleep: a shoe feeding its watchdog every few ms was reset by it (the optical reader's
    50-round soak, bench_pico's 200 rounds). Here the chip feeds a 500 ms watchdog every ~3 ms
    of its time for 5 s, mostly busy (so it lags the wall clock), while cards are put down."""
    import sys
    import threading

    prog = (
        "import machine, time\nw = machine.WDT(timeout=500)\n"
        "end = time.ticks_add(time.ticks_ms(), 5000)\n"
        "while time.ticks_diff(end, time.ticks_ms()) > 0:\n"
        "    w.feed()\n    t = time.ticks_us()\n"
        "    while time.ticks_diff(time.ticks_us(), t) < 2000:\n        pass\n"
        "    time.sleep_ms(1)\n"
        "print('fed')\n"
    )
    out = []
    with repl(emulator) as dev:

        def feed():
            try:
                out.append(dev.run(prog))
            except ShoeError as e:  # the REPL went away with a reset
                out.append(str(e))

        t = threading.Thread(target=feed, daemon=True)
        t.start()
        cards = 0
        deadline = time.monotonic() + 300
        while t.is_alive() and time.monotonic() < deadline:
            emulator.control("card", reader="optical", code="X", pitch_ms=0, beam=False)
            cards += 1
            time.sleep(0.003)
        t.join(60)
    # (dev.run swaps sys.stdout while it runs: nothing printed here meanwhile)
    print("%d cards put down" % cards, file=sys.__stderr__)
    assert cards > 50
    assert out and out[0].strip() == "fed", (out, emulator.control("stats")["reset_causes"])


def test_shoectl_emu_prints_the_urls_and_stops_the_chip_on_sigterm(tmp_path):
    import re
    import signal
    import socket
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.Popen(
        [sys.executable, "-m", "host_tools", "emu", "--state", str(tmp_path / "s")],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
    )
    lines = [p.stdout.readline() for _ in range(5)]
    urls = dict(
        re.findall(
            r"^(USB REPL|UART0 \(host\)|control):\s+socket://127.0.0.1:(\d+)", "".join(lines), re.M
        )
    )
    assert set(urls) == {"USB REPL", "UART0 (host)", "control"}
    pid = int(re.search(r"pid (\d+)", lines[0]).group(1))
    with socket.create_connection(("127.0.0.1", int(urls["control"])), timeout=10) as c:
        c.sendall(b'{"op": "clock"}\n')
        assert b'"ns"' in c.recv(1000)
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 0
    with pytest.raises(OSError):
        os.kill(pid, 0)  # the emulator went with it
    assert (tmp_path / "s" / "flash.bin").stat().st_size == 2 * 1024 * 1024


ERASE_WHILE_RECEIVING = """
import machine, rp2
u = machine.UART(0, 115200, tx=machine.Pin(0), rx=machine.Pin(1), rxbuf=1024, **FLOW)
f = rp2.Flash()
last = f.ioctl(4, 0) - 1          # the filesystem's last block: free on a fresh board
u.read()
u.write(b"R")                     # ready: the host sends its burst now
while not u.any():
    pass
f.ioctl(6, last)                  # a 4 KB sector erase: 45 ms with interrupts off
t0 = time.ticks_ms()
got = 0
while time.ticks_diff(time.ticks_ms(), t0) < 200:
    n = u.any()
    if n:
        got += len(u.read(n))
print(got)
"""


@pytest.mark.parametrize(
    "uart_rx,flow", [(None, ""), ("hold", ""), (None, "rts")], ids=["overrun", "hold", "rts"]
)
def test_a_flash_erase_with_interrupts_off_overruns_the_uart_receive_fifo(tmp_path, uart_rx, flow):
    """Issue 19 item 2: the chip erases flash with interrupts off, so nothing empties a UART's
    32-byte receive FIFO meanwhile. A 200-byte host burst (17 ms at 115200 baud) that starts as
    a sector erase (45 ms) begins: on the chip all but the FIFO's 32 bytes (and what came before
    the erase) are lost and the overrun flag is set; the rig counts them (rx_overrun). The
    rig's older model (--uart-rx hold) let them wait and lost nothing, which no real UART does.
    With hardware flow control (`flow=UART.RTS`, as the Pico's wiring sets UART0 since
    2026-12-04: GP3 to the adapter's CTS) the UART holds RTS off while its FIFO is full and the
    host waits: all 200 bytes arrive, none overrun."""
    import socket
    import threading

    from host_tools.sim import emu as _emu

    with _emu.Emulator(tmp_path / "pico", uart_rx=uart_rx) as emu:
        host, port = emu.urls["uart0"][len("socket://") :].rsplit(":", 1)
        with socket.create_connection((host, int(port))) as s, repl(emu) as dev:
            s.settimeout(120)
            out = {}
            t = threading.Thread(
                target=lambda: out.update(
                    got=dev.run(
                        "import time, machine\nFLOW = %s\n"
                        % ("dict(rts=machine.Pin(3), flow=machine.UART.RTS)" if flow else "{}")
                        + ERASE_WHILE_RECEIVING
                    )
                ),
                daemon=True,
            )
            t.start()
            assert s.recv(1) == b"R"
            s.sendall(bytes(range(200)))
            t.join(300)
            got = int(out["got"].strip())
            stats = emu.control("stats")
            rsr = dev.value("machine.mem32[0x40034004] & 8")  # UART0 UARTRSR.OE
    if uart_rx == "hold" or flow:
        assert got == 200 and stats["rx_overrun"] == [0, 0]  # nothing lost (the old lie; RTS)
        assert rsr == 0
    else:
        assert got < 200 and stats["rx_overrun"][0] == 200 - got, (got, stats["rx_overrun"])
        assert got >= 32 and rsr == 8


LINES_IN_CHIP_TIME = """
import machine, time
u = machine.UART(1, 9600, tx=machine.Pin(4), rx=machine.Pin(5), rxbuf=256)
u.read()
u.write(b"R")                     # ready: the host writes its lines now
got, buf, t0 = [], b"", time.ticks_ms()
while len(got) < 3 and time.ticks_diff(time.ticks_ms(), t0) < 30000:
    n = u.any()                   # busy: the chip never idles, so its clock lags the wall's
    if n:
        buf += u.read(n)
        while b"\\n" in buf:
            buf = buf[buf.index(b"\\n") + 1:]
            got.append(time.ticks_ms())
            u.write(b"A")         # got it: the host waits for this before its pause
print(got)
"""


def test_lines_a_host_paces_reach_the_reader_uart_at_that_pace_in_the_chips_time(emulator):
    """`shoectl world --pace 0.4` writes a card line on UART1 every 0.4 s of wall time. A busy
    chip's clock runs slower than the wall's, so those lines used to reach it about 0.1 s apart
    in its own time, back to back at the baud rate: a dealer several times too fast (the
    README's by-hand deck check lost lines to the FIFO during a flash erase and stalled). The
    rig keeps the host's spacing, up to half a second: each line starts no sooner, in the
    chip's time, than the previous one plus the wall time between them. The host pauses 0.4 s
    after the chip has a line (its answer), so the rig's own view of the gap is at least 0.4 s
    however late a loaded machine runs the rig's socket handler (a loaded run measured the
    pause from a late first arrival: 375 ms)."""
    with far_end(emulator, "uart1", LINES_IN_CHIP_TIME) as (s, out):
        assert s.recv(1) == b"R"
        for i in range(3):
            if i:
                time.sleep(0.4)  # the host's pace (the stimulus), not a wait on the chip
            s.sendall(b"CARD%d\r\n" % i)
            assert s.recv(1) == b"A"  # the chip has the line: the pause starts after it
    got = [int(x) for x in out["got"].strip().strip("[]").split(",")]
    assert len(got) == 3, got
    gaps = [b - a for a, b in zip(got, got[1:])]
    assert min(gaps) >= 380, gaps  # ms of the chip's clock between the lines


def test_rate_holds_the_chip_to_that_fraction_of_real_time(tmp_path):
    """`--rate 0.1` (SHOE_EMU_RATE): the chip, booted and idle at its REPL, never runs more than
    a tenth of real time (a flash erase's 45 ms may jump ahead for a moment: the bound allows
    that much). Without the rate the same idle chip keeps level with the wall clock, far ahead
    of a tenth of it, however loaded the machine (idle time costs the rig nothing)."""
    from host_tools.sim import emu as _emu

    def ahead(emu, seconds=2.0):
        """The most the chip's clock got ahead of a tenth of the rig's wall clock (ns)."""
        worst = -1e18
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            st = emu.control("stats")
            worst = max(worst, st["ns"] - 0.1 * st["wall_ns"])
            time.sleep(0.1)
        return worst

    with _emu.Emulator(tmp_path / "slow", rate=0.1) as slow:
        with repl(slow, timeout=120) as dev:  # booted: from here the chip idles at its REPL
            assert dev.value("1 + 1") == 2
        slow_ahead = ahead(slow)
    with _emu.Emulator(tmp_path / "free") as free:
        with repl(free, timeout=120) as dev:
            assert dev.value("1 + 1") == 2
        free_ahead = ahead(free)
    assert slow_ahead <= 50e6, "ran %.0f ms ahead of a tenth of real time" % (slow_ahead / 1e6)
    assert free_ahead >= 500e6, "without the rate: %.0f ms" % (free_ahead / 1e6)


BUSY_WAITS = (
    "import time\n"
    "def waits(us, n):\n"
    "    out = []\n"
    "    for _ in range(n):\n"
    "        t = time.ticks_us()\n"
    "        time.sleep_us(us)\n"
    "        out.append(time.ticks_diff(time.ticks_us(), t))\n"
    "    return out\n"
)


@pytest.mark.parametrize("fast", ["1", "0"], ids=["skipped", "run"])
def test_a_busy_wait_takes_its_time_on_the_chip_whether_the_rig_runs_it_or_not(
    tmp_path, monkeypatch, fast
):
    """time.sleep_us spins in mp_hal_delay_us (the RFID driver's waits for the air): the rig
    moves the clock to the loop's end instead of running it (rig.js skipWait), and the chip
    measures the same time as when the loop runs (SHOE_EMU_FASTWAIT=0), busy all along."""
    from host_tools.sim import emu as _emu

    monkeypatch.setenv("SHOE_EMU_FASTWAIT", fast)
    with _emu.Emulator(tmp_path / "pico") as e:
        with repl(e, timeout=120) as dev:
            dev.run(BUSY_WAITS)
            s0 = e.control("stats")
            got = dev.value("waits(700, 20)")
            s1 = e.control("stats")
    assert all(700 <= d <= 800 for d in got), got
    assert s1["busy_ns"] - s0["busy_ns"] >= 20 * 700_000  # a spin is busy time either way
    skipped = s1["wait_skipped_ns"] - s0["wait_skipped_ns"]
    if fast == "1":
        assert s1["fast_wait"] and skipped >= 20 * 600_000, (skipped, s1["wait_skips"])
    else:
        assert not s1["fast_wait"] and skipped == 0


WRITE_2000 = """
import machine, time
u = machine.UART(0, 115200, tx=machine.Pin(0), rx=machine.Pin(1), txbuf=%d, timeout=0)
while not u.txdone():
    pass
data = memoryview(bytes(range(250)) * 8)
t0 = time.ticks_us()
n = u.write(data) or 0
t1 = time.ticks_us()
k = n
while k < len(data):   # what did not fit (as App.pump keeps it for its next call)
    k += u.write(data[k:]) or 0
while not u.txdone():
    pass
print([n, time.ticks_diff(t1, t0), time.ticks_diff(time.ticks_us(), t0)])
"""


@pytest.mark.parametrize("txbuf", [256, 4096])
def test_uart_transmit_takes_its_time_on_the_wire_and_a_write_waits_for_room(emulator, txbuf):
    """The chip's UART sends a byte every 10 bit times (87 us at 115200 baud) from a 32-byte
    FIFO refilled from the transmit buffer by its interrupt; stock rp2040js sent every byte the
    instant it was written, so a write never found the buffer full. A write that does not fit
    (ports/rp2/machine_uart.c, timeout=0) waits for room and returns what it took once none
    comes within timeout_char: with the rp2 port's default 256 bytes a 2,000-byte write (a
    status reply is ~750) takes part and the rest waits for App.pump's next call; the Pico's
    wiring gives UART0 4 KB, and it is taken whole at once. The host gets every byte in order."""
    import json
    import socket

    host, port = emulator.urls["uart0"][len("socket://") :].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as s, repl(emulator) as dev:
        s.settimeout(120)
        took, write_us, all_us = json.loads(dev.run(WRITE_2000 % txbuf).strip().splitlines()[-1])
        got = b""
        while len(got) < 2000:
            got += s.recv(4096)
    assert got == bytes(range(250)) * 8
    assert all_us >= 2000 * 86 and all_us < 2000 * 86 * 1.2, all_us  # the wire's own pace
    if txbuf == 256:
        assert 256 <= took < 2000 and write_us >= 1000, (took, write_us)  # waited, took part
    else:
        assert took == 2000 and write_us < 10_000, (took, write_us)


FRAMES = """
import machine
u = machine.UART(0, 115200, tx=machine.Pin(0), rx=machine.Pin(1), txbuf=1024, timeout=0)
while not u.txdone():
    pass
u.write(b"\\x00" + b"A" * 20 + b"\\x00" + b"B" * 120 + b"\\x00")
while not u.txdone():
    pass
print("sent")
"""


def _frames_of(emulator, code, nbytes):
    """Run `code` at the REPL, read its `nbytes` on UART0's socket -> the rig's frame log of them
    ([start ns, bytes, end ns] each)."""
    import socket

    host, port = emulator.urls["uart0"][len("socket://") :].rsplit(":", 1)
    t0 = emulator.clock_ns()
    with socket.create_connection((host, int(port))) as s, repl(emulator) as dev:
        s.settimeout(120)
        assert dev.run(code).strip().endswith("sent")
        got = b""
        while len(got) < nbytes:
            got += s.recv(4096)
    return emulator.control("uart_log", uart=0, since=t0)["frames"]


def test_the_uart_log_gives_each_frame_its_start_size_and_end(emulator):
    """bench_pico.py tells a card's frame from the acknowledgements and heartbeats around it by
    its size on the wire, and sees when its last byte left (a frame the chip stopped feeding
    half way, its interrupts off for a flash erase, ends late): the rig logs each link frame,
    from its first byte after a 0x00 to the 0x00 closing it, with its first byte's time, its
    bytes and when its last byte has left the wire."""
    frames = _frames_of(emulator, FRAMES, 143)
    assert [n for _, n, _ in frames] == [21, 121], frames
    (s1, _, e1), (s2, _, e2) = frames
    byte = 86_806  # ns: 10 bits at 115200 baud
    assert s2 - s1 == pytest.approx(21 * byte, rel=0.02)
    assert e1 - s1 == pytest.approx(21 * byte, rel=0.02)
    assert e2 - s2 == pytest.approx(121 * byte, rel=0.02)


STALLED = """
import machine, rp2
f = rp2.Flash()
u = machine.UART(0, 115200, tx=machine.Pin(0), rx=machine.Pin(1), txbuf=1024, timeout=0)
while not u.txdone():
    pass
u.write(b"\\x00" + b"C" * 200 + b"\\x00")
f.ioctl(6, f.ioctl(4, 0) - 1)   # a sector erase: interrupts off for its 45 ms
while not u.txdone():
    pass
print("sent")
"""


def test_a_frame_the_chip_stops_feeding_during_an_erase_ends_late(emulator):
    """The transmit FIFO holds 32 bytes; the rest of a frame waits in the ring buffer for the
    TX interrupt, which a flash erase holds off: the frame is one frame on the wire, ending
    ~45 ms later than its bytes alone would."""
    frames = _frames_of(emulator, STALLED, 202)
    assert [n for _, n, _ in frames] == [201], frames
    (s1, _, e1) = frames[0]
    assert e1 - s1 > 201 * 86_806 + 40e6, frames  # its bytes' own time and most of the erase


WOKEN_BY_THE_UART = """
import machine, select, time
u = machine.UART(1, 9600, tx=machine.Pin(4), rx=machine.Pin(5), rxbuf=256)
u.read()
p = select.poll()
p.register(u, select.POLLIN)
got = []
for n in (3, 10):
    u.write(b"R")                 # ready: the host sends a burst of n bytes now
    t = time.ticks_ms()
    p.poll(20000)                 # asleep (WFE) until an interrupt wakes the chip
    got.append(u.any())           # what the FIFO held when it did
    got.append(time.ticks_diff(time.ticks_ms(), t) < 10000)   # woken, not timed out
    time.sleep_ms(30)             # the rest of the burst
    u.read()
print(got)
"""


@pytest.mark.parametrize("irq", [None, "byte"], ids=["level", "byte"])
def test_a_chip_asleep_on_a_uart_wakes_at_its_fifo_level_or_its_receive_timeout(tmp_path, irq):
    """The PL011 raises its receive interrupt when the FIFO holds its trigger level (pico-sdk's
    4 bytes) and its receive-timeout interrupt once a byte has waited 32 bit periods (3.3 ms at
    9,600 baud) with none after it; a chip asleep in select.poll (the shoe's asyncio loop
    between cards) wakes on those only. So a 3-byte burst wakes it with all 3 in the FIFO (at
    the timeout), a 10-byte one with 4 (at the level). Stock rp2040js (--uart-rx-irq byte)
    raised the interrupt at every byte: 1 and 1, a chip more awake than the real one."""
    import ast

    from host_tools.sim import emu as _emu

    with _emu.Emulator(tmp_path / "pico", uart_rx_irq=irq) as emu:
        with far_end(emu, "uart1", WOKEN_BY_THE_UART) as (s, out):
            for n in (3, 10):
                assert s.recv(1) == b"R"
                s.sendall(bytes(range(65, 65 + n)))
    got = ast.literal_eval(out["got"].strip())
    # (and woken each time, the 3-byte burst by the receive timeout: no poll ran out)
    assert got == ([3, True, 4, True] if irq is None else [1, True, 1, True]), got


def test_a_card_line_arrives_at_the_readers_baud_rate(emulator):
    """A card put down (control `card`, optical) reaches UART1 a byte time apart, as a code
    reader at 9,600 baud sends it: its 17th and last byte 16 byte times (16.7 ms) after its first.
    The rig queued the line's bytes as due since the last line's, so after any pause the chip
    had the whole line at once and parsed it after its last byte: card -> frame counted that
    parsing, which on a real wire happens while the line is still arriving."""
    with repl(emulator) as dev:
        dev.run(
            "import machine\nu = machine.UART(1, 9600, tx=machine.Pin(4), rx=machine.Pin(5), "
            "rxbuf=256)\nu.read()\n"
        )
        dev.run("import time\ntime.sleep_ms(300)\n")  # a pause: the last line long gone
        start = emulator.control(
            "card", reader="optical", code="3A7FR3d9019256f", pitch_ms=0, beam=False
        )["ns"]
        got = dev.run(
            "t = time.ticks_ms()\nb = b''\n"
            "while not b.endswith(b'\\n') and time.ticks_diff(time.ticks_ms(), t) < 5000:\n"
            "    b += u.read() or b''\nprint(len(b))\n"
        )
        rx = emulator.control("uart_log", uart=1, since=start)["rx"]
    assert int(got.strip()) == 17
    byte_ns = 10e9 / 9600
    # the first byte is in the FIFO when the line starts, each next one a byte time later
    assert rx and 15.5 * byte_ns <= rx[0] - start <= 17 * byte_ns, (rx, start)
