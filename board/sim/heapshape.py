"""Give the app the data heap a device with frozen firmware would have: N contiguous bytes.

On the unix port the firmware's bytecode lives in the heap, and loading it leaves free holes
between modules. A device with frozen firmware has none of that: its heap starts empty and in
one piece. `reserve(n)` fills every free byte with filler blocks (largest first, so the big
ones land in the large free region at the end), then frees big blocks until `n` bytes are free,
which leaves the holes filled and one contiguous region of about `n` bytes for the app.
Returns the filler (keep a reference for as long as the app runs). The one ballast: the virtual
board (power_on.py), the MicroPython test scripts (tests/firmware/link/helpers.py DATA_HEAP_PRELUDE) and
tests/firmware/app/app_session.py all shape their heap with it.
"""
import gc

_SLOTS = 2048
_PIECES = 64


def reserve(n):
    gc.collect()
    slots = [None] * _SLOTS          # preallocated: appending would allocate on a full heap
    sizes = bytearray(_SLOTS)        # log2 of each block's size
    used = 0
    size = 32768
    while size >= 16 and used < _SLOTS:
        try:
            slots[used] = bytearray(size)
        except MemoryError:
            size //= 2
            continue
        sizes[used] = _log2(size)
        used += 1
    for i in range(used):              # free the big blocks: the large region at the end,
        if sizes[i] >= 10:             # >= 1 KB: now contiguous again (the small ones keep the holes filled)
            slots[i] = None
    pieces = [None] * _PIECES        # allocated before measuring: pinning must not allocate more
    gc.collect()
    extra = gc.mem_free() - n
    if extra < 0:      # the caller gave too little room for the code: say so, never hide it
        print("sim: data heap only %d contiguous bytes (%d wanted)" % (gc.mem_free(), n))
    if extra > 0:
        try:       # first fit: the start of that region; n bytes stay free after it
            slots[0] = bytearray(extra)
        except MemoryError:    # the freed blocks are not one region (a script that compiled its
            slots[0] = _pin(pieces, extra)   # source here): pin the rest in pieces
    slots[1] = sizes                 # kept: freeing it later would hand the app more than n
    gc.collect()
    return slots


def _pin(pieces, extra):
    """Pin `extra` bytes in the largest pieces that fit (at most len(pieces) of them)."""
    size = extra
    k = 0
    while extra >= 64 and k < len(pieces) and size >= 64:
        try:
            pieces[k] = bytearray(min(size, extra) - 16)   # 16: the block's own overhead
        except MemoryError:
            size //= 2
            continue
        extra -= len(pieces[k]) + 16
        k += 1
    return pieces


def _log2(n):
    k = 0
    while n > 1:
        n >>= 1
        k += 1
    return k
