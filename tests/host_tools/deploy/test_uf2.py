"""UF2 images and the BOOTSEL drive (host_tools/uf2.py, `shoectl flash`): what a board must not
be given is refused before a byte reaches the drive."""

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools import uf2
from host_tools.errors import ShoeError

LAYOUT = uf2.board_layout("pico")
FAMILY = LAYOUT["family_id"]


def block(addr, data, no, total, flags=0x2000, family=FAMILY, magic=True):
    head = [
        0x0A324655 if magic else 0,
        0x9E5D5157,
        flags,
        0x10000000 + addr,
        len(data),
        no,
        total,
        family,
    ]
    b = b"".join(x.to_bytes(4, "little") for x in head) + data.ljust(476, b"\0")
    return b + (0x0AB16F30).to_bytes(4, "little")


def image(n=4, start=0, **kw):
    return b"".join(block(start + 256 * i, bytes([i]) * 256, i, n, **kw) for i in range(n))


def test_a_good_image_is_taken_with_its_range_and_hash():
    img = uf2.parse(image(4), LAYOUT)
    assert (img.blocks, img.lo, img.hi) == (4, 0, 1024)
    assert len(img.sha256) == 64


def test_the_shared_micropython_image_is_a_good_one():
    path = os.environ.get("SHOE_PICO_UF2")
    if not path or not os.path.isfile(path):
        pytest.skip("SHOE_PICO_UF2 not set")
    img = uf2.read(path, LAYOUT)
    assert img.lo == 0 and img.hi <= LAYOUT["storage_offset"]


@pytest.mark.parametrize(
    "bad,why",
    [
        (image(4)[:-1], "multiple of 512"),
        (image(2) + image(2), "damaged"),  # blocks 0,1,0,1
        (image(4)[:512] + image(4)[1024:], "damaged"),  # block 1 missing
        (b"".join(block(256 * i, b"x" * 256, i, 2, magic=False) for i in range(2)), "magic"),
        (image(2, family=0x68ED2B88), "chip family"),  # a SAMD51 image
        (image(2, flags=0), "chip family"),  # no family id at all
        (image(2, start=2 * 1024 * 1024), "outside the board's flash"),
        (image(2, start=LAYOUT["storage_offset"] - 256), "journal"),  # reaches into storage
        (b"", "multiple of 512"),
    ],
)
def test_what_a_board_must_not_take_is_refused(bad, why):
    with pytest.raises(ShoeError, match=why):
        uf2.parse(bad, LAYOUT)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2048), st.integers(0, 2047))
def test_garbage_and_flipped_bytes_never_crash(noise, at):
    good = bytearray(image(4))
    good[at] ^= 0xFF
    for data in (noise, bytes(good)):
        try:
            img = uf2.parse(data, LAYOUT)
        except ShoeError:
            continue
        assert img.hi <= LAYOUT["storage_offset"]


def test_a_drive_is_known_by_its_info_file(tmp_path):
    d = tmp_path / "RPI-RP2"
    d.mkdir()
    assert not uf2.is_drive(d, LAYOUT)
    (d / "INFO_UF2.TXT").write_text(
        "UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"
    )
    assert uf2.is_drive(d, LAYOUT)
    assert uf2.find_drive(LAYOUT, roots=[tmp_path]) == d
    assert uf2.find_drive(LAYOUT, roots=[tmp_path / "nowhere"]) is None
    img = uf2.parse(image(3), LAYOUT)
    dst = uf2.copy_to_drive(img, d)
    assert dst.read_bytes() == img.data


def test_the_flash_command_refuses_a_bad_image_before_the_drive(tmp_path, capsys):
    from host_tools.cli import main

    d = tmp_path / "RPI-RP2"
    d.mkdir()
    (d / "INFO_UF2.TXT").write_text("Board-ID: RPI-RP2\n")
    bad = tmp_path / "bad.uf2"
    bad.write_bytes(image(2, start=LAYOUT["storage_offset"]))
    rc = main(["flash", "--uf2", str(bad), "--drive", str(d)])
    assert rc != 0
    assert "journal" in capsys.readouterr().err
    assert sorted(p.name for p in d.iterdir()) == ["INFO_UF2.TXT"]


def test_the_wiring_and_the_host_agree_where_the_image_ends():
    """The shoe hashes wiring.image's region (attest image_bytes); the host refuses images that
    reach past image.json's storage_offset: the same boundary, written in two board files."""
    from host_tools.deploy import board_wiring

    w = board_wiring("pico")
    assert w["image"]["xip"] == 0x10000000
    assert w["image"]["bytes"] == LAYOUT["storage_offset"]
