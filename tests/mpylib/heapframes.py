"""MicroPython: does a call allocate anything from the heap, its own VM frame included?

micropython.heap_lock() catches objects a call makes (MemoryError), but not a frame: a bytecode
function whose VM state is larger than 11 words gets it from the heap with an allocation that may
fail (m_new_obj_var_maybe), and under the lock it silently falls back to the C stack. On the
board such a frame is allocated and freed at every call, and each one counts towards the next
collection (gc_alloc_amount is never decreased by a free): on a Pico running the firmware from
.mpy files a collection marks ~150 KB of bytecode (~25 ms), so a function called at every poll
with a big frame costs the idle chip collections.

    allocates(fn, n=20)  -> True if n calls of fn() allocated anything, frames included

How: garbage of 1 KB is left behind, the collection threshold is set to one block, and fn runs;
any allocation then starts a collection first, which frees the garbage: mem_free() moved.
"""

import gc


def allocates(fn, n=20):
    gc.collect()
    junk = bytearray(1024)
    junk = None  # noqa: F841  (garbage that only a collection frees)
    free0 = gc.mem_free()
    gc.threshold(1)
    try:
        for _ in range(n):
            fn()
    finally:
        gc.threshold(-1)
    return gc.mem_free() != free0
