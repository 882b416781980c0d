"""UF2 images for the RP2040 and the BOOTSEL drive they are copied onto (`shoectl flash`).

    img = read("build/pico-firmware/firmware.uf2", layout=board_layout("pico"))
    drive = find_drive()             # a mounted RPI-RP2 drive (or --drive DIR)
    copy_to_drive(img, drive)        # the board programs it and restarts

A UF2 file is a list of 512-byte blocks, each carrying up to 476 bytes for one flash address
(https://github.com/microsoft/uf2). `read` refuses a file a board would not take as it is meant:
a bad magic, blocks out of order or missing, another chip family, an address outside the flash,
or one inside the board's storage region (MicroPython's filesystem and the journal's rings,
board/<name>/image.json): an image that reached there would erase the shoe's journal.
"""

import hashlib
import json
import os
import time
from pathlib import Path

from host_tools.errors import ShoeError
from host_tools.runtime import BOARD

_MAGIC0, _MAGIC1, _MAGIC_END = 0x0A324655, 0x9E5D5157, 0x0AB16F30
_NOT_MAIN_FLASH, _FAMILY_PRESENT = 0x00000001, 0x00002000
_XIP = 0x10000000


class Image:
    """A checked UF2 file: its bytes, SHA-256 and the flash range it programs."""

    def __init__(self, path, data, chunks):
        self.path = str(path)
        self.data = data
        self.chunks = chunks  # [(flash offset, bytes)] of the main-flash blocks, in file order
        self.blocks = len(chunks)
        self.lo = min(off for off, _ in chunks)  # first flash offset programmed
        self.hi = max(off + len(b) for off, b in chunks)  # one past the last
        self.sha256 = hashlib.sha256(data).hexdigest()

    def flash(self, sector=4096):
        """The flash from 0 to the end of the last sector the image touches, as a board holds
        it after the image was copied onto its drive: the blocks over erased (0xFF) sectors.
        What a shoe's `attest` hashes for its frozen image (image_bytes = len of this)."""
        out = bytearray(b"\xff") * (-(-self.hi // sector) * sector)
        for off, b in self.chunks:
            out[off : off + len(b)] = b
        return bytes(out)


def board_layout(board):
    """board/<board>/image.json: the chip family, flash size and where storage starts."""
    p = BOARD / board / "image.json"
    try:
        d = json.loads(p.read_text())
        return {
            "family_id": int(d["family_id"], 16),
            "flash_bytes": int(d["flash_bytes"]),
            "storage_offset": int(d["storage_offset"]),
            "drive_label": d["drive_label"],
            "drive_info": d["drive_info"],
        }
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ShoeError("no image layout for board %r (%s): %s" % (board, p, e)) from None


def read(path, layout):
    """-> Image, or ShoeError saying why a board must not be given this file."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ShoeError("cannot read %s: %s" % (path, e.strerror or e)) from None
    return parse(data, layout, path)


def parse(data, layout, name="image"):
    if not data or len(data) % 512:
        raise ShoeError("%s is not a UF2 file (its size is not a multiple of 512)" % name)
    n = len(data) // 512
    chunks = []
    for i in range(n):
        b = data[i * 512 : (i + 1) * 512]
        m0, m1, flags, addr, size, no, total, family = (
            int.from_bytes(b[k : k + 4], "little") for k in range(0, 32, 4)
        )
        if m0 != _MAGIC0 or m1 != _MAGIC1 or int.from_bytes(b[508:512], "little") != _MAGIC_END:
            raise ShoeError("%s is not a UF2 file (block %d has no UF2 magic)" % (name, i))
        if flags & _NOT_MAIN_FLASH:
            continue
        if not flags & _FAMILY_PRESENT or family != layout["family_id"]:
            raise ShoeError(
                "%s block %d is for chip family 0x%08x, not this board's 0x%08x"
                % (name, i, family if flags & _FAMILY_PRESENT else 0, layout["family_id"])
            )
        if no != len(chunks) or total != n or size == 0 or size > 476:
            raise ShoeError(
                "%s is damaged: block %d says %d of %d (%d bytes); expected %d of %d"
                % (name, i, no, total, size, len(chunks), n)
            )
        off = addr - _XIP
        if off < 0 or off + size > layout["flash_bytes"]:
            raise ShoeError(
                "%s block %d writes 0x%08x, outside the board's flash" % (name, i, addr)
            )
        if off + size > layout["storage_offset"]:
            raise ShoeError(
                "%s block %d writes 0x%08x, inside the board's storage (filesystem "
                "and journal from 0x%08x): refusing to erase the shoe's journal"
                % (name, i, addr, _XIP + layout["storage_offset"])
            )
        chunks.append((off, b[32 : 32 + size]))
    if not chunks:
        raise ShoeError("%s has no blocks for the main flash" % name)
    return Image(name, data, chunks)


def is_drive(path, layout):
    """A mounted BOOTSEL drive: INFO_UF2.TXT names the board's boot loader."""
    try:
        info = (Path(path) / "INFO_UF2.TXT").read_text(errors="replace")
    except OSError:
        return False
    return layout["drive_info"] in info


def find_drive(layout, roots=None):
    """The one mounted BOOTSEL drive under the usual mount points, else None."""
    label = layout["drive_label"]
    if roots is None:
        user = os.environ.get("USER", "")
        roots = ["/media/%s" % user, "/run/media/%s" % user, "/media", "/mnt", "/Volumes"]
    found = []
    for r in roots:
        p = Path(r) / label
        if p not in found and is_drive(p, layout):
            found.append(p)
    return found[0] if len(found) == 1 else None


def present_drive(layout, drive=None):
    """The drive if it is mounted now (`drive`, or else the one found), else None."""
    if drive is None:
        return find_drive(layout)
    return Path(drive) if is_drive(drive, layout) else None


def wait_for_drive(layout, drive=None, timeout=30.0, poll=0.2):
    deadline = time.monotonic() + timeout
    while True:
        d = present_drive(layout, drive)
        if d is not None:
            return d
        if time.monotonic() > deadline:
            where = drive or "/media/$USER, /run/media/$USER, /media, /mnt, /Volumes"
            raise ShoeError(
                "no %s drive (a board in BOOTSEL mode) at %s within %.0f s: hold "
                "BOOTSEL while plugging the board in, or give --port so the board "
                "is asked to enter it" % (layout["drive_label"], where, timeout)
            )
        time.sleep(poll)


def copy_to_drive(img, drive, name="SHOE.UF2"):
    """Write the image onto the drive in one file and flush it: the boot loader programs the
    flash as the blocks arrive and restarts the chip after the last one."""
    dst = Path(drive) / name
    try:
        with open(dst, "wb") as f:
            f.write(img.data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        # the drive goes away as the board restarts: after the last block that is success
        if not (e.errno in (5, 19) and not Path(drive).exists()):
            raise ShoeError(
                "copying %s to %s failed: %s" % (img.path, drive, e.strerror or e)
            ) from None
    return dst
