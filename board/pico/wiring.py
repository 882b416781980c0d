"""Raspberry Pi Pico (RP2040) wiring of the shoe: data only (like micropython tests/target_wiring).

Pins are GPIO numbers (GPn). The USB port is the REPL (deploy, provision); the table system is
on UART0 through a 3.3 V USB-serial adapter or an RS-485 transceiver. docs/hardware.md has the
bill of materials and the wiring table.
"""

board = "pico"
platform = "rp2"  # sys.platform the firmware expects (deploy and main.py check it)
mpy_arch = "armv6m"  # mpy-cross -march: the @micropython.native codec, engine, settle

# rts: GP3 (UART0 RTS) to the USB-serial adapter's CTS, flow control on: while the chip
# programs or erases flash (interrupts off) the host waits instead of overrunning the 32-byte
# receive FIFO (docs/hardware.md section 8); unconnected it costs nothing
# txbuf: a write that does not fit the transmit buffer waits for room, then leaves the rest to
# App.pump's next call (the rp2 default is 256 B; a status reply is ~750, the round's reveal and
# result ~1 KB). 4 KB takes them whole; 8 KB (the link's full window) cost the .mpy deploy's heap
# its floor (docs/hardware.md section 8, "Waits that were not work")
host_uart = {"id": 0, "baudrate": 115200, "tx": 0, "rx": 1, "rxbuf": 1024, "txbuf": 4096,
             "rts": 3}
reader = {"kind": "rfid"}  # the fitted front end: "rfid" (MFRC522) or "optical" (UART module)
reader_uart = {"id": 1, "baudrate": 9600, "tx": 4, "rx": 5, "rxbuf": 256}
optical = {"dedup_ms": 250, "noread": b"NOREAD"}
rfid_spi = {"id": 0, "baudrate": 4000000, "sck": 18, "mosi": 19, "miso": 16}
rfid = {"cs": 17, "rst": 20, "period_ms": 10, "fast_period_ms": 2, "fast_ms": 2000,
        "tries": 3, "fail_polls": 20, "timeout_ms": 5,
        "detect_timeout_us": 200, "absent_polls": 8, "hold_ms": 300}
beam = {"pin": 14, "pull": "up", "edge": "falling", "merge_ms": 15, "window_ms": 400}
lid = {"pin": 15, "pull": "up", "open_level": 1, "debounce_ms": 50}
led = {"pin": 25, "active_low": False}  # the on-board LED (Pico; a Pico W uses an external one)
service = {"pin": 22, "pull": "up", "active_level": 0}  # jumper GP22-GND: service mode
watchdog = {"timeout_ms": 8000}  # RP2040 maximum is 8388 ms
state_dir = "state"
# collect after 40 KB allocated at least: a collection marks the bytecode loaded from flash
# (~150 KB, ~20-30 ms); at 4 KB most authenticated tags' reads paid one, at 16 KB a status
# command paid two (209 -> 107 ms of chip a status at 40 KB; shoe.gcpacer.tune, docs/hardware.md)
gc = {"threshold_min": 40960}
journal = {"store": "ring"}  # the journal on raw flash rings (rp2.Flash), docs/journal.md
# the flash below MicroPython's filesystem, where the firmware image lives (XIP address): the
# `attest` command hashes its first image_bytes when the host asks (a frozen image's identity);
# 640 KB = 2 MB - the rp2 port's 1408 KB of storage (board/pico/image.json says the same)
image = {"xip": 0x10000000, "bytes": 655360}
