#!/usr/bin/env bash
# `make pico-firmware`: a MicroPython v1.27.0 UF2 for the Raspberry Pi Pico with the shoe
# firmware frozen in (board/pico/manifest.py), from the shared sources
# (SHOE_PICO_SOURCES, default ../shared/pico/micropython-v1.27.0-rp2-sources.tar.gz).
# Needs Debian's gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib cmake
# build-essential.
# Output: build/pico-firmware/firmware.uf2 (+ firmware.elf, and stock.elf/stock.uf2: the same
# sources without our manifest, for bench_pico --profile). Reproducible (docs/certification.md):
# the build date is pinned (SOURCE_DATE_EPOCH, default 2026-11-30, the shared UF2's), the
# version is the sources' own (GIT_CEILING_DIRECTORIES below), and the frozen image's debug
# paths are mapped to /pico-work, so two clean clones in different directories give the same
# firmware.uf2 and firmware.elf. With SHOE_PICO_WORK=/tmp/mpb the stock UF2 is byte-identical
# to the shared one (sha256 b3f13fa8...), so stock.elf names the functions the emulator runs.
set -euo pipefail
# the date in MicroPython's banner (py/makeversionhdr.py) and gcc's __DATE__ (pico-sdk binary info)
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-1795996800}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="${SHOE_PICO_SOURCES:-$ROOT/../shared/pico/micropython-v1.27.0-rp2-sources.tar.gz}"
OUT="$ROOT/build/pico-firmware"
WORK="${SHOE_PICO_WORK:-$OUT/work}"   # where the sources are unpacked and built
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
# The unpacked sources are no git repository: without a ceiling, makeversionhdr.py's
# `git describe` found the checkout around them and put *its* commit (and "-dirty") into the
# banner, so the image changed with every commit and local edit of this project. It falls back
# to the sources' own version (py/mpconfig.h: v1.27.0), as in the shared UF2.
export GIT_CEILING_DIRECTORIES="$WORK"
for t in arm-none-eabi-gcc cmake make; do
  command -v "$t" >/dev/null || { echo "pico-firmware: $t missing: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib cmake build-essential" >&2; exit 1; }
done
# the pico-sdk has C++ files (new_delete.cpp): without the newlib C++ headers the build fails at ~60 %
echo '#include <cstdlib>' | arm-none-eabi-g++ -x c++ -fsyntax-only - 2>/dev/null \
  || { echo "pico-firmware: the ARM C++ headers are missing: apt-get install libstdc++-arm-none-eabi-newlib" >&2; exit 1; }
[ -f "$SRC" ] || { echo "pico-firmware: no sources at $SRC (set SHOE_PICO_SOURCES)" >&2; exit 1; }
if [ ! -d "$WORK/micropython" ]; then
  echo "pico-firmware: unpacking $SRC"
  tar xzf "$SRC" -C "$WORK"
fi
MP="$WORK/micropython"
# patch_source FILE OLD NEW WHAT: OLD (once in FILE, \n for a line end) becomes NEW; nothing if
# NEW is there already; the build stops if OLD is not there exactly once
patch_source() {
  python3 - "$@" <<'PY'
import sys
path, old, new, what = sys.argv[1], sys.argv[2].replace("\\n", "\n"), sys.argv[3].replace("\\n", "\n"), sys.argv[4]
src = open(path).read()
if new not in src:
    if src.count(old) != 1:
        sys.exit("pico-firmware: %s: nothing to patch for: %s" % (path, what))
    open(path, "w").write(src.replace(old, new, 1))
    print("pico-firmware: " + what)
PY
}
# Frozen native code (@micropython.native in the firmware, docs/hardware.md section 8): v1.27's
# tools/mpy-tool.py aligns an ARMv6-M function's machine code to 2 bytes, but the runtime loads
# a 32-bit word at its start (the prelude offset) on every call, and a Cortex-M0+ faults on an
# unaligned load (rp2040js logs "not 32 bit aligned" and reads on). 4 bytes, as for ARMv6 and
# Xtensa. Idempotent; the stock modules have no native code (the stock image is unchanged).
patch_source "$MP/tools/mpy-tool.py" \
  '            MP_NATIVE_ARCH_ARMV6,\n            MP_NATIVE_ARCH_XTENSA,\n' \
  '            MP_NATIVE_ARCH_ARMV6,\n            MP_NATIVE_ARCH_ARMV6M,\n            MP_NATIVE_ARCH_XTENSA,\n' \
  "mpy-tool.py aligns ARMv6-M native code to 4 bytes"
