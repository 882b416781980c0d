"""Build a real board's hardware bundle from its wiring data (board/<name>/wiring.py).

    import machine, wiring
    from shoe.drivers.hwbuild import build
    hw = build(machine, wiring, firmware_root="/shoe_fw/v-1a2b3c4d")
    if not hw.service:
        shoe.app.run(hw)

Only this module and the boards' main.py construct machine objects; drivers receive them.
Nothing here does I/O on a device (no chip init, no IRQ installed, no watchdog started), so a
build can be inspected in tests against the fake `machine`. The bundle (shoe.hardware.Hardware)
and its attributes, the crash guard: docs/hardware.md section 3.
"""
from shoe.errors import ShoeError
from shoe.drivers.beam import Beam
from shoe.drivers.lid import Lid
from shoe.drivers.led import LedPlayer
from shoe.drivers.watchdog import Watchdog


from shoe.hardware import Hardware, crash_count


class WiringError(ShoeError):
    reason = "bad_wiring"


def _pull(machine, name):
    if name == "up":
        return machine.Pin.PULL_UP
    if name == "down":
        return machine.Pin.PULL_DOWN
    if name is None:
        return None
    raise WiringError("pull must be 'up', 'down' or None, not %r" % (name,))


def _in_pin(machine, spec):
    return machine.Pin(spec["pin"], machine.Pin.IN, _pull(machine, spec.get("pull")))


def _uart(machine, spec):
    if "rts" in spec:  # hardware flow control: RTS off while the receive FIFO is full
        return machine.UART(spec["id"], baudrate=spec["baudrate"], tx=machine.Pin(spec["tx"]),
                            rx=machine.Pin(spec["rx"]), rxbuf=spec.get("rxbuf", 256),
                            txbuf=spec.get("txbuf", 256), timeout=0,
                            rts=machine.Pin(spec["rts"]), flow=machine.UART.RTS)
    return machine.UART(spec["id"], baudrate=spec["baudrate"], tx=machine.Pin(spec["tx"]),
                        rx=machine.Pin(spec["rx"]), rxbuf=spec.get("rxbuf", 256),
                        txbuf=spec.get("txbuf", 256), timeout=0)


def _reader(machine, wiring):
    kind = wiring.reader.get("kind")
    if kind == "rfid":
        from shoe.drivers.mfrc522 import MFRC522
        from shoe.drivers.rfid import RFIDReader

        s = wiring.rfid_spi
        spi = machine.SPI(s["id"], baudrate=s["baudrate"], polarity=0, phase=0,
                          sck=machine.Pin(s["sck"]), mosi=machine.Pin(s["mosi"]),
                          miso=machine.Pin(s["miso"]))
        r = wiring.rfid
        cs = machine.Pin(r["cs"], machine.Pin.OUT, value=1)
        rst = machine.Pin(r["rst"], machine.Pin.OUT, value=1) if r.get("rst") is not None else None
        chip = MFRC522(spi, cs, rst, timeout_ms=r.get("timeout_ms", 5),
                       detect_timeout_us=r.get("detect_timeout_us", 200))
        return RFIDReader(chip, period_ms=r.get("period_ms", 5), tries=r.get("tries", 3),
                          fail_polls=r.get("fail_polls", 20),
                          absent_polls=r.get("absent_polls", 8), hold_ms=r.get("hold_ms", 300),
                          fast_period_ms=r.get("fast_period_ms", 2), fast_ms=r.get("fast_ms", 2000))
    if kind == "optical":
        from shoe.drivers.optical import OpticalReader

        o = wiring.optical
        return OpticalReader(_uart(machine, wiring.reader_uart), dedup_ms=o["dedup_ms"],
                             noread=o["noread"])
    raise WiringError("reader kind must be 'rfid' or 'optical', not %r" % (kind,))


def service_mode(machine, wiring):
    s = getattr(wiring, "service", None)
    if not s:
        return False
    return _in_pin(machine, s).value() == s.get("active_level", 0)


def _flash(wiring, flash):
    store = getattr(wiring, "journal", {}).get("store", "files")
    if store == "files":
        return None
    if store != "ring":
        raise WiringError("journal store must be 'files' or 'ring', not %r" % (store,))
    if flash is None:
        import rp2  # the Pico: littlefs and the journal's rings share this block device

        flash = rp2.Flash()
    return flash


def _image(wiring, image):
    """The flash the firmware image lives in, read in place (the rp2 port runs from XIP flash):
    what `attest` hashes for a frozen image. None on a board without it, and off the chip
    (the unix port standing in) unless a test hands one in."""
    spec = getattr(wiring, "image", None)
    if not spec:
        return None
    if image is not None:
        return image
    import sys

    if sys.platform != getattr(wiring, "platform", None):
        return None
    import uctypes

    return uctypes.bytearray_at(spec["xip"], spec["bytes"])


def build(machine, wiring, firmware_root=None, state_dir=None, flash=None, image=None):
    hw = Hardware(board_name=wiring.board, firmware_root=firmware_root,
                  state_dir=state_dir or getattr(wiring, "state_dir", "state"))
    hw.service = service_mode(machine, wiring)
    hw.crashes = crash_count(hw.state_dir)
    hw.gc_min = getattr(wiring, "gc", {}).get("threshold_min")
    hw.host = _uart(machine, wiring.host_uart)
    hw.flash = _flash(wiring, flash)
    hw.image = _image(wiring, image)
    hw.reader = _reader(machine, wiring)
    b = getattr(wiring, "beam", None)
    if b:
        edge = b.get("edge", "falling")
        if edge not in ("falling", "rising"):
            raise WiringError("beam edge must be 'falling' or 'rising'")
        trig = machine.Pin.IRQ_FALLING if edge == "falling" else machine.Pin.IRQ_RISING
        hw.beam = Beam(_in_pin(machine, b), trig, merge_ms=b.get("merge_ms", 15))
        hw.beam_window_ms = b.get("window_ms", 400)
    lid = getattr(wiring, "lid", None)
    if lid:
        hw.lid = Lid(_in_pin(machine, lid), open_level=lid.get("open_level", 1),
                     debounce_ms=lid.get("debounce_ms", 50))
    led = getattr(wiring, "led", None)
    if led:
        hw.led = LedPlayer(machine.Pin(led["pin"], machine.Pin.OUT, value=0),
                           active_low=led.get("active_low", False))
    w = getattr(wiring, "watchdog", None)
    if w:
        hw.wdt = Watchdog(machine.WDT, timeout_ms=w["timeout_ms"])
    return hw
