"""Every file under firmware/ and board/ compiles with mpy-cross, exactly as for a board
(host_tools/build.py: the tool and the manifest's flags)."""

import pytest

from host_tools import build
from host_tools.runtime import BOARD, FIRMWARE

FILES = sorted(p for d in (FIRMWARE, BOARD) for p in d.rglob("*.py"))


def test_there_is_firmware_to_compile():
    assert any(p.name == "cards.py" for p in FILES)


def test_flags_are_the_manifests_opt_level():
    text = (BOARD / "manifest_common.py").read_text()
    assert build.flags() == ["-O%d" % build.opt_level(), "-march=host"]
    assert build.flags("armv6m") == ["-O%d" % build.opt_level(), "-march=armv6m"]
    assert "opt=%d" % build.opt_level() in text


def test_native_code_is_compiled_for_the_boards_chip(tmp_path):
    """mpy-cross gets the board's chip: a native function compiled for a Pico is ARM Thumb
    (armv6m), for the virtual board this machine's (the .mpy header's arch field, bits 2-7 of
    byte 2; 0 = no native code). The firmware itself is native in the frozen image only
    (host_tools/flashnative.py, tests/firmware/link/test_native.py): what a deploy sends holds
    no machine code (in a .mpy it would be loaded into the chip's heap) and loads on any chip."""
    from host_tools import deploy

    assert build.board_arch("pico") == "armv6m"
    src = tmp_path / "n.py"
    src.write_text("@micropython.native\ndef f(x):\n    return x + 1\n")
    build.compile_source(src, "n.py", tmp_path / "pico.mpy", arch=build.board_arch("pico"))
    assert (tmp_path / "pico.mpy").read_bytes()[2] >> 2 == 4  # MP_NATIVE_ARCH_ARMV6M
    build.compile_source(src, "n.py", tmp_path / "host.mpy")
    assert (tmp_path / "host.mpy").read_bytes()[2] >> 2 not in (0, 4)
    files = deploy.compile_firmware("pico")
    assert "shoe/link/codec.mpy" in files
    assert [p for p, b in files.items() if p.endswith(".mpy") and b[2] >> 2] == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIRMWARE.parent)))
def test_mpy_cross_compiles(path, tmp_path):
    build.compile_source(path, path.name, tmp_path / "out.mpy")
    assert (tmp_path / "out.mpy").stat().st_size > 0


def test_cache_recompiles_a_changed_source_and_drops_a_removed_one(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    a, b = src / "pkg" / "a.py", src / "pkg" / "b.py"
    a.write_text("X = 1\n")
    b.write_text("Y = 2\n")
    out = tmp_path / "out"
    build.compile_files([(a, "pkg/a.py"), (b, "pkg/b.py")], out)
    first = (out / "pkg" / "a.mpy").read_bytes()
    stamp = (out / "pkg" / "b.mpy").stat().st_mtime_ns
    a.write_text("X = 12345\n")
    build.compile_files([(a, "pkg/a.py"), (b, "pkg/b.py")], out)
    assert (out / "pkg" / "a.mpy").read_bytes() != first
    assert (out / "pkg" / "b.mpy").stat().st_mtime_ns == stamp  # unchanged: not recompiled
    build.compile_files([(a, "pkg/a.py")], out)
    assert not (out / "pkg" / "b.mpy").exists()


def test_a_syntax_error_is_one_shoe_error(tmp_path):
    from host_tools.errors import ShoeError

    bad = tmp_path / "bad.py"
    bad.write_text("def (:\n")
    with pytest.raises(ShoeError, match="mpy-cross rejects"):
        build.compile_files([(bad, "bad.py")], tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.mpy"))


def test_a_traceback_names_the_module_whose_name_the_import_interns(tmp_path):
    """The .mpy records "pkg.mod" (the name its import interns anyway), not "pkg/mod.py": a
    path would be one more qstr per module loaded, kept in the chip's RAM for good."""
    import subprocess

    from host_tools import runtime

    assert build.source_name("shoe/table/round.py") == "shoe.table.round"
    assert build.source_name("shoe/journal/__init__.py") == "shoe.journal"
    assert build.source_name("wiring.py") == "wiring"
    src = tmp_path / "src" / "pkg"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "mod.py").write_text("def f():\n    raise ValueError('x')\n")
    out = tmp_path / "out"
    build.compile_files(
        [(src / "__init__.py", "pkg/__init__.py"), (src / "mod.py", "pkg/mod.py")], out
    )
    mpy = (out / "pkg" / "mod.mpy").read_bytes()
    assert b"pkg/mod.py" not in mpy
    p = subprocess.run(
        [
            str(runtime.micropython_binary()),
            "-c",
            "import sys\nsys.path.insert(0, %r)\nimport pkg.mod\npkg.mod.f()" % str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert 'File "pkg.mod", line 2, in f' in p.stdout + p.stderr
