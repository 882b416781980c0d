# Shared by board/pico/manifest.py and board/esp32/manifest.py: the shoe firmware, file by file,
# at optimisation level 1 (asserts compiled out; input checks raise exceptions, never assert).
#
# FIRMWARE is the one list of what ships to a board: the freeze below and `shoectl deploy`
# (host_tools/deploy.py reads this file) use it, and so does the virtual board, which imports
# only these (host_tools/build.py), so every end-to-end test runs on exactly the shipped set.
# firmware/shoe holds nothing else (host and test code lives in host_tools/ and tests/): a new
# module must be listed here (tests/board/test_boards.py).
FIRMWARE = (
    "shoe/__init__.py",
    "shoe/app.py",
    "shoe/attest.py",
    "shoe/cardcode.py",
    "shoe/cards.py",
    "shoe/cmac.py",
    "shoe/commitment.py",
    "shoe/commands.py",
    "shoe/config.py",
    "shoe/crypto.py",
    "shoe/dealing/__init__.py",
    "shoe/dealing/setup.py",
    "shoe/dealing/tracker.py",
    "shoe/deck/__init__.py",
    "shoe/deck/ledger.py",
    "shoe/deck/shuffle_check.py",
    "shoe/deck/tags.py",
    "shoe/drivers/__init__.py",
    "shoe/drivers/_ticks.py",
    "shoe/drivers/beam.py",
    "shoe/drivers/hwbuild.py",
    "shoe/drivers/iso14443.py",
    "shoe/drivers/isodep.py",
    "shoe/drivers/led.py",
    "shoe/drivers/lid.py",
    "shoe/drivers/mfrc522.py",
    "shoe/drivers/ntag424.py",
    "shoe/drivers/optical.py",
    "shoe/drivers/peripherals.py",
    "shoe/drivers/rfid.py",
    "shoe/drivers/watchdog.py",
    "shoe/errors.py",
    "shoe/gcpacer.py",
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
    "shoe/games/pttypes.py",
    "shoe/games/settle.py",
    "shoe/games/vocab.py",
    "shoe/hardware.py",
    "shoe/journal/__init__.py",
    "shoe/journal/delta.py",
    "shoe/journal/extents.py",
    "shoe/journal/journal.py",
    "shoe/journal/log.py",
    "shoe/journal/marks.py",
    "shoe/journal/outbox.py",
    "shoe/journal/repair.py",
    "shoe/journal/ring.py",
    "shoe/journal/ringscan.py",
    "shoe/journal/ringstore.py",
    "shoe/journal/rounds.py",
    "shoe/journal/store.py",
    "shoe/link/__init__.py",
    "shoe/link/cipher.py",
    "shoe/link/cobs.py",
    "shoe/link/codec.py",
    "shoe/link/crc.py",
    "shoe/link/endpoint.py",
    "shoe/link/frame.py",
    "shoe/link/handshake.py",
    "shoe/link/message.py",
    "shoe/link/sendqueue.py",
    "shoe/modules.py",
    "shoe/reasons.py",
    "shoe/roles.py",
    "shoe/startup.py",
    "shoe/sun.py",
    "shoe/table/__init__.py",
    "shoe/table/irregularities.py",
    "shoe/table/passes.py",
    "shoe/table/round.py",
    "shoe/table/secret.py",
    "shoe/table/snapshot.py",
    "shoe/wire.py",
)


def _firmware_version():
    """VERSION of firmware/shoe/__init__.py: the version is written there only. makemanifest runs
    this file from board/; host_tools/build.py passes __file__."""
    import os

    here = os.path.dirname(os.path.abspath(globals().get("__file__", "manifest_common.py")))
    with open(os.path.join(here, "..", "firmware", "shoe", "__init__.py")) as f:
        for line in f:
            if line.startswith("VERSION = "):
                return line.split('"')[1]
    raise ValueError("no VERSION line in firmware/shoe/__init__.py")


def _sources():
    """Where the freeze reads FIRMWARE from: the frozen image's own copy of the sources when its
    build made one (SHOE_FROZEN_SOURCES, written by tools/build_pico_firmware.sh through
    host_tools/flashnative.py: the same files with each `# frozen: @micropython.native` marker
    made the decorator, native code that costs no RAM in flash), else firmware/ itself."""
    import os

    return os.environ.get("SHOE_FROZEN_SOURCES") or "../firmware"


metadata(description="Smart dealing shoe firmware", version=_firmware_version())
for _path in FIRMWARE:
    module(_path, base_path=_sources(), opt=1)
