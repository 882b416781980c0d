"""MicroPython: a real board's main.py builds its hardware bundle against the fake machine.

argv[1] = board name (pico | esp32); MICROPYPATH has board/<name> first (see test_boards.py).
argv[2] = a scratch directory. Every check runs (mpycheck.run); tests/board/test_boards.py
has one test per check and board.
"""

import json
import os
import sys

import machine
import main
import wiring
from mfrc522_chip import MFRC522Chip, Tag
from mpycheck import run
from shoe.drivers.hwbuild import build, WiringError

board = sys.argv[1]
base = sys.argv[2]
hw = main.build(machine)
print(json.dumps({"check": "built", "board": board, "reader": type(hw.reader).__name__}))


def check_wiring_followed():
    assert hw.board_name == board == wiring.board
    assert hw.service is False and hw.firmware_root is None
    assert hw.host.id == wiring.host_uart["id"] and hw.host.baudrate == 115200
    # room for a reply or a round's result: a write that does not fit waits (test_rig.py)
    assert hw.host.txbuf == wiring.host_uart["txbuf"] >= 4096
    chip = hw.reader.chip
    assert chip._cs.id == wiring.rfid["cs"] and chip._cs.value() == 1
    assert chip._rst.id == wiring.rfid["rst"]
    assert hw.reader.fail_polls == wiring.rfid["fail_polls"]
    assert hw.reader.tries == wiring.rfid["tries"]
    assert hw.beam._pin.id == wiring.beam["pin"] and hw.lid._pin.id == wiring.lid["pin"]
    assert hw.led._pin.id == wiring.led["pin"]
    assert hw.wdt is not None and not hw.wdt.started  # watchdog starts at the first healthy feed
    assert machine.WDT.instances == []
    assert hw.state_dir == "state"
    # the Pico keeps its journal on raw flash rings (rp2.Flash), the ESP32 on files
    assert (hw.flash is not None) == (board == "pico")
    assert hw.flash is None or hw.flash.ioctl(5, 0) == 4096
    # the board's floor of the collection threshold reaches the app (shoe.gcpacer.tune)
    assert hw.gc_min == getattr(wiring, "gc", {}).get("threshold_min")
    assert (hw.gc_min or 0) >= (16384 if board == "pico" else 0)


class Discard:  # the fake Pin records every level in a list; a poll toggles CS ~300 times
    def append(self, v):
        pass

    def clear(self):
        pass


def check_bundle_reads_a_tag_and_sees_the_beam():
    # the bundle works: a tag on the SPI bus is read through hw.reader
    chip = hw.reader.chip
    chip._cs.history = Discard()
    spi = chip._spi
    spi.device = MFRC522Chip(
        cs=chip._cs, tags=[Tag.with_code(b"\x04\x01\x02\x03\x04\x05\x06", b"3A7FRAs1d52a21b")]
    )
    assert hw.reader.poll() == ("card", b"3A7FRAs1d52a21b")
    # the beam IRQ is wired to the pin the wiring names
    hw.beam.start()
    hw.beam._pin.drive(0)
    assert hw.beam.take() is not None


class W:
    pass


def check_optical_service_jumper_and_bad_wiring():
    # optical front end, service jumper, bad wiring
    w = W()
    for k in dir(wiring):
        if not k.startswith("_"):
            setattr(w, k, getattr(wiring, k))
    w.reader = {"kind": "optical"}
    w.service = {"pin": 3, "pull": "up", "active_level": 1}  # pulled up = fitted
    hw2 = build(machine, w)
    assert hw2.service is True
    assert type(hw2.reader).__name__ == "OpticalReader"
    assert hw2.reader._uart.id == wiring.reader_uart["id"]
    w.reader = {"kind": "barcode"}
    try:
        build(machine, w)
    except WiringError as e:
        assert e.reason == "bad_wiring"
    else:
        raise AssertionError("unknown reader kind accepted")


