# The C modules built into the frozen RP2040 image (tools/build_pico_firmware.sh passes this
# file as USER_C_MODULES). Each is a fast path whose Python twin in firmware/ runs everywhere
# else; tests/emu/test_shoec.py keeps them equal on the emulated Pico.
include(${CMAKE_CURRENT_LIST_DIR}/shoec/micropython.cmake)
# The interpreter (py/*.c), extmod and mbedtls's SHA-256 at -O2, as the port builds only vm.c,
# map.c and mpz.c (the rest at -Os): a round card's chip time to its frame 5.63 -> 5.24 ms
# (bench/bench_pico_card.py; docs/hardware.md section 8) for ~47 KB more flash (566 KB of the
# 640 KB before the filesystem). Read here because this file is included in the firmware's
# own CMake scope (ports/rp2/CMakeLists.txt: py/usermod.cmake); the stock image is unchanged.
set_source_files_properties(
    ${MICROPY_SOURCE_PY}
    ${MICROPY_SOURCE_EXTMOD}
    ${MICROPY_LIB_MBEDTLS_DIR}/library/sha256.c
    PROPERTIES COMPILE_OPTIONS "-O2"
)