# a build made before the patch keeps its generated frozen code (makemanifest rewrites it only
# when the frozen files change): made again once
if [ ! -f "$WORK/.mpy-tool-align4" ]; then
  rm -f "$MP/ports/rp2/build-shoe/frozen_content.c"
  touch "$WORK/.mpy-tool-align4"
fi
if [ ! -x "$WORK/picotool-install/picotool/picotool" ]; then
  echo "pico-firmware: building picotool (no USB support; about 25 s)"
  cmake -S "$WORK/picotool" -B "$WORK/build-picotool" -DPICO_SDK_PATH="$MP/lib/pico-sdk" \
    -DPICOTOOL_NO_LIBUSB=1 -DPICOTOOL_FLAT_INSTALL=1 -DCMAKE_INSTALL_PREFIX="$WORK/picotool-install" >"$OUT/picotool.log" 2>&1
  make -C "$WORK/build-picotool" -j2 install >>"$OUT/picotool.log" 2>&1
fi
# What the image freezes of ours must be exactly what ships (board/manifest_common.py FIRMWARE,
# the list `shoectl deploy` copies) and the board's wiring, at -O1; everything else must come
# from the MicroPython sources themselves (the port's own modules). Nothing host- or test-only.
# The image freezes its own copy of the FIRMWARE files: each `# frozen: @micropython.native`
# marker made the decorator (host_tools/flashnative.py: machine code that, in flash, costs no
# RAM; the .mpy deploy and the unix port read the marker as a comment).
STAGE="$OUT/frozen-src"
python3 "$ROOT/host_tools/flashnative.py" stage "$STAGE"
export SHOE_FROZEN_SOURCES="$STAGE"
echo "pico-firmware: checking board/pico/manifest.py against board/manifest_common.py"
python3 - "$ROOT" "$MP" "$STAGE" <<'PY'
import os, sys
root, mp, stage = sys.argv[1], os.path.realpath(sys.argv[2]), os.path.realpath(sys.argv[3])
sys.path.insert(0, os.path.join(root, "host_tools"))
import flashnative
sys.path.insert(0, os.path.join(mp, "tools"))
import manifestfile as mf
m = mf.ManifestFile(mf.MODE_FREEZE, {"MPY_DIR": mp, "PORT_DIR": os.path.join(mp, "ports/rp2"),
                                     "BOARD_DIR": os.path.join(mp, "ports/rp2/boards/RPI_PICO"),
                                     "MPY_LIB_DIR": os.path.join(mp, "lib/micropython-lib")})
m.execute(os.path.join(root, "board/pico/manifest.py"))
firmware = flashnative.firmware_list(root)
want = {os.path.join(stage, p): p for p in firmware}
want[os.path.join(root, "board/pico/wiring.py")] = "wiring.py"
ours, stock, bad = {}, 0, []
for p in firmware:  # the copy is the firmware's sources, transformed, and nothing else
    with open(os.path.join(root, "firmware", p), encoding="utf-8") as f:
        src = flashnative.transform(f.read())
    with open(os.path.join(stage, p), encoding="utf-8") as f:
        if f.read() != src:
            bad.append("%s: the frozen copy is not firmware/%s transformed" % (p, p))
