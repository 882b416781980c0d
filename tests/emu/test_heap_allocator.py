"""The frozen image's allocator (tools/build_pico_firmware.sh patches py/gc.c): a multi-block
allocation starts where the last one ended, and after a collection at the first 1 KB free, instead
of walking every small hole from the heap's start; and nothing first fit would have placed is
refused. On the emulated Pico, the frozen image beside the stock one (which has the stock
allocator): docs/hardware.md section 8, "The allocator's walk".
"""

import tempfile
from pathlib import Path

import pytest

from host_tools import frozen
from host_tools.deploy import Device
from host_tools.sim import emu as _emu

pytestmark = pytest.mark.skipif(
    not frozen.DEFAULT_UF2.is_file(), reason="no frozen image (make pico-firmware)"
)

# After a collection, 20 allocations of 3 blocks (an 8-tuple: 40 bytes) -> the distances between
# them. Before the collection the heap gets 300 holes of 4 blocks (12-tuples) between kept ones,
# above whatever small holes the REPL left: first fit puts the 3-block tuples into the lowest
# holes, one each; from the hint they follow each other.
STRIDES = r"""
import gc
def strides():
    keep = []
    junk = []
    for i in range(300):
        keep.append((i,) * 12)
        junk.append((i,) * 12)
    junk = None
    xs = [None] * 20
    gc.collect()
    for i in range(20):
        xs[i] = (i,) * 8
    return [id(xs[i + 1]) - id(xs[i]) for i in range(19)]
print(strides())
"""

# Fill the heap with 3-block tuples until MemoryError, the collector off (as gc.disable() leaves
# it, and as between two collections): from the hint to the heap's end, then from its start
# again; the allocator must have used every run of 3 free blocks anywhere (also below the
# hint) first, so no run of 3 is left ("max free sz"). Without the look from the start the
# first allocation past the heap's end fails.
FILL = r"""
import gc, micropython
def fill():
    gc.collect()
    xs = [None] * (gc.mem_free() // 48 + 64)
    n = 0
    gc.disable()
    try:
        while True:
            xs[n] = (0,) * 8
            n += 1
    except MemoryError:
        pass
    gc.enable()
    micropython.mem_info()
    xs = None
    gc.collect()
    return n
print('filled', fill())
"""


def _run(uf2, code):
    with tempfile.TemporaryDirectory() as d, _emu.Emulator(Path(d) / "pico", uf2=uf2) as e:
        with Device(e.urls["repl"], timeout=120, op_timeout=600) as dev:
            out, err = dev.t.exec_raw(code, timeout=600)
    assert not err, err.decode()
    return out.decode()


def _strides(out):
    import ast

    return ast.literal_eval(out.strip().splitlines()[0])


def test_multi_block_allocations_after_a_collection_follow_each_other_not_the_holes():
    frozen_strides = _strides(_run(str(frozen.DEFAULT_UF2), STRIDES))
    stock_strides = _strides(_run(None, STRIDES))
    # the stock allocator (first fit from the heap's start after a collection) goes through the
    # holes: the scenario tells the two apart
    assert sum(s == 48 for s in stock_strides) < 15, stock_strides
    assert frozen_strides == [48] * 19, frozen_strides


def test_nothing_first_fit_would_place_is_refused():
    out = _run(str(frozen.DEFAULT_UF2), FILL)
    line = [x for x in out.splitlines() if "max free sz" in x]
    assert line, out
    max_free = int(line[0].rsplit(":", 1)[1])
    assert max_free < 3, out  # MemoryError came only when no 3-block run was left anywhere
    assert "filled" in out
