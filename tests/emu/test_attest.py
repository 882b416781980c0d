"""Attestation on the emulated Pico (the real rp2 MicroPython): the shoe deployed and provisioned
with the CLI answers `shoectl verify`'s challenge with the manifest of its version directory, which
matches the expected tree the certification material gives (host_tools/cert/firmware.py), and not
another variant's or a tampered one (docs/certification.md, "Checking a running shoe")."""
import subprocess
import sys

from host_tools import deploy
from host_tools.cert import firmware as fw
from tests.emu.test_pico_shoe import ROOT, diagnosis


def verify(emu, tree, tmp_path):
    return subprocess.run([sys.executable, "-m", "host_tools", "verify", "--port",
                           emu.urls["uart0"], "--keys", str(emu.keys_file), "--no-chain",
                           "--firmware", str(tree), "--timeout", "300"],
                          capture_output=True, text=True, cwd=ROOT)


def test_the_emulated_pico_attests_the_expected_tree(pico_shoe, tmp_path):
    files = deploy.compile_firmware("pico")        # `shoectl deploy --board pico`'s own bytes
    good = fw.write_expected(files, "pico", tmp_path / "good")
    p = verify(pico_shoe, good, tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr + diagnosis(pico_shoe)
    version, manifest = fw.manifest(files, "pico")
    assert "firmware: VERIFIED" in p.stdout and manifest[:16] in p.stdout
    other = fw.write_expected(deploy.compile_firmware("pico", reader="optical"), "pico",
                              tmp_path / "other")
    p = verify(pico_shoe, other, tmp_path)
    assert p.returncode == 1 and "does not match" in p.stderr, p.stdout + p.stderr
    (good / "wiring.mpy").write_bytes(b"tampered")
    p = verify(pico_shoe, good, tmp_path)
    assert p.returncode == 1 and "does not match" in p.stderr, p.stdout + p.stderr
