"""Virtual board facts (data only): what the real boards' wiring files say for pins and UARTs."""

board = "sim"
host_uart = {"transport": "tcp", "host": "127.0.0.1", "baudrate": 115200}
reader_uart = {"transport": "tcp", "host": "127.0.0.1", "baudrate": 9600}
reader = {"kind": "optical", "dedup_ms": 250, "noread": b"NOREAD", "poll_ms": 1}
beam = None       # no card-exit beam on the virtual board: the reader's NOREAD stands in
lid = None
led = None
watchdog = None
