"""The journal on raw flash rings inside littlefs: reserved extents (as a swapfile or GRUB's
grubenv).

    store = open_store(flash, "state")   # flash: rp2.Flash() (hwbuild builds it)
    Journal("state", store=store)

Files of exactly one block in <state>/ring/, found by their header with raw reads and checked
at every boot; why littlefs leaves those blocks alone: docs/journal.md "Where the sectors come
from".
"""
import os
import struct

from micropython import const

from shoe.errors import ShoeError
from shoe.journal.ring import SECTOR
from shoe.journal.ringstore import LAYOUT, RingStore

_HEAD = b"SHOEXT01"
_PAGE = const(256)


class ExtentError(ShoeError):  # boot work: the extent files of the rings are not as mapped
    reason = "journal_extents"


def _count():
    return sum(n for _, n, _ in LAYOUT)


def _files(root):
    return root + "/ring"


def _name(d, i):
    return "%s/x%02d" % (d, i)


def _load_map(d):
    import json

    try:
        with open(d + "/map") as f:
            m = json.loads(f.read())
        return bytes.fromhex(m["nonce"]), m["blocks"]
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def check(dev, d, blocks, n=None):
    """Does every extent file still own its mapped block?"""
    count = dev.ioctl(4, 0)
    if len(blocks) != (n or _count()) or len(set(blocks)) != len(blocks):
        return False
    a = bytearray(_PAGE)
    b = bytearray(_PAGE)
    for i, blk in enumerate(blocks):
        if not 0 <= blk < count:
            return False
        try:
            if os.stat(_name(d, i))[6] != SECTOR:
                return False
            with open(_name(d, i), "rb") as f:
                off = 0
                while off < SECTOR:
                    if f.readinto(a) != _PAGE:
                        return False
                    dev.readblocks(blk, b, off)
                    if a != b:
                        return False
                    if off == 0 and a != b"\xff" * _PAGE:
                        break  # a stamped or written first page identifies the block
                    off += _PAGE
        except OSError:
            return False
    return True


def create(d, n, nonce=None, start=0):
    """Make the extent files start..n-1 in d (from 0: anything else there is removed first).
    -> nonce"""
    if not start:
        try:
            os.mkdir(d)
        except OSError:
            pass
        for name in os.listdir(d):  # the map did not check out: start again from nothing
            os.remove(d + "/" + name)
        nonce = os.urandom(4)
    pad = b"\xff" * _PAGE
    for i in range(start, n):
        with open(_name(d, i), "wb") as f:
            f.write(_HEAD + nonce + struct.pack("<H", i) + pad[:_PAGE - 14])
            for _ in range(SECTOR // _PAGE - 1):
                f.write(pad)
    return nonce


def locate(dev, nonce, n, start=0):
    """The block of each extent start..n-1, found by its header with raw reads."""
    blocks = [-1] * n
    h = bytearray(14)
    want = _HEAD + nonce
    for blk in range(dev.ioctl(4, 0)):
        dev.readblocks(blk, h, 0)
        if h[:12] == want:
            i = h[12] | h[13] << 8
            if start <= i < n:
                if blocks[i] >= 0:
                    raise ExtentError("extent %d found twice" % i)
                blocks[i] = blk
    if -1 in blocks[start:]:
        raise ExtentError("extent not found on the flash")
    return blocks[start:]


def _write_map(d, nonce, blocks):
    import json

    with open(d + "/map.new", "w") as f:
        f.write(json.dumps({"nonce": "".join("%02x" % x for x in nonce), "blocks": blocks}))
    try:
        os.remove(d + "/map")
    except OSError:
        pass
    os.rename(d + "/map.new", d + "/map")


def make(dev, d):
    """Create the extent files, find their blocks, write the map. -> (nonce, blocks)"""
    n = _count()
    nonce = create(d, n)
    blocks = locate(dev, nonce, n)
    _write_map(d, nonce, blocks)
    return nonce, blocks


def grow(dev, d, nonce, blocks):
    """A map made for fewer streams (older firmware): add the missing extents at the end and
    keep the others (and the journal in them). -> blocks"""
    n = _count()
    create(d, n, nonce, len(blocks))
    blocks = blocks + locate(dev, nonce, n, len(blocks))
    _write_map(d, nonce, blocks)
    return blocks


def open_store(dev, root):
    """The ring store on `dev` (rp2.Flash shape), its extents kept in <root>/ring."""
    d = _files(root)
    nonce, blocks = _load_map(d)
    if nonce is not None and len(blocks) < _count() and check(dev, d, blocks, len(blocks)):
        blocks = grow(dev, d, nonce, blocks)
    if nonce is None or not check(dev, d, blocks):
        if nonce is not None:
            print("[shoe] journal ring: the extent map does not check out: made again")
        nonce, blocks = make(dev, d)
    return RingStore(dev, nonce, blocks)
