"""Sensor-driver figures (not a test): SPI transfers and time per RFID read (its HLTA, sent
with the next poll and not waited for, not included), per empty-field poll, and per beam
interrupt, on the MicroPython unix port at a device-sized heap, with the published loop-speed
ratios (RP2040 ~160x, ESP32 ~120x the unix port) as a first estimate.
The SPI wire time (2 bytes per register access at the wiring's 4 MHz) is added separately.

    .venv/bin/python bench/bench_drivers.py
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from host_tools import runtime  # noqa: E402

SCRIPT = r"""
import json, time, machine, micropython
from mfrc522_chip import MFRC522Chip, Tag
from shoe.drivers.mfrc522 import MFRC522
from shoe.drivers.rfid import RFIDReader
from shoe.drivers.beam import Beam
import shoe.drivers.mfrc522 as _m

class NoAir:  # the model has no air time: the driver's sleeps through it are not CPU time
    def sleep_us(us):
        pass
    def sleep_ms(ms):
        pass
    ticks_us = time.ticks_us
    ticks_diff = time.ticks_diff
_m.time = NoAir

class Discard:
    def append(self, v):
        pass
    def clear(self):
        pass

class TimedChip(MFRC522Chip):
    spent = 0
    def transfer(self, tx, rx):
        s = time.ticks_us()
        MFRC522Chip.transfer(self, tx, rx)
        TimedChip.spent += time.ticks_diff(time.ticks_us(), s)

cs = machine.Pin(17, machine.Pin.OUT, value=1)
cs.history = Discard()
field = []
chip = TimedChip(cs=cs, tags=field)
chip.record = False
rd = RFIDReader(MFRC522(machine.SPI(0, device=chip), cs))
rd.poll()
N = 200
t0 = chip.transfers
s = time.ticks_us()
TimedChip.spent = 0
for i in range(N):
    rd.poll()
idle_us = (time.ticks_diff(time.ticks_us(), s) - TimedChip.spent) / N
idle_x = (chip.transfers - t0) / N
total = 0
xfers = 0
for i in range(N):
    tag = Tag.with_code(bytes([4, i & 255, i >> 8, 1, 2, 3, 4]), b"3A7FRAs1d52a21b")
    field.append(tag)
    t0 = chip.transfers
    s = time.ticks_us()
    TimedChip.spent = 0
    r = rd.poll()
    total += time.ticks_diff(time.ticks_us(), s) - TimedChip.spent
    xfers += chip.transfers - t0
    assert r[0] == "card"
    field.remove(tag)
    rd.poll(); rd.poll()
pin = machine.Pin(14, machine.Pin.IN, machine.Pin.PULL_UP)
beam = Beam(pin, machine.Pin.IRQ_FALLING, size=4)
beam.start()
s = time.ticks_us()
for i in range(N):
    beam._on_edge(pin)
    beam.pending()
isr_us = time.ticks_diff(time.ticks_us(), s) / N
print(json.dumps({"idle_us": idle_us, "idle_xfers": idle_x, "read_us": total / N,
                  "read_xfers": xfers / N, "isr_us": isr_us}))
"""


def figures():
    """Run the script on the unix port -> its figures (dict)."""
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(SCRIPT)
    try:
        out = subprocess.run(
            runtime.command([f.name], "128k"),
            capture_output=True,
            text=True,
            env=runtime.environment(ROOT / "tests" / "fakes"),
            cwd=ROOT,
            timeout=300,
        )
    finally:
        Path(f.name).unlink()
    if out.returncode:
        raise SystemExit(out.stderr or out.stdout)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    d = figures()
    wire_us = 2 * 8 / 4.0  # one register access: 2 bytes at 4 MHz
    print(
        "drivers (MicroPython unix port, -X heapsize=128k for the chip model; the model's own "
        "time is subtracted, the SPI call overhead into it is not)"
    )
    for name, us, xf in (
        ("empty-field poll", d["idle_us"], d["idle_xfers"]),
        ("RFID read (7-byte UID)", d["read_us"], d["read_xfers"]),
    ):
        print(
            "  %-24s %7.1f us  %5.1f SPI transfers  ~RP2040 %5.1f ms  ~ESP32 %5.1f ms"
            "  (+ %.2f ms on the wire)"
            % (name, us, xf, us * 160 / 1000, us * 120 / 1000, xf * wire_us / 1000)
        )
    print(
        "  %-24s %7.2f us  (ISR + task-side pop; ~RP2040 %.0f us)"
        % ("beam interrupt", d["isr_us"], d["isr_us"] * 160)
    )


if __name__ == "__main__":
    main()
