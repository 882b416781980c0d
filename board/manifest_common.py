# Shared by board/pico/manifest.py and board/esp32/manifest.py: the firmware package `shoe`
# (firmware/shoe, every module and sub-package) at optimisation level 1 (asserts compiled out;
# input checks raise exceptions, never assert).
metadata(description="Smart dealing shoe firmware", version="0.1.0")
package("shoe", base_path="../firmware", opt=1)