for f in m.files():
    full = os.path.realpath(f.full_path)
    if full.startswith(mp + os.sep):
        stock += 1
        if f.target_path.split("/")[0] in ("shoe", "wiring.py"):
            bad.append("%s from the MicroPython sources" % f.target_path)
        continue
    ours[full] = f.target_path
    if want.get(full) != f.target_path:
        bad.append("%s (%s) is not in FIRMWARE" % (f.target_path, full))
    elif f.opt != 1:
        bad.append("%s frozen at -O%s, not -O1" % (f.target_path, f.opt))
bad += ["%s is in FIRMWARE but not frozen" % p for full, p in want.items() if full not in ours]
if bad:
    sys.exit("pico-firmware: the manifest does not freeze what ships:\n  " + "\n  ".join(bad))
print("pico-firmware: freezes the %d FIRMWARE files + wiring.py (-O1) and %d files of "
      "MicroPython's own" % (len(ours) - 1, stock))
PY
echo "pico-firmware: mpy-cross"
make -C "$MP/mpy-cross" -j2 >"$OUT/mpy-cross.log" 2>&1
export picotool_DIR="$WORK/picotool-install/picotool"
if [ "${SHOE_PICO_STOCK:-0}" = 1 ]; then
  echo "pico-firmware: stock RPI_PICO (no frozen firmware)"
  make -C "$MP/ports/rp2" BOARD=RPI_PICO -j2 >"$OUT/stock.log" 2>&1 \
    || { tail -20 "$OUT/stock.log" >&2; exit 1; }
  cp "$MP/ports/rp2/build-RPI_PICO/firmware.uf2" "$OUT/stock.uf2"
  cp "$MP/ports/rp2/build-RPI_PICO/firmware.elf" "$OUT/stock.elf"
fi
echo "pico-firmware: RPI_PICO with board/pico/manifest.py frozen (about 80 s)"
# The UF2 holds no build path; the ELF's debug information does (source and build directories).
# Mapping the work directory to one fixed name makes firmware.elf the same bytes from any
# checkout path too (docs/certification.md; read at the first configure of build-shoe). gcc
# hands only -fdebug-prefix-map on to the assembler (the .S files of the pico-sdk): both.
MAP="-ffile-prefix-map=$WORK=/pico-work -fdebug-prefix-map=$WORK=/pico-work"
# py/map.c steps its linear probe with `pos = (pos + 1) % map->alloc`: a division per probe, a
# call of the RP2040 SDK's divider routine on the Cortex-M0+. MicroPython grows an instance's
# attribute table only when it is full, and a method call on `self` first misses in that table,
# so a miss probes most of it (the MFRC522 driver: 37 attributes in 37 slots). The same step
# without the division (pos < alloc always, so the result is the same); docs/hardware.md
# section 8 has the figure. For this image only: map.c is put back after it (with its own date),
# so the stock build above stays the shared UF2 byte for byte. The build stops if the line is
# not there.
[ -f "$WORK/map.c.orig" ] || cp -p "$MP/py/map.c" "$WORK/map.c.orig"
patch_source "$MP/py/map.c" \
  '        pos = (pos + 1) % map->alloc;\n' \
  '        if (++pos == map->alloc) {\n            pos = 0;\n        }\n' \
  "py/map.c probes without a division"
