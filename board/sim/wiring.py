"""Virtual board facts (data only), in the shape of the real boards' wiring files.

UART ids map to TCP ports (board/sim/simmachine.py); the optical reader stands in for the
front end, and its NOREAD line for the missing card-exit beam. The watchdog is real: the host
resets the board when it is not fed (host_tools/sim/simboard.py).
"""

board = "sim"
platform = "linux"
host_uart = {"id": 0, "baudrate": 115200, "tx": 0, "rx": 1, "rxbuf": 1024}
reader = {"kind": "optical"}
reader_uart = {"id": 1, "baudrate": 9600, "tx": 4, "rx": 5, "rxbuf": 256}
optical = {"dedup_ms": 250, "noread": b"NOREAD"}
beam = None       # no card-exit beam on the virtual board: the reader's NOREAD stands in
lid = None
led = None
service = {"pin": 22, "pull": "up", "active_level": 0}  # `shoectl sim --service`
watchdog = {"timeout_ms": 8000}
state_dir = "state"
