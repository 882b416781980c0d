"""host_tools/flashnative.py: the frozen image's copy of the sources, where each
`# frozen: @micropython.native` marker is the decorator (tests/firmware/link/test_native.py runs
that copy against CPython; tools/build_pico_firmware.sh freezes it)."""

import os

import pytest

from host_tools import flashnative
from host_tools.runtime import FIRMWARE

SRC = """\
from micropython import const


# clause: x
# frozen: @micropython.native
def f(a):
    return a + 1


class K:
    # frozen: @micropython.native
    @staticmethod
    def g(b):
        return b


def h():
    pass


# frozen: @micropython.viper
def v(x) -> int:
    return int(x) & 7
"""


def test_each_marker_becomes_the_decorator_in_place():
    out = flashnative.transform(SRC)
    assert out.count("\n") == SRC.count("\n")  # same line numbers in tracebacks
    assert "# frozen" not in out
    lines = out.split("\n")
    assert lines[4] == "@micropython.native" and lines[5] == "def f(a):"
    assert lines[10] == "    @micropython.native" and lines[12] == "    def g(b):"
    assert lines[20] == "@micropython.viper" and lines[21] == "def v(x) -> int:"
    assert flashnative.marked(SRC) == ["f", "g", "v"]
    assert flashnative.marks(SRC) == [("f", "native"), ("g", "native"), ("v", "viper")]
    assert flashnative.native_functions(out) == ["f", "g", "v"]
    # everything else as it was
    assert [x for x in SRC.split("\n") if "frozen" not in x] == [
        x for x in lines if "micropython.native" not in x and "micropython.viper" not in x
    ]


@pytest.mark.parametrize(
    "bad",
    [
        "# frozen: @micropython.native\nx = 1\n",  # not above a def
        "# frozen: @micropython.native\n\ndef f():\n    pass\n",  # a blank line between
        "    # frozen: @micropython.native\ndef f():\n    pass\n",  # another indentation
        "def f():  # frozen: @micropython.native\n    pass\n",  # not on its own line
        "def f():\n    pass\n# frozen: @micropython.native\n",  # at the end
        "# frozen: @micropython.natve\ndef f():\n    pass\n",  # no such emitter
    ],
)
def test_a_marker_that_marks_no_function_is_refused(bad):
    with pytest.raises(flashnative.MarkError):
        flashnative.transform(bad)


def test_the_copy_is_the_firmware_transformed_and_rewritten_only_when_changed(tmp_path):
    holding = flashnative.stage(tmp_path)
    assert holding  # the firmware marks some functions (test_native.py names them)
    for rel in flashnative.firmware_list(str(FIRMWARE.parent)):
        src = (FIRMWARE / rel).read_text(encoding="utf-8")
        got = (tmp_path / rel).read_text(encoding="utf-8")
        assert got == (flashnative.transform(src) if rel in holding else src)
    one = tmp_path / sorted(holding)[0]
    os.utime(one, (1, 1))
    flashnative.stage(tmp_path)
    assert one.stat().st_mtime == 1  # unchanged: not rewritten (the freeze rebuilds nothing)
    one.write_text("stale\n")
    flashnative.stage(tmp_path)
    assert one.read_text(encoding="utf-8") != "stale\n"