# py/gc.c looks for a run of free blocks from the lowest free block (first fit), and after every
# collection from the heap's start: the shoe's boot leaves the heap's first ~75 KB in single-block
# holes between long-lived objects, so each multi-block allocation of a card walked that region
# (a card right after a collection took 2 ms longer; the app collects in the pause after each
# card). Here a multi-block allocation starts where the last one ended (next fit), and after a
# collection at the first run of 64 free blocks (so a cycle's allocations pack upwards from the
# low end of the free region and the top stays whole); if nothing fits from there to the heap's
# end it looks again from the lowest free block, as before, before any collection: an
# allocation that first fit would satisfy is still satisfied. Single-block allocations are
# unchanged. Put back after the build like map.c; docs/hardware.md section 8,
# "The allocator's walk".
[ -f "$WORK/gc.c.orig" ] || cp -p "$MP/py/gc.c" "$WORK/gc.c.orig"
patch_source "$MP/py/gc.c" \
  'static void gc_sweep_free_blocks(void);\n' \
  'static void gc_sweep_free_blocks(void);\n// shoe: where the next multi-block allocation starts looking (next fit; its ATB index)\nstatic size_t gc_shoe_multi_atb;\n// shoe: the ATB index of the first run of `want` free blocks (0: none)\nstatic size_t gc_shoe_first_run(mp_state_mem_area_t *area, size_t want) {\n    size_t n = 0;\n    size_t end = area->gc_alloc_table_byte_len * BLOCKS_PER_ATB;\n    for (size_t b = 0; b < end; b++) {\n        if (ATB_GET_KIND(area, b) != AT_FREE) {\n            n = 0;\n        } else if (++n >= want) {\n            return (b + 1 - n) / BLOCKS_PER_ATB;\n        }\n    }\n    return 0;\n}\n' \
  "py/gc.c: the next-fit hint"
patch_source "$MP/py/gc.c" \
  '        area->gc_last_free_atb_index = 0;\n    }\n    MP_STATE_THREAD(gc_lock_depth) &= ~GC_COLLECT_FLAG;\n' \
  '        area->gc_last_free_atb_index = 0;\n    }\n    gc_shoe_multi_atb = gc_shoe_first_run(&MP_STATE_MEM(area), 64); // past the small holes\n    MP_STATE_THREAD(gc_lock_depth) &= ~GC_COLLECT_FLAG;\n' \
  "py/gc.c: after a collection the hint is the first 1 KB free"
patch_source "$MP/py/gc.c" \
  '            n_free = 0;\n            for (i = area->gc_last_free_atb_index; i < area->gc_alloc_table_byte_len; i++) {\n' \
  '            n_free = 0;\n            i = area->gc_last_free_atb_index;\n            if (n_blocks > 1 && gc_shoe_multi_atb > i && area == &MP_STATE_MEM(area)) {\n                i = gc_shoe_multi_atb;\n            }\n            for (; i < area->gc_alloc_table_byte_len; i++) {\n' \
  "py/gc.c: a multi-block allocation starts at the hint"
patch_source "$MP/py/gc.c" \
  '        GC_EXIT();\n        // nothing found!\n' \
  '        if (n_blocks > 1 && gc_shoe_multi_atb != 0) {\n            gc_shoe_multi_atb = 0; // nothing after the hint: first fit, before any collection\n            continue;\n        }\n        GC_EXIT();\n        // nothing found!\n' \
  "py/gc.c: nothing after the hint, first fit"
patch_source "$MP/py/gc.c" \
  '    area->gc_last_used_block = MAX(area->gc_last_used_block, end_block);\n\n    // mark first block as used head\n' \
  '    if (n_free > 1 && area == &MP_STATE_MEM(area)) {\n        gc_shoe_multi_atb = (i + 1) / BLOCKS_PER_ATB;\n    }\n\n    area->gc_last_used_block = MAX(area->gc_last_used_block, end_block);\n\n    // mark first block as used head\n' \
  "py/gc.c: the hint after a multi-block allocation"
# The image's C modules (cmodules/: shoec, the per-card byte work's fast paths), copied under
# the work directory so that their paths map to /pico-work like the rest (a copy rewritten only
# when a file changed: the build recompiles what changed). build-shoe is configured once; one
# configured without them (an older checkout's) is made afresh.
CMOD="$WORK/cmodules"
rm -rf "$CMOD.new" && cp -r "$ROOT/cmodules" "$CMOD.new"
if diff -r "$CMOD.new" "$CMOD" >/dev/null 2>&1; then rm -rf "$CMOD.new"; else rm -rf "$CMOD" && mv "$CMOD.new" "$CMOD"; fi
if [ -f "$MP/ports/rp2/build-shoe/CMakeCache.txt" ] \
  && ! grep -q "^USER_C_MODULES:[A-Z]*=$CMOD/micropython.cmake\$" "$MP/ports/rp2/build-shoe/CMakeCache.txt"; then
  echo "pico-firmware: build-shoe configured without cmodules/: configured afresh"
  rm -rf "$MP/ports/rp2/build-shoe"