def put(path, text):
    with open(path, "w") as f:
        f.write(text)


def check_firmware_dir_selection():
    # deployed-version selection: active wins; active.new is the fallback; unverified is ignored
    os.chdir(base)
    for d in ("shoe_fw", "shoe_fw/v-old", "shoe_fw/v-new", "shoe_fw/v-half"):
        os.mkdir(d)
    put("shoe_fw/v-old/DEPLOYED", "ok")
    put("shoe_fw/v-new/DEPLOYED", "ok")
    assert main.firmware_dir() is None
    put("shoe_fw/active.new", "v-new\n")
    assert main.firmware_dir() == base + "/shoe_fw/v-new"
    put("shoe_fw/active", "v-old\n")
    assert main.firmware_dir() == base + "/shoe_fw/v-old"
    put("shoe_fw/active", "v-half\n")  # no DEPLOYED marker: never booted
    assert main.firmware_dir() == base + "/shoe_fw/v-new"


class FakeApp:
    runs = 0

    @staticmethod
    def run(hw):
        FakeApp.runs += 1
        raise ValueError("bug in the app")


def check_crash_guard():
    # crash guard: an app that raises is recorded; three in a row -> safe mode, no app started.
    # Each main() stands for a boot, which starts on a fresh heap: collected first (five bundles
    # built in one process left a 600-byte attribute table no room in the 128 KB heap, or did
    # not, as the firmware's code size moved by a few hundred bytes)
    import gc

    def boot():
        gc.collect()
        return main.main()

    os.chdir(base)
    os.mkdir("state")
    import shoe
    from shoe import hardware

    sys.modules["shoe.app"] = FakeApp
    shoe.app = FakeApp
    for _ in range(3):
        try:
            boot()
        except ValueError:
            pass
        else:
            raise AssertionError("the app's exception must propagate")
    assert FakeApp.runs == 3 and hardware.crash_count("state") == 3
    hw3 = boot()  # safe mode: returns the bundle, app not run
    assert FakeApp.runs == 3 and hw3.crashes == 3 and hw3.led._pin.value() == 1
    hw3 = None  # a board holds one bundle (a boot's)
    hardware.clear_crashes("state")
    assert hardware.crash_count("state") == 0
    try:
        boot()
    except ValueError:
        pass
    assert FakeApp.runs == 4


class BeamApp:
    """An app that starts the beam, as shoe.drivers.peripherals' beam task does first."""

    @staticmethod
    def run(hw):
        events.append("app")
        hw.beam.start()


events = []


class RecordingMicropython:
    """The `micropython` main.py imports: records the emergency buffer it reserves."""

    @staticmethod
    def alloc_emergency_exception_buf(n):
        events.append(("emergency_buf", n))


def check_emergency_buffer_before_any_irq():
    # the beam's handler is a hard IRQ: main() reserves the emergency exception buffer before
    # anything (the bundle, the app) can register an interrupt handler
    import shoe
    from shoe import hardware

    os.chdir(base)
    hardware.clear_crashes("state")
    real_irq = machine.Pin.irq

    def irq(pin, handler=None, *args, **kw):
        events.append("irq")
        return real_irq(pin, handler, *args, **kw)

    sys.modules["micropython"] = RecordingMicropython
    machine.Pin.irq = irq
    sys.modules["shoe.app"] = BeamApp
    shoe.app = BeamApp
    try:
        main.main()
    finally:
        del sys.modules["micropython"]
        machine.Pin.irq = real_irq
    assert events[0][0] == "emergency_buf" and events[0][1] >= 100, events
    assert events.count(events[0]) == 1 and "app" in events and "irq" in events, events


run(
    [
        check_wiring_followed,
        check_bundle_reads_a_tag_and_sees_the_beam,
        check_optical_service_jumper_and_bad_wiring,
        check_firmware_dir_selection,
        check_crash_guard,
        check_emergency_buffer_before_any_irq,
    ]
)
