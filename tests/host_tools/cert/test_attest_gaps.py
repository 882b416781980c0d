"""What attestation must never claim (docs/certification.md "What the attestation does not
cover"): a shoe running the frozen image has no firmware root and answers the manifest of no
files; checked against a mistyped or empty local tree (whose manifest is also that of no files)
it must not come out VERIFIED. The shoe's side is shoe.attest itself (pure: it runs here)."""

import os

from host_tools.link import verify_attestation
from shoe import attest

KEY = bytes(range(32))


def test_a_shoe_attesting_no_files_never_verifies(tmp_path):
    nonce = os.urandom(16)
    frozen = attest.attest(KEY, nonce, [])  # commands.roots(hw) with no firmware_root
    assert frozen["files"] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    for roots in ([str(tmp_path / "v-typo")], [str(empty)], []):
        ok, local = verify_attestation(frozen, KEY, nonce, roots)
        assert local == frozen["manifest"]  # the same manifest of nothing ...
        assert not ok, roots  # ... proves nothing


def test_a_deployed_tree_still_verifies_and_a_changed_file_does_not(tmp_path):
    tree = tmp_path / "v-1234abcd"
    (tree / "shoe").mkdir(parents=True)
    (tree / "shoe" / "a.mpy").write_bytes(b"M\x06code")
    (tree / "DEPLOYED").write_bytes(b"{}")
    nonce = os.urandom(16)
    ans = attest.attest(KEY, nonce, [str(tree)])
    assert verify_attestation(ans, KEY, nonce, [str(tree)])[0]
    (tree / "shoe" / "a.mpy").write_bytes(b"M\x06c0de")
    assert not verify_attestation(ans, KEY, nonce, [str(tree)])[0]


class _HW:
    firmware_root = None

    def __init__(self, image):
        self.image = image


class _App:
    def __init__(self, image):
        self.hw = _HW(image)
        self.cfg = {"keys": {"shoe": KEY}}


def _image_flash(tmp_path, payload):
    """A UF2 of `payload` at the start of flash, and the flash a board holds after it."""
    from host_tools import uf2
    from tests.host_tools.deploy.test_uf2 import block

    n = -(-len(payload) // 256)
    data = b"".join(block(256 * i, payload[256 * i : 256 * (i + 1)], i, n) for i in range(n))
    img = uf2.parse(data, uf2.board_layout("pico"))
    return img, img.flash()


def test_a_frozen_image_is_attested_by_its_flash_and_a_changed_byte_fails(tmp_path):
    """The shoe hashes the first image_bytes of its firmware flash (hw.image, XIP on the rp2
    port); the host lays the UF2 over erased sectors and compares (shoectl verify
    --firmware-image)."""
    from shoe import commands

    img, flash = _image_flash(tmp_path, bytes(range(256)) * 20)
    assert len(flash) == 8192 and flash[5120:] == b"\xff" * 3072
    board = bytearray(flash) + bytearray(b"\xff" * 8192)  # more flash than the image
    nonce = os.urandom(16)
    ans = commands.attest(
        _App(board), "attest", {"nonce": nonce, "image_bytes": len(flash)}, 0, "table"
    )
    assert ans["ok"] and ans["files"] == 1
    assert verify_attestation(ans, KEY, nonce, [], flash)[0]
    board[4097] ^= 1  # one bit of the program
    ans = commands.attest(
        _App(board), "attest", {"nonce": nonce, "image_bytes": len(flash)}, 0, "table"
    )
    assert not verify_attestation(ans, KEY, nonce, [], flash)[0]
    forged = dict(ans, manifest=verify_attestation(ans, KEY, nonce, [], flash)[1])
    assert not verify_attestation(forged, KEY, nonce, [], flash)[0]  # a manifest without its MAC


def test_an_image_challenge_the_board_cannot_answer_is_refused_with_a_reason():
    from shoe import commands

    nonce = os.urandom(16)
    assert (
        commands.attest(_App(None), "attest", {"nonce": nonce, "image_bytes": 4096}, 0, "table")[
            "reason"
        ]
        == "no_image"
    )
    for n in (0, -4096, 100, 4096 * 3, "4096", 4096 * 2 + 1):
        r = commands.attest(
            _App(bytearray(8192)), "attest", {"nonce": nonce, "image_bytes": n}, 0, "table"
        )
        assert r == {
            "ok": False,
            "reason": "bad_image_bytes",
            "message": "image_bytes must be a multiple of 4096 up to 8192",
        }, n
