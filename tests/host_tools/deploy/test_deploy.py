"""`shoectl deploy` and `shoectl provision` against the MicroPython unix port behind a pty.

The unix port's REPL plays the board: its cwd is the board's flash (a tmp directory), so the
tests can look at the flash directly after the host tools went through the raw REPL.
"""

import hashlib
import json
import subprocess

import pytest

from host_tools import cli
from host_tools import deploy as dp
from host_tools import keys as keyfile
from host_tools.deploy import flow  # deploy() looks compile_firmware up there
from host_tools.errors import ShoeError
from host_tools.runtime import BOARD, micropython_binary
from tests.host_tools.deploy.ptyboard import PtyBoard

KEYS = {"shoe": "11" * 32, "supervisor": "22" * 32, "card": b"demo-card-key".hex() + "00" * 3}


_COMPILED = {}
_REAL_COMPILE = dp.compile_firmware


@pytest.fixture(autouse=True)
def compile_once(monkeypatch):
    """Compile each board's firmware once per session: others edit the tree while tests run,
    and a deploy-twice test needs the same version both times."""

    def cached(board, progress=None, reader=None):
        if (board, reader) not in _COMPILED:
            _COMPILED[board, reader] = _REAL_COMPILE(board, progress, reader)
        return dict(_COMPILED[board, reader])

    monkeypatch.setattr(flow, "compile_firmware", cached)


@pytest.fixture
def board(tmp_path):
    flash = tmp_path / "flash"
    flash.mkdir()
    with PtyBoard(flash) as b:
        yield b


def quiet(msg):
    pass


