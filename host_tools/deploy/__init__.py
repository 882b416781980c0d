"""Deploy the firmware to a MicroPython board over its REPL, verify it, then switch to it (split
the way mpremote splits its transport from its commands):

    transport.py      Device: the raw REPL on a pyserial port through mpremote (no reset),
                      every operation under a deadline
    board_helpers.py  HELPERS: the code sent to the board once per session (remove, hash, copy,
                      replace files there)
    flow.py           deploy() and provision(): what ships (the manifest's files compiled, the
                      board's wiring), staging, SHA-256 verification, the version switch

    from host_tools.deploy import deploy, provision, Device
    deploy(board="pico", port="/dev/ttyACM0")      # compile, stage, verify, switch, clean up
"""

from host_tools.build import mpy_version
from host_tools.deploy.board_helpers import HELPERS
from host_tools.deploy.flow import (
    BOARDS,
    FW_DIR,
    READERS,
    board_wiring,
    compile_firmware,
    deploy,
    provision,
    version_name,
    wiring_source,
)
from host_tools.deploy.transport import CHUNK, Device
from host_tools.runtime import BOARD  # where the boards' files are (bench/bench_pico.py uses it)

__all__ = [
    "BOARD",
    "BOARDS",
    "CHUNK",
    "Device",
    "FW_DIR",
    "HELPERS",
    "READERS",
    "board_wiring",
    "compile_firmware",
    "deploy",
    "mpy_version",
    "provision",
    "version_name",
    "wiring_source",
]
