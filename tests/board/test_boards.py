"""Real boards: wiring files import under MicroPython, main.py builds the bundle (fake machine)."""

import json

import pytest

from host_tools.runtime import BOARD
from tests.mpy import MPYLIB, Checks, json_lines, run_code, run_mpy

BOARDS = ["pico", "esp32"]


BOARD_CHECKS = [
    "wiring_followed",
    "bundle_reads_a_tag_and_sees_the_beam",
    "optical_service_jumper_and_bad_wiring",
    "firmware_dir_selection",
    "crash_guard",
    "emergency_buffer_before_any_irq",
]


@pytest.fixture(scope="module", params=BOARDS)
def board_checks(request, tmp_path_factory):
    """tests/board/check_board.py run once per board: main.py builds the bundle (fake machine)."""
    from host_tools.build import compile_shipped

    board = request.param
    # the shipped .mpy at a device-sized heap, as a board has them: compiled from source on the
    # unix port the same bundle left under 8 KB of 128 KB and ran out on CI (MemoryError while
    # importing the RFID driver); the .mpy leave ~32 KB
    out = run_mpy(
        "tests/board/check_board.py",
        extra_path=[compile_shipped(), BOARD / board, BOARD, MPYLIB],
        heap="128k",
        args=[board, str(tmp_path_factory.mktemp("board-" + board))],
    )
    return board, Checks("tests/board/check_board.py", out), out


def test_main_builds_hardware(board_checks):
    board, res, out = board_checks
    assert res.data["built"] == {"check": "built", "board": board, "reader": "RFIDReader"}
    assert res.names == BOARD_CHECKS and res.done == len(BOARD_CHECKS)


@pytest.mark.parametrize("name", BOARD_CHECKS)
def test_main_py_check(board_checks, name):
    board_checks[1].assert_ok(name)
    if name == "crash_guard":
        assert "[shoe] safe mode: the app crashed 3 boots in a row" in board_checks[2]


@pytest.mark.parametrize("board", BOARDS)
def test_wiring_is_data_only(board):
    out = run_code(
        "import json, wiring\n"
        "print(json.dumps(sorted(k for k in dir(wiring) if not k.startswith('_'))))\n",
        extra_path=[BOARD / board],
        fakes=False,
    )
    names = json_lines(out)[-1]
    assert {
        "board",
        "platform",
        "host_uart",
        "reader",
        "rfid_spi",
        "rfid",
        "beam",
        "lid",
        "led",
        "service",
        "watchdog",
        "state_dir",
    } <= set(names)
    src = (BOARD / board / "wiring.py").read_text()
    assert "import" not in src.replace('"""', "").split("\n\n", 1)[1]  # no imports: data only


def test_pins_not_reused():
    for board in BOARDS:
        ns = {}
        exec((BOARD / board / "wiring.py").read_text(), ns)
        pins = [
            ns["host_uart"]["tx"],
            ns["host_uart"]["rx"],
            ns["reader_uart"]["tx"],
            ns["reader_uart"]["rx"],
            ns["rfid_spi"]["sck"],
            ns["rfid_spi"]["mosi"],
            ns["rfid_spi"]["miso"],
            ns["rfid"]["cs"],
            ns["rfid"]["rst"],
            ns["beam"]["pin"],
            ns["lid"]["pin"],
            ns["led"]["pin"],
            ns["service"]["pin"],
        ] + ([ns["host_uart"]["rts"]] if "rts" in ns["host_uart"] else [])
        assert len(pins) == len(set(pins)), board


def test_manifests_name_the_firmware_files():
    """Only firmware ships and firmware/shoe holds only what ships: one explicit list
    (manifest_common.py), used by the freeze, deploy and the virtual board, names every module
    under firmware/shoe (host and test code lives in host_tools/ and tests/)."""
    from host_tools.build import shipped_files
    from host_tools.runtime import FIRMWARE

    shipped = shipped_files()
    every = {p.relative_to(FIRMWARE).as_posix() for p in (FIRMWARE / "shoe").rglob("*.py")}
    unlisted = every - set(shipped)
    assert not unlisted, (
        "%s under firmware/shoe: list it in FIRMWARE of "
        "board/manifest_common.py, or move it out if it does not ship"
        % ", ".join(sorted(unlisted))
    )
    assert set(shipped) <= every, set(shipped) - every
    assert len(set(shipped)) == len(shipped)
    assert "shoe/app.py" in shipped and "shoe/drivers/hwbuild.py" in shipped
    # what each board's manifest freezes: test_freeze_manifest_freezes_exactly_the_shipped_files
    assert not (BOARD / "pico" / "main.py").exists() and not (BOARD / "esp32" / "main.py").exists()