fi
rm -f "$OUT/firmware.uf2" "$OUT/firmware.elf"   # a failed build leaves no image behind
CFLAGS="$MAP" CXXFLAGS="$MAP" ASMFLAGS="$MAP" \
make -C "$MP/ports/rp2" BOARD=RPI_PICO BUILD=build-shoe FROZEN_MANIFEST="$ROOT/board/pico/manifest.py" \
  USER_C_MODULES="$CMOD/micropython.cmake" -j2 >"$OUT/firmware.log" 2>&1 \
  || { cp -p "$WORK/map.c.orig" "$MP/py/map.c"; cp -p "$WORK/gc.c.orig" "$MP/py/gc.c"; tail -20 "$OUT/firmware.log" >&2; exit 1; }
cp -p "$WORK/map.c.orig" "$MP/py/map.c"
cp -p "$WORK/gc.c.orig" "$MP/py/gc.c"
# every frozen native function's code word-aligned (see the mpy-tool.py patch above)
bad=$(arm-none-eabi-nm "$MP/ports/rp2/build-shoe/firmware.elf" | python3 -c '
import sys
for line in sys.stdin:
    f = line.split()
    if len(f) == 3 and f[1] == "t" and f[2].startswith("fun_data_") and int(f[0], 16) % 4:
        print(f[2])')
[ -z "$bad" ] || { echo "pico-firmware: frozen native code not word-aligned: $bad" >&2; exit 1; }
# every function the sources mark (and any they decorate themselves) is machine code in the
# image: its fun_data_ symbol is code ("t"), not bytecode data ("r"). Read from the sources, not
# the copy, so that a transform that did nothing is caught here
bad=$(arm-none-eabi-nm "$MP/ports/rp2/build-shoe/firmware.elf" | python3 -c '
import os, re, sys
root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "host_tools"))
import flashnative
code = {f[2] for f in (l.split() for l in sys.stdin) if len(f) == 3 and f[1] == "t"}
for rel in flashnative.firmware_list(root):
    text = open(os.path.join(root, "firmware", rel), encoding="utf-8").read()
    mod = rel[:-3].replace("/", "_")
    marks = flashnative.marks(text)
    # the symbol of a method has its class between: fun_data_<module>_<Class>_<name>
    owners = [""] + [c + "_" for c in re.findall(r"^class (\w+)", text, re.M)]
    for n in [n for n, e in marks if e == "native"] + flashnative.native_functions(text):
        if not any("fun_data_%s_%s%s" % (mod, o, n) in code for o in owners):
            print("%s.%s" % (rel, n))
    # viper code has no prelude, so mpy-tool names it after its file: <file>, <file>2, ...
    viper = [n for n, e in marks if e == "viper"]
    base = "fun_data_%s_%s_dot_py" % (mod, rel[:-3].replace("/", "_slash_"))
    named = {base} | {base + str(i) for i in range(2, len(viper) + 1)}
    if viper and not named <= code:
        print("%s: %s (viper)" % (rel, " ".join(viper)))' "$ROOT")
[ -z "$bad" ] || { echo "pico-firmware: marked native but not machine code in the image: $bad" >&2; exit 1; }
# only an image that passed the checks above reaches build/pico-firmware (.ci/run builds when
# firmware.uf2 is missing; the tests take whatever is there)
cp "$MP/ports/rp2/build-shoe/firmware.uf2" "$MP/ports/rp2/build-shoe/firmware.elf" "$OUT/"
echo "pico-firmware: $OUT/firmware.uf2 ($(stat -c %s "$OUT/firmware.uf2") bytes, sha256 $(sha256sum "$OUT/firmware.uf2" | cut -c1-16)...)"