def flash_hashes(vdir):
    return {
        p.relative_to(vdir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in vdir.rglob("*")
        if p.is_file()
    }


def boot_choice(flash, board_name="pico"):
    """What the board's main.py would boot from this flash (run under MicroPython)."""
    code = "import sys\nsys.path.insert(0, %r)\nimport main\nprint(main.firmware_dir())\n" % str(
        BOARD
    )
    out = subprocess.run(
        [micropython_binary(), "-c", code], cwd=flash, capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def with_extra_file(monkeypatch, content=b"# v2\n"):
    real = flow.compile_firmware

    def fake(board, progress=None, reader=None):
        files = real(board, progress, reader)
        files["shoe/_v2marker.mpy"] = content
        return files

    monkeypatch.setattr(flow, "compile_firmware", fake)


def test_deploy_verifies_and_switches(board):
    flash = __import__("pathlib").Path(board.flash_dir)
    s = dp.deploy("pico", board.port, any_platform=True, progress=quiet)
    vdir = flash / "shoe_fw" / s["version"]
    assert (flash / "shoe_fw" / "active").read_text() == s["version"]
    assert (flash / "main.py").read_bytes() == (BOARD / "main.py").read_bytes()
    marker = json.loads((vdir / "DEPLOYED").read_text())
    got = flash_hashes(vdir)
    got.pop("DEPLOYED")
    assert got == marker["files"] and len(got) == s["files"]
    assert "wiring.mpy" in got and "shoe/drivers/mfrc522.mpy" in got
    assert boot_choice(flash) == str(vdir)
    # the deployed .mpy files load in MicroPython (what the board's main.py puts on sys.path)
    out = subprocess.run(
        [
            micropython_binary(),
            "-c",
            "import sys\nsys.path.insert(0, %r)\nimport wiring, shoe.cardcode\n"
            "print(wiring.board, shoe.cardcode.__file__)" % str(vdir),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.stdout.split()[0] == "pico" and out.stdout.strip().endswith("cardcode.mpy")
    # the deployed main.py boots the deployed bundle up to the hardware (fake machine on path)
    code = (
        "import sys\nsys.path.insert(0, 'FAKES')\nimport main\nhw = main.build()\n"
        "print(hw.board_name, hw.firmware_root, type(hw.reader).__name__)\n"
    ).replace("FAKES", str(BOARD.parent / "tests" / "fakes"))
    out = subprocess.run(
        [micropython_binary(), "-X", "heapsize=128k", "-c", code],
        cwd=flash,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.stdout.split() == ["pico", str(vdir), "RFIDReader"], out.stdout + out.stderr
    # deploying the same version again only verifies
    again = dp.deploy("pico", board.port, any_platform=True, progress=quiet)
    assert again["version"] == s["version"] and again["previous"] == s["version"]


def test_interrupted_deploy_leaves_old_version_bootable(board, monkeypatch):
    flash = __import__("pathlib").Path(board.flash_dir)
    v1 = dp.deploy("pico", board.port, any_platform=True, progress=quiet)["version"]
    v1_files = flash_hashes(flash / "shoe_fw" / v1)
    with_extra_file(monkeypatch)

    def stop_half_way(i, path):
        if i == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dp.deploy("pico", board.port, any_platform=True, progress=quiet, on_file=stop_half_way)
    assert (flash / "shoe_fw" / "active").read_text() == v1
    assert flash_hashes(flash / "shoe_fw" / v1) == v1_files
    assert boot_choice(flash).endswith(v1)
    staged = [d.name for d in (flash / "shoe_fw").iterdir() if d.name.startswith("v-")]
    assert len(staged) == 2  # the half-staged one has no DEPLOYED marker: never booted

    # power cut in the middle of copying: one clear error, still the old version
    def cut(i, path):
        if i == 3:
            board.power_cut()

    with pytest.raises(ShoeError) as e:
        dp.deploy(
            "pico",
            board.port,
            any_platform=True,
            progress=quiet,
            on_file=cut,
            timeout=2,
            op_timeout=3,
        )
    assert "stopped answering properly" in str(e.value)
    assert boot_choice(flash).endswith(v1)

    # the board comes back; the next deploy cleans up and switches
    board.power_on()
    v2 = dp.deploy("pico", board.port, any_platform=True, progress=quiet)
    assert v2["version"] != v1 and v2["removed"] == [v1]
    left = [d.name for d in (flash / "shoe_fw").iterdir() if d.name.startswith("v-")]
    assert left == [v2["version"]]
    assert boot_choice(flash).endswith(v2["version"])


def test_corrupted_copy_fails_verification(board, monkeypatch):
    flash = __import__("pathlib").Path(board.flash_dir)
    v1 = dp.deploy("pico", board.port, any_platform=True, progress=quiet)["version"]
    with_extra_file(monkeypatch)
    real_write = dp.Device.write_file

    def flaky(self, path, data):
        if path.endswith("shoe/_v2marker.mpy"):  # the changed file: it goes over the cable
            data = data[:-1] + bytes([data[-1] ^ 0x01])  # one bit flips on the way
        return real_write(self, path, data)

    monkeypatch.setattr(dp.Device, "write_file", flaky)
    with pytest.raises(ShoeError, match=r"verification failed: 1 differ.*shoe/_v2marker.mpy"):
        dp.deploy("pico", board.port, any_platform=True, progress=quiet)
    assert (flash / "shoe_fw" / "active").read_text() == v1
    assert boot_choice(flash).endswith(v1)


def reader_built(flash):
    """The reader class the deployed main.py builds (fake machine on the path)."""
    code = (
        "import sys\nsys.path.insert(0, 'FAKES')\nimport main\nhw = main.build()\n"
        "print(type(hw.reader).__name__)\n"
    ).replace("FAKES", str(BOARD.parent / "tests" / "fakes"))
    out = subprocess.run(
        [micropython_binary(), "-X", "heapsize=128k", "-c", code],
        cwd=flash,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return out.stdout.strip() or out.stderr


def test_an_old_version_that_cannot_be_removed_leaves_the_deploy_done(board, monkeypatch):
    """Removing the old version comes after the switch: when it fails (a slow chip past the
    operation's limit, as an emulated Pico on a loaded machine was), the deploy still succeeds
    with the new version active and says what it left; the next deploy removes it."""
    flash = __import__("pathlib").Path(board.flash_dir)
    v1 = dp.deploy("pico", board.port, any_platform=True, progress=quiet)["version"]
    real_run = dp.Device.run

    def slow_removal(self, code, what="command"):
        if what == "clean-up" and v1 in code:
            raise ShoeError(
                "the device on %s stopped answering properly during a clean-up (the device "
                "kept talking past the deadline)" % self.port
            )
        return real_run(self, code, what)

    monkeypatch.setattr(dp.Device, "run", slow_removal)
    said = []
    v2 = dp.deploy("pico", board.port, any_platform=True, progress=said.append, reader="optical")
    assert v2["version"] != v1 and v2["removed"] == [] and v2["kept"] == [v1]
    assert (flash / "shoe_fw" / "active").read_text() == v2["version"]
    assert boot_choice(flash).endswith(v2["version"]) and reader_built(flash) == "OpticalReader"
    assert any("could not remove the old version(s) %s" % v1 in m for m in said), said
    assert (flash / "shoe_fw" / v1).is_dir()
    monkeypatch.setattr(dp.Device, "run", real_run)
    v3 = dp.deploy("pico", board.port, any_platform=True, progress=quiet)
    assert v3["version"] == v1 and v3["removed"] == [v2["version"]], v3
    left = sorted(d.name for d in (flash / "shoe_fw").iterdir() if d.name.startswith("v-"))
    assert left == [v1]


def test_redeploy_sends_only_changed_files_and_verifies_the_copies(board, monkeypatch):
    """`--reader optical`: only wiring.mpy goes over the cable, the rest is copied on the
    device from the active version and verified like a sent file; a file damaged on the flash
    since its deploy is not carried into the new version."""
    flash = __import__("pathlib").Path(board.flash_dir)
    v1 = dp.deploy("pico", board.port, any_platform=True, progress=quiet)
    sent = []
    real_write = dp.Device.write_file

    def record(self, path, data):
        sent.append(path)
        return real_write(self, path, data)

    monkeypatch.setattr(dp.Device, "write_file", record)
    v2 = dp.deploy("pico", board.port, any_platform=True, progress=quiet, reader="optical")
    assert v2["version"] != v1["version"] and v2["unchanged"] == v2["files"] - 1
    assert [p for p in sent if "/v-" in p] == [
        "shoe_fw/%s/%s" % (v2["version"], f) for f in ("wiring.mpy", "DEPLOYED")
    ]
    assert reader_built(flash) == "OpticalReader"
    damaged = flash / "shoe_fw" / v2["version"] / "shoe" / "cards.mpy"
    data = damaged.read_bytes()
    damaged.write_bytes(data[:-1] + bytes([data[-1] ^ 0x01]))  # a bit flipped on the flash
    with pytest.raises(ShoeError, match=r"verification failed: 1 differ.*shoe/cards.mpy"):
        dp.deploy("pico", board.port, any_platform=True, progress=quiet, reader="rfid")
    assert (flash / "shoe_fw" / "active").read_text() == v2["version"]


@pytest.mark.parametrize("mode", ["silent", "echo", "garbage"])
def test_port_that_is_not_micropython(tmp_path, mode):
    with PtyBoard(tmp_path, mode=mode) as b:
        with pytest.raises(ShoeError, match="no MicroPython REPL answers"):
            dp.deploy("pico", b.port, any_platform=True, progress=quiet, timeout=1.5)
    assert list(tmp_path.iterdir()) == []


def test_board_answering_garbage(tmp_path):
    with PtyBoard(tmp_path, mode="liar") as b:
        with pytest.raises(ShoeError, match="stopped answering properly|answered garbage"):
            dp.deploy("pico", b.port, any_platform=True, progress=quiet, timeout=2, op_timeout=2)
    assert not (tmp_path / "shoe_fw").exists()


def test_not_enough_flash(board, monkeypatch):
    flash = __import__("pathlib").Path(board.flash_dir)
    v1 = dp.deploy("pico", board.port, any_platform=True, progress=quiet)["version"]
    with_extra_file(monkeypatch)
    monkeypatch.setattr(dp.Device, "free_bytes", lambda self: (40 * 1024, 4096))
    with pytest.raises(ShoeError, match=r"not enough flash: .* kB free \(the previous version"):
        dp.deploy("pico", board.port, any_platform=True, progress=quiet)
    assert [d.name for d in (flash / "shoe_fw").iterdir() if d.name.startswith("v-")] == [v1]


def test_cli_errors_are_one_line(board, capsys, tmp_path):
    cases = [
        (["deploy", "--board", "arduino", "--port", board.port], "unknown board 'arduino'"),
        (["deploy", "--board", "pico", "--port", board.port], "not pico (rp2): wrong --board?"),
        (["deploy", "--board", "esp32", "--port", str(tmp_path / "nope")], "cannot open port"),
        (["provision", "--port", board.port, "--shoe-id", "S1"], "missing key 'shoe'"),
    ]
    for argv, text in cases:
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert text in err and err.count("\n") == 1 and err.startswith("shoectl: "), err
    assert not (__import__("pathlib").Path(board.flash_dir) / "shoe_fw").exists()


def test_cli_deploy(board, capsys):
    assert cli.main(["deploy", "--board", "esp32", "--port", board.port, "--any-platform"]) == 0
    got = capsys.readouterr()
    assert "verified SHA-256 of" in got.out and "active version v-" in got.out
    assert "frozen image" not in got.err  # an ESP32 gets no Pico note


def test_a_pico_deploy_with_the_rfid_reader_points_at_the_frozen_image(board, capsys):
    from host_tools.commands.deploy import PICO_RFID_NOTE, memory_note

    assert memory_note("pico") == PICO_RFID_NOTE  # the Pico's wiring fits the RFID reader
    assert memory_note("pico", "optical") is None and memory_note("esp32") is None
    args = ["deploy", "--board", "pico", "--port", board.port, "--any-platform", "--quiet"]
    assert cli.main(args) == 0
    assert PICO_RFID_NOTE in capsys.readouterr().err


def test_provision_writes_config_without_echoing_keys(board, tmp_path, capsys, monkeypatch):
    flash = __import__("pathlib").Path(board.flash_dir)
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps({"shoe": KEYS["shoe"], "supervisor": KEYS["supervisor"]}))
    monkeypatch.setenv("SHOE_KEY_CARD", KEYS["card"])
    argv = ["provision", "--port", board.port, "--shoe-id", "T07-SHOE-1", "--keys", str(keys_file)]
    assert cli.main(argv) == 0
    out = capsys.readouterr()
    for k in KEYS.values():
        assert k not in out.out and k not in out.err
    doc = json.loads((flash / "state" / "shoe.json").read_text())
    assert doc == {"version": 1, "shoe_id": "T07-SHOE-1", "keys": KEYS}
    from shoe import config

    assert config.load(str(flash / "state"))["keys"]["card"].startswith(b"demo-card-key")
    # a second provision needs --force; nothing changes without it
    assert cli.main(argv[:4] + ["NEW-ID", "--keys", str(keys_file)]) == 1
    assert "--force" in capsys.readouterr().err
    assert json.loads((flash / "state" / "shoe.json").read_text())["shoe_id"] == "T07-SHOE-1"
    assert cli.main(argv[:4] + ["NEW-ID", "--keys", str(keys_file), "--force"]) == 0
    assert json.loads((flash / "state" / "shoe.json").read_text())["shoe_id"] == "NEW-ID"
    assert not (flash / "state" / "shoe.json.new").exists()


def test_bad_keys_are_rejected_without_showing_them(tmp_path):
    secret = "zz" * 32
    for env, text in [
        ({}, "missing key 'shoe'"),
        (
            {
                "SHOE_KEY_SHOE": secret,
                "SHOE_KEY_SUPERVISOR": "22" * 32,
                "SHOE_KEY_CARD": "33" * 32,
            },
            "must be hex",
        ),
        (
            {
                "SHOE_KEY_SHOE": "11" * 8,
                "SHOE_KEY_SUPERVISOR": "22" * 32,
                "SHOE_KEY_CARD": "33" * 32,
            },
            "must be 16..64 bytes",
        ),
    ]:
        with pytest.raises(ShoeError) as e:
            keyfile.for_provisioning(None, environ=env)
        assert text in str(e.value) and secret not in str(e.value)
    bad = tmp_path / "k.json"
    bad.write_text("{not json")
    with pytest.raises(ShoeError, match="is not JSON"):
        keyfile.for_provisioning(str(bad), environ={})


def test_compiled_set_covers_the_firmware():
    from host_tools.build import shipped_files

    files = _REAL_COMPILE("esp32")
    assert "wiring.mpy" in files and "shoe/drivers/rfid.mpy" in files
    # only firmware ships: exactly the list of board/manifest_common.py, and the wiring
    assert set(files) == {p[:-3] + ".mpy" for p in shipped_files()} | {"wiring.mpy"}
    assert all(b[:1] == b"M" for b in files.values())  # .mpy header
    assert dp.version_name(files) == dp.version_name(dict(files))
    assert dp.mpy_version() == (6, 3)


def test_provision_bad_input_changes_nothing(board, tmp_path, capsys, monkeypatch):
    flash = __import__("pathlib").Path(board.flash_dir)
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps(KEYS))
    cases = [
        (
            ["provision", "--port", board.port, "--shoe-id", "bad id!", "--keys", str(keys_file)],
            "shoe id must be",
        ),
        (
            [
                "provision",
                "--port",
                str(tmp_path / "nope"),
                "--shoe-id",
                "S1",
                "--keys",
                str(keys_file),
            ],
            "cannot open port",
        ),
        (
            [
                "provision",
                "--port",
                board.port,
                "--shoe-id",
                "S1",
                "--keys",
                str(tmp_path / "missing.json"),
            ],
            "cannot read the keys file",
        ),
    ]
    for argv, text in cases:
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert text in err and err.count("\n") == 1, err
        for k in KEYS.values():
            assert k not in err
    assert not (flash / "state").exists()
    with PtyBoard(tmp_path / "x", mode="silent") as silent:
        argv = [
            "provision",
            "--port",
            silent.port,
            "--shoe-id",
            "S1",
            "--keys",
            str(keys_file),
            "--timeout",
            "1",
        ]
        assert cli.main(argv) == 1
        assert "no MicroPython REPL answers" in capsys.readouterr().err


@pytest.mark.parametrize("chip", ["rp2", "esp32"])
def test_deploy_to_a_chip_repl_without_any_platform(tmp_path, chip):
    """What `shoectl deploy --board pico` meets on a Pico: sys.platform "rp2", cwd "/"."""
    flash = tmp_path / "flash"
    flash.mkdir()
    with PtyBoard(flash, platform=chip) as b:
        if chip == "rp2":
            assert cli.main(["deploy", "--board", "pico", "--port", b.port]) == 0
            active = (flash / "shoe_fw" / "active").read_text()
            assert (flash / "shoe_fw" / active / "shoe" / "app.mpy").is_file()
            assert not (flash / "shoe_fw" / active / "shoe" / "games" / "naive.mpy").exists()
            assert (flash / "main.py").read_bytes() == (BOARD / "main.py").read_bytes()
        else:
            with pytest.raises(ShoeError, match="wrong --board"):
                dp.deploy("pico", b.port, progress=quiet)
            assert not (flash / "shoe_fw").exists()
