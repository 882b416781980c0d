# Shared by board/pico/manifest.py and board/esp32/manifest.py: the shoe firmware, file by file,
# at optimisation level 1 (asserts compiled out; input checks raise exceptions, never assert).
#
# FIRMWARE is the one list of what ships to a board: the freeze below and `shoectl deploy`
# (host_tools/deploy.py reads this file) use it, and so does the virtual board, which imports
# only these (host_tools/build.py), so every end-to-end test runs on exactly the shipped set.
# HOST_ONLY are modules under firmware/shoe that never go to a board (the host's fast paths
# and decoders, test stand-ins); a new module must be put in one list or the other
# (tests/drivers/test_boards.py).
FIRMWARE = (
    "shoe/__init__.py",
    "shoe/app.py",
    "shoe/attest.py",
    "shoe/cardcode.py",
    "shoe/cards.py",
    "shoe/config.py",
    "shoe/crypto.py",
    "shoe/dealing/__init__.py",
    "shoe/dealing/setup.py",
    "shoe/dealing/tracker.py",
    "shoe/deck/__init__.py",
    "shoe/deck/ledger.py",
    "shoe/deck/shuffle_check.py",
    "shoe/drivers/__init__.py",
    "shoe/drivers/_ticks.py",
    "shoe/drivers/beam.py",
    "shoe/drivers/hwbuild.py",
    "shoe/drivers/led.py",
    "shoe/drivers/lid.py",
    "shoe/drivers/mfrc522.py",
    "shoe/drivers/optical.py",
    "shoe/drivers/peripherals.py",
    "shoe/drivers/rfid.py",
    "shoe/drivers/watchdog.py",
    "shoe/games/__init__.py",
    "shoe/games/allsix.py",
    "shoe/games/engine.py",
    "shoe/games/fcf.py",
    "shoe/games/fcfround.py",
    "shoe/games/hcf.py",
    "shoe/games/hcfround.py",
    "shoe/games/jsonout.py",
    "shoe/games/messages.py",
    "shoe/games/packing.py",
    "shoe/games/paytable.py",
    "shoe/games/presets.py",
    "shoe/games/ptcheck.py",
    "shoe/games/settle.py",
    "shoe/journal/__init__.py",
    "shoe/journal/delta.py",
    "shoe/journal/journal.py",
    "shoe/journal/log.py",
    "shoe/journal/outbox.py",
    "shoe/journal/rounds.py",
    "shoe/link/__init__.py",
    "shoe/link/cobs.py",
    "shoe/link/codec.py",
    "shoe/link/crc.py",
    "shoe/link/endpoint.py",
    "shoe/link/frame.py",
    "shoe/link/handshake.py",
    "shoe/link/message.py",
    "shoe/link/sendqueue.py",
    "shoe/reasons.py",
    "shoe/table.py",
)
HOST_ONLY = (
    "shoe/_cpython_compat.py",
    "shoe/games/evalrun.py",
    "shoe/games/fcfhost.py",
    "shoe/games/naive.py",
    "shoe/games/unpacking.py",
    "shoe/link/host.py",
    "shoe/link/store.py",
)
metadata(description="Smart dealing shoe firmware", version="0.1.0")
for _path in FIRMWARE:
    module(_path, base_path="../firmware", opt=1)
