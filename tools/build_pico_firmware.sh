#!/usr/bin/env bash
# `make pico-firmware`: a MicroPython v1.27.0 UF2 for the Raspberry Pi Pico with the shoe
# firmware frozen in (board/pico/manifest.py), from the shared sources
# (SHOE_PICO_SOURCES, default ../shared/pico/micropython-v1.27.0-rp2-sources.tar.gz).
# Needs Debian's gcc-arm-none-eabi libnewlib-arm-none-eabi cmake build-essential.
# Output: build/pico-firmware/firmware.uf2 (+ firmware.elf, and stock.elf/stock.uf2: the same
# sources without our manifest, for bench_pico --profile). Build paths end up in the image: with
# SHOE_PICO_WORK=/tmp/mpb the stock UF2 was byte-identical to the shared one (sha256 b3f13fa8...).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="${SHOE_PICO_SOURCES:-$ROOT/../shared/pico/micropython-v1.27.0-rp2-sources.tar.gz}"
OUT="$ROOT/build/pico-firmware"
WORK="${SHOE_PICO_WORK:-$OUT/work}"   # where the sources are unpacked and built
for t in arm-none-eabi-gcc cmake make; do
  command -v "$t" >/dev/null || { echo "pico-firmware: $t missing: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi cmake build-essential" >&2; exit 1; }
done
[ -f "$SRC" ] || { echo "pico-firmware: no sources at $SRC (set SHOE_PICO_SOURCES)" >&2; exit 1; }
mkdir -p "$WORK"
if [ ! -d "$WORK/micropython" ]; then
  echo "pico-firmware: unpacking $SRC"
  tar xzf "$SRC" -C "$WORK"
fi
MP="$WORK/micropython"
if [ ! -x "$WORK/picotool-install/picotool/picotool" ]; then
  echo "pico-firmware: building picotool (no USB support; about 25 s)"
  cmake -S "$WORK/picotool" -B "$WORK/build-picotool" -DPICO_SDK_PATH="$MP/lib/pico-sdk" \
    -DPICOTOOL_NO_LIBUSB=1 -DPICOTOOL_FLAT_INSTALL=1 -DCMAKE_INSTALL_PREFIX="$WORK/picotool-install" >"$OUT/picotool.log" 2>&1
  make -C "$WORK/build-picotool" -j2 install >>"$OUT/picotool.log" 2>&1
fi
echo "pico-firmware: mpy-cross"
make -C "$MP/mpy-cross" -j2 >"$OUT/mpy-cross.log" 2>&1
export picotool_DIR="$WORK/picotool-install/picotool"
if [ "${SHOE_PICO_STOCK:-0}" = 1 ]; then
  echo "pico-firmware: stock RPI_PICO (no frozen firmware)"
  make -C "$MP/ports/rp2" BOARD=RPI_PICO -j2 >"$OUT/stock.log" 2>&1
  cp "$MP/ports/rp2/build-RPI_PICO/firmware.uf2" "$OUT/stock.uf2"
  cp "$MP/ports/rp2/build-RPI_PICO/firmware.elf" "$OUT/stock.elf"
fi
echo "pico-firmware: RPI_PICO with board/pico/manifest.py frozen (about 80 s)"
make -C "$MP/ports/rp2" BOARD=RPI_PICO BUILD=build-shoe FROZEN_MANIFEST="$ROOT/board/pico/manifest.py" -j2 >"$OUT/firmware.log" 2>&1 \
  || { tail -20 "$OUT/firmware.log" >&2; exit 1; }
cp "$MP/ports/rp2/build-shoe/firmware.uf2" "$MP/ports/rp2/build-shoe/firmware.elf" "$OUT/"
echo "pico-firmware: $OUT/firmware.uf2 ($(stat -c %s "$OUT/firmware.uf2") bytes, sha256 $(sha256sum "$OUT/firmware.uf2" | cut -c1-16)...)"
