"""ESP32 (ESP32-WROOM-32 DevKitC) wiring of the shoe: data only (like tests/target_wiring).

Pins are GPIO numbers. UART0 is the USB REPL (deploy, provision); the table system is on UART2.
Strapping pins (0, 2, 12, 15) and flash pins (6-11) are avoided except the LED on GPIO2 and CS
on GPIO5, which idle in their safe boot level. docs/hardware.md has the wiring table.
"""

board = "esp32"
platform = "esp32"
mpy_arch = "xtensawin"  # mpy-cross -march: the @micropython.native codec, engine, settle

# txbuf: a status reply or a round's result taken whole, without waiting for the wire (board/pico)
host_uart = {"id": 2, "baudrate": 115200, "tx": 17, "rx": 16, "rxbuf": 1024, "txbuf": 4096}
reader = {"kind": "rfid"}
reader_uart = {"id": 1, "baudrate": 9600, "tx": 26, "rx": 27, "rxbuf": 256}
optical = {"dedup_ms": 250, "noread": b"NOREAD"}
rfid_spi = {"id": 2, "baudrate": 4000000, "sck": 18, "mosi": 23, "miso": 19}  # VSPI
rfid = {"cs": 5, "rst": 22, "period_ms": 10, "fast_period_ms": 2, "fast_ms": 2000,
        "tries": 3, "fail_polls": 20, "timeout_ms": 5,
        "detect_timeout_us": 200, "absent_polls": 8, "hold_ms": 300}
beam = {"pin": 32, "pull": "up", "edge": "falling", "merge_ms": 15, "window_ms": 400}
lid = {"pin": 33, "pull": "up", "open_level": 1, "debounce_ms": 50}
led = {"pin": 2, "active_low": False}
service = {"pin": 25, "pull": "up", "active_level": 0}  # jumper GPIO25-GND: service mode
watchdog = {"timeout_ms": 8000}
state_dir = "state"
