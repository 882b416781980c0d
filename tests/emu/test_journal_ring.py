"""The journal's raw flash rings on the emulated Pico (stock MicroPython rp2 firmware): a deploy
and a boot make the reserved extents in littlefs and the journal lives in them (read back here
from the flash image with the firmware's own ring code); a power cut half-way through a ring
program or erase (the rig's `cut`) loses nothing. The cuts play on the firmware that ships (the
frozen image, when built: four boots cost the rig a fraction of the .mpy deploy's); the same
journal code runs in both."""

import json
import time

from host_tools.sim import emu as _emu
from shoe.journal.ring import Ring
from shoe.link import codec
from tests.emu.conftest import copy_image
from tests.emu.test_pico_shoe import status as _status

FLASH = 2 * 1024 * 1024


def status(emu, tmp_path):
    return _status(emu, tmp_path, timeout=600)  # the first boot makes the extents (~4 s chip)


class Image:
    """flash.bin as an rp2.Flash-shaped block device (blocks counted from the start)."""

    def __init__(self, data):
        self.mem = data

    def readblocks(self, b, buf, off=0):
        buf[:] = self.mem[b * 4096 + off : b * 4096 + off + len(buf)]


def rings(path):
    """{ring id: [block of slot 0, 1, ...]}, the nonce, and the image, from the sector stamps."""
    img = path.read_bytes()
    found = {}
    nonce = None
    for b in range(FLASH // 4096):
        h = img[b * 4096 : b * 4096 + 16]
        if h[:4] == b"SHRG":
            nonce = h[4:8]
            found.setdefault(h[8], {})[h[9]] = b
    # a slot never stamped yet reads as block 0 (boot code: no stamp, so not part of the ring)
    return {rid: [s.get(i, 0) for i in range(max(s) + 1)] for rid, s in found.items()}, nonce, img


def log_records(path):
    found, nonce, img = rings(path)
    blocks = found[0]
    r = Ring(Image(img), blocks, 0, nonce)  # only the stamped slots: enough to read
    return [codec.decode(p) for p in r.scan()], found, img


def test_deploy_and_boot_make_the_ring_and_the_journal_lives_in_it(pico_first_boot, tmp_path):
    # the deployed image's first boot (made once for the run: conftest.pico_first_boot), then
    # the power on again on the flash it left
    first = pico_first_boot["status"]
    assert first["board"] == "pico"
    with _emu.Emulator(copy_image(pico_first_boot, tmp_path / "pico")) as e:
        e.keys_file = pico_first_boot["keys"]
        second = status(e, tmp_path)
    assert second["boot"] == first["boot"] + 1  # the map checked out: the same journal
    recs, found, img = log_records(tmp_path / "pico" / "flash.bin")
    boots = [r[1] for r in recs if r[0] == "B"]
    assert boots[-1] == second["boot"] and [r for r in recs if r[0] == "P"]  # hello events
    assert set(found) == {0, 1, 2, 3}  # log, both rounds segments, marks stamped


def test_a_power_cut_half_way_through_a_ring_program_or_erase_loses_nothing(
    shipped_shoe, tmp_path
):
    pico_shoe = shipped_shoe
    first = status(pico_shoe, tmp_path)["boot"]
    hits = []
    cut_file = tmp_path / "pico" / "cut.json"
    for after in (0, 1, 2):
        # the boot journals (its boot record, the hello event): cut inside one of those
        if cut_file.exists():
            cut_file.unlink()
        # armed at the reset (a write the running shoe makes first is not the one cut)
        pico_shoe.control("reset", cut=after)
        deadline = time.monotonic() + 300
        while pico_shoe.alive():
            assert time.monotonic() < deadline, "no flash write to cut within 300 s"
            time.sleep(0.05)
        pico_shoe.wait_dead(5)
        hits.append(json.loads(cut_file.read_text()))
        pico_shoe.start()
    st = status(pico_shoe, tmp_path)
    assert st["boot"] > first and st["provisioned"]
    assert not [e for e in st.get("latched", []) if "journal" in json.dumps(e)]
    found, _, _ = rings(tmp_path / "pico" / "flash.bin")
    ring = [b * 4096 for bs in found.values() for b in bs if b]  # ring sectors (addresses)
    inside = [h for h in hits if any(a <= h["addr"] < a + 4096 for a in ring)]
    assert inside, hits  # cuts inside ring programs/erases
    recs, _, _ = log_records(tmp_path / "pico" / "flash.bin")
    assert [r[1] for r in recs if r[0] == "B"][-1] == st["boot"]
