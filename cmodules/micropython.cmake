# The C modules built into the frozen RP2040 image (tools/build_pico_firmware.sh passes this
# file as USER_C_MODULES). Each is a fast path whose Python twin in firmware/ runs everywhere
# else; tests/emu/test_shoec.py keeps them equal on the emulated Pico.
include(${CMAKE_CURRENT_LIST_DIR}/shoec/micropython.cmake)
