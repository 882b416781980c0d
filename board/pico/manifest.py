# Freeze the shoe firmware into a custom MicroPython build for the Raspberry Pi Pico:
#   make -C ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=/path/to/board/pico/manifest.py
# A deployed version (shoectl deploy) still takes precedence: main.py puts it first on sys.path.
include("$(PORT_DIR)/boards/manifest.py")
include("../manifest_common.py")
module("wiring.py", opt=1)
