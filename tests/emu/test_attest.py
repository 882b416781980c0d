"""Attestation on the emulated Pico (the real rp2 MicroPython): a shoe deployed and provisioned
with the CLI (`shoectl deploy --board pico`) attests, under its provisioned key, exactly the
manifest the certification material gives for that variant (host_tools/cert/firmware.py), and
the host's check (`verify_attestation`, what `shoectl verify` runs) accepts the answer against
the expected tree and refuses another variant's (docs/certification.md, "Checking a running
shoe"). The challenge runs at the chip's REPL (service jumper): `shoectl verify` through the
link is tested on the virtual board (tests/host_tools/commands/test_commands.py), and an
emulator on a loaded machine runs busy code so slowly that the host's link timeout (wall
clock) would end the session while the chip hashes. The chip's own time for it is bounded."""

import binascii
import json
import os

from host_tools import deploy
from host_tools.cert import firmware as fw
from host_tools.link import verify_attestation
from host_tools.sim import emu as _emu

LINK_TIMEOUT_MS = 3500  # docs/protocol.md 9: the host gives the link up after this silence


def test_the_emulated_pico_attests_the_expected_tree(pico_shoe, tmp_path):
    nonce = os.urandom(16)
    dev = _emu.service_repl(pico_shoe)  # service jumper: the REPL is ours
    with dev:
        out = dev.run(
            "import main, time, binascii\nfrom shoe import attest, commands, config\n"
            "hw = main.build()\nkey = config.load(hw.state_dir)['keys']['shoe']\n"
            "t0 = time.ticks_ms()\na = attest.attest(key, %r, commands.roots(hw))\n"
            "ms = time.ticks_diff(time.ticks_ms(), t0)\n"
            "print(ms, a['files'], binascii.hexlify(a['manifest']).decode(), "
            "binascii.hexlify(a['mac']).decode(), commands.roots(hw))\n" % nonce,
            "attest",
        )
    ms, files, manifest, mac, roots = out.split(None, 4)
    print("attest on the emulated RP2040: %s ms of chip time, %s files" % (ms, files))
    answer = {
        "nonce": nonce,
        "files": int(files),
        "manifest": binascii.unhexlify(manifest),
        "mac": binascii.unhexlify(mac),
    }
    key = bytes.fromhex(json.loads(open(pico_shoe.keys_file).read())["keys"]["shoe"])
    local = deploy.compile_firmware("pico")  # `shoectl deploy --board pico`'s bytes
    version, want = fw.manifest(local, "pico")
    assert version in roots and manifest == want
    good = fw.write_expected(local, "pico", tmp_path / "good")
    assert verify_attestation(answer, key, nonce, [good])[0]
    other = fw.write_expected(
        deploy.compile_firmware("pico", reader="optical"), "pico", tmp_path / "other"
    )
    assert not verify_attestation(answer, key, nonce, [other])[0]
    assert not verify_attestation(answer, b"another key" * 3, nonce, [good])[0]
    # the command blocks the app while it hashes: it must stay well inside the link timeout
    assert int(ms) < LINK_TIMEOUT_MS / 2, ms