def test_one_bundle_class_for_every_board_and_hwbuild_is_dropped_after_boot():
    """The app and every board's hwbuild use one Hardware class (shoe.hardware), so the app can
    drop hwbuild (boot work, ~3 KB of bytecode on a Pico) once booted and keep only the bundle."""
    code = (
        "import json, sys\nimport shoe.app, shoe.drivers.hwbuild as hb\n"
        "from shoe.hardware import Hardware\n"
        "hw = Hardware()\n"
        "print(json.dumps({'same': shoe.app.Hardware is hb.Hardware is Hardware,\n"
        "                  'attrs': sorted(k for k in hw.__dict__)}))\n"
    )
    from tests.mpy import run_code

    out = json.loads(run_code(code, heap="256k").strip().splitlines()[-1])
    assert out["same"] is True
    assert set(out["attrs"]) >= {
        "host",
        "reader",
        "state_dir",
        "board_name",
        "firmware_root",
        "beam",
        "beam_window_ms",
        "lid",
        "led",
        "wdt",
        "flash",
        "service",
        "crashes",
    }


def test_peripheral_tasks_on_a_pico_bundle():
    # the shipped .mpy, as a board has them (compiling the whole bundle from source needs
    # more RAM than the bundle itself)
    from host_tools.build import compile_shipped

    out = run_mpy(
        "tests/firmware/drivers/check_peripherals.py",
        extra_path=[compile_shipped(), BOARD / "pico", BOARD],
        heap="128k",
    )
    events = json.loads(out.strip().splitlines()[-1])["events"]
    assert events == [
        "exit_without_read",
        "read_without_exit",
        "lid_open",
        "lid_closed",
        "watchdog_starved",
    ]


def _micropython_manifestfile(tmp_path):
    """MicroPython's own manifest reader (tools/manifestfile.py of the rp2 sources in
    ../shared/pico, or SHOE_PICO_SOURCES), or skip when those sources are not here."""
    import importlib.util
    import os
    import tarfile
    from pathlib import Path

    src = Path(
        os.environ.get("SHOE_PICO_SOURCES")
        or BOARD.parent.parent / "shared" / "pico" / "micropython-v1.27.0-rp2-sources.tar.gz"
    )
    if not src.is_file():
        pytest.skip("no MicroPython sources (SHOE_PICO_SOURCES) to read the manifests with")
    with tarfile.open(src) as tar:
        for member in tar:
            if member.name.endswith("tools/manifestfile.py"):
                (tmp_path / "manifestfile.py").write_bytes(tar.extractfile(member).read())
                break
        else:
            pytest.skip("tools/manifestfile.py not in %s" % src)
    spec = importlib.util.spec_from_file_location("mp_manifestfile", tmp_path / "manifestfile.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("board", BOARDS)
def test_freeze_manifest_freezes_exactly_the_shipped_files(board, tmp_path):
    from pathlib import Path

    from host_tools.build import shipped_files

    mf = _micropython_manifestfile(tmp_path)
    port = tmp_path / "port"
    (port / "boards").mkdir(parents=True)
    (port / "boards" / "manifest.py").write_text("")  # the port's own (nothing here)
    m = mf.ManifestFile(
        mf.MODE_FREEZE,
        {"MPY_DIR": str(tmp_path), "PORT_DIR": str(port), "MPY_LIB_DIR": str(tmp_path / "lib")},
    )
    m.execute(str(BOARD / board / "manifest.py"))
    files = m.files()
    targets = {f.target_path for f in files}
    assert targets == set(shipped_files()) | {"wiring.py"}
    # the firmware comes from firmware/, at optimisation level 1 (asserts compiled out)
    fw = BOARD.parent / "firmware"
    for f in files:
        if f.target_path != "wiring.py":
            assert Path(f.full_path).resolve() == (fw / f.target_path).resolve(), f
            assert f.opt == 1, f
        else:
            assert Path(f.full_path).resolve() == (BOARD / board / "wiring.py").resolve(), f
