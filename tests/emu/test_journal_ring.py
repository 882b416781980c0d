"""The journal's raw flash rings on the emulated Pico (stock MicroPython rp2 firmware): a deploy
and a boot make the reserved extents in littlefs and the log lives in them; a power cut half-way
through a ring program or erase (the rig's `cut`) loses nothing."""
import json
import time

from tests.emu.test_pico_shoe import status as _status
from tests.emu.test_rig import repl

FLASH = 2 * 1024 * 1024


def status(emu, tmp_path):
    return _status(emu, tmp_path, timeout=300)   # the first boot makes the extents (~4 s chip)


def ring_map(emu):
    """(blocks, filesystem base address) read over the REPL in service mode; back to the app."""
    emu.control("pin", pin=22, value=0)
    emu.control("reset")
    with repl(emu, timeout=300) as dev:
        dev.run("import rp2, os\nfrom shoe.journal import extents\n"
                "nonce, blocks = extents._load_map('state/ring')\nf = rp2.Flash()")
        ok = dev.value("extents.check(f, 'state/ring', blocks)")
        blocks = dev.value("blocks")
        count = dev.value("f.ioctl(4, 0)")
        records = dev.value("len([p for p in extents.open_store(f, 'state')"
                            ".scan('journal.log')])")
        files = dev.value("sorted(os.listdir('state'))")
    emu.control("pin", pin=22, value=1)
    emu.control("reset")
    return ok, blocks, FLASH - count * 4096, records, files


def test_deploy_and_boot_make_the_ring_and_the_log_lives_in_it(pico_shoe, tmp_path):
    st = status(pico_shoe, tmp_path)
    assert st["board"] == "pico"
    ok, blocks, base, records, files = ring_map(pico_shoe)
    assert ok and len(blocks) == 46 and len(set(blocks)) == 46
    assert records >= 2                            # boot records and the hello event
    assert "ring" in files and "journal.log" not in files and "rounds.0" not in files
    img = (tmp_path / "pico" / "flash.bin").read_bytes()
    stamped = [b for b in blocks[:24] if img[base + b * 4096:base + b * 4096 + 4] == b"SHRG"]
    assert stamped                                 # the log's sectors, written raw


def test_a_power_cut_half_way_through_a_ring_program_or_erase_loses_nothing(pico_shoe, tmp_path):
    first = status(pico_shoe, tmp_path)["boot"]
    ok, blocks, base, _, _ = ring_map(pico_shoe)
    assert ok
    ring = [(base + b * 4096, base + (b + 1) * 4096) for b in blocks]
    hits = []
    cut_file = tmp_path / "pico" / "cut.json"
    for after in (0, 1, 2, 0, 1):
        # the boot journals (its boot record, the hello event): cut inside one of those
        if cut_file.exists():
            cut_file.unlink()
        pico_shoe.control("cut", after=after)
        pico_shoe.control("reset")
        deadline = time.monotonic() + 120
        while pico_shoe.alive():
            assert time.monotonic() < deadline, "no flash write to cut within 120 s"
            time.sleep(0.05)
        pico_shoe.wait_dead(5)
        cut = json.loads(cut_file.read_text())
        hits.append((cut["op"], any(a <= cut["addr"] < b for a, b in ring)))
        pico_shoe.start()
    assert [h for h in hits if h[1]], hits         # cuts inside ring programs/erases
    st = status(pico_shoe, tmp_path)
    assert st["boot"] > first and st["provisioned"]
    assert not [e for e in st.get("latched", []) if "journal" in json.dumps(e)]
    ok, _, _, records, _ = ring_map(pico_shoe)
    assert ok and records >= 1
