# Freeze the shoe firmware into a custom MicroPython build for the ESP32:
#   make -C ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=/path/to/board/esp32/manifest.py
# A deployed version (shoectl deploy) still takes precedence: main.py puts it first on sys.path.
include("$(PORT_DIR)/boards/manifest.py")
include("../manifest_common.py")
module("wiring.py", opt=1)
