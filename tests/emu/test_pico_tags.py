"""Authenticated RFID tags (NTAG 424 DNA) on the emulated Pico: the deck written by the host's own
provisioning code with the shoe's card key (the simulated writer), the tags in the rig's MFRC522
model (host_tools/sim/emu/mfrc522.js: ISO 14443-4, SDM, its own AES), read by the real driver
over the chip's SPI0 and checked by the firmware as shipped:

- at the REPL (service jumper): a tag reads and checks on the chip; its count rises by one per
  read; a copy playing back its last answer reads with that same count;
- end to end: a deck check with the deck's tags, then a round in which a copy of a card's tag
  (its UID and memory, the answer of its read at the deck check played back) comes out of the
  shoe in place of that card: the round is void, card_forged (tag_replay), at a dealer's pace
  of a card every 250 ms. The deck in play was not cloneable; SHOE_SOAK=full also checks the
  deck that replaces the quarantined one (53 more cards, on plain tags: cloneable). The round
  plays on the frozen image when `make pico-firmware` has built it (the firmware that ships).
"""

import os
import random
import threading

import pytest

from host_tools import tagwriter
from host_tools.sim import emu as _emu
from host_tools.sim.emu.table import EmuTable
from host_tools.sim.ntag424 import copy_spec
from shoe.cardcode import CardCodes
from tests.emu.conftest import copy_image
from tests.support import wait_for

KEY = _emu.EMU_KEYS["card"]
SOAK = os.environ.get("SHOE_SOAK") == "full"
PACE = {"pitch_ms": 250, "dwell_ms": 200, "beam_at_ms": 175}


@pytest.fixture(scope="module")
def deck_tags():
    """The 53 tags of deck 3A7F R, written with the emulated shoe's card key: {code: spec}."""
    return tagwriter.simulated_deck(KEY)


def test_an_authenticated_tag_reads_and_checks_on_the_chip(pico_shoe, deck_tags):
    code = sorted(deck_tags)[0]
    spec = deck_tags[code]
    # the service jumper, a reset, the REPL: up to three tries of 120 s (a loaded run's boot
    # outlasted one try of 60 s: "raw REPL handshake failed")
    with _emu.service_repl(pico_shoe) as dev:
        dev.run(
            "import main, asyncio\nhw = main.build()\nr = hw.reader\nimport shoe.sun as sun\n"
            "K = bytes.fromhex(%r)" % KEY.hex()
        )
        seen = []
        for tag in (spec, spec, None):
            if tag is None:  # a copy: its UID and the answer of the last read, played back
                tag = copy_spec(spec, seen[-1])
            # the read polls first, then the tag comes: an idle chip's clock catches up with the
            # wall clock at once (rig.js), so a tag put down before the read began could be gone
            # before it polled, on a loaded machine
            polled = pico_shoe.control("stats")["spi_transfers"]
            reading = threading.Thread(target=dev.run, args=("k, raw = asyncio.run(r.read())",))
            reading.start()
            wait_for(
                lambda polled=polled: pico_shoe.control("stats")["spi_transfers"] > polled,
                timeout=60,
                what="the read polling the MFRC522",
            )
            pico_shoe.control("card", reader="rfid", tag=tag, dwell_ms=2000, beam=False)
            reading.join(150)
            assert not reading.is_alive()
            assert dev.value("k") == "tag"
            got = dev.value("sun.check(K, raw)")
            assert got[0] == "card" and got[1] == code.encode(), got
            seen.append(got[2])
            dev.run("r._last_uid = None\nr.poll()")  # its deselect; the next one is new
        assert seen == [spec["ctr"] + 1, spec["ctr"] + 2, spec["ctr"] + 2], seen


@pytest.mark.clause("rules:3-card-forged")
def test_a_copy_of_a_cards_tag_voids_the_round_on_the_pico(
    tmp_path, request, frozen_image, deck_tags
):
    # on the firmware that ships (the frozen image) when it is built, else the .mpy deploy (the
    # test above reads an authenticated tag on the .mpy deploy either way)
    image = frozen_image("rfid") or request.getfixturevalue("pico_image")
    state = copy_image(image, tmp_path / "pico")
    deck = ["%s%s" % (r, s) for s in "shdc" for r in "A23456789TJQK"]
    random.Random(19).shuffle(deck)
    seats = {
        "1": {"wagers": {"ante": 10, "odds": 10}, "raise": 10},
        "2": {"wagers": {"ante": 5, "odds": 5}, "raise": 0},
    }
    script = {
        "game": "four-card-frenzy",
        "procedure": "manual-shoe",
        "seed": 3,
        "rounds": [{"deck": deck, "seats": seats}],
    }
    events = []
    codes = CardCodes(KEY)
    from shoe import cards

    victim = codes.make(0x3A7F, "R", cards.parse(deck[3]))
    with _emu.Emulator(state, uf2=image.get("uf2")) as e:
        with EmuTable(
            e,
            "rfid",
            event_timeout=900.0,
            pace=PACE,
            tags=deck_tags,
            on_event=lambda k, b: events.append((k, b)),
        ) as t:
            port = t.port
            # the 4th card of the deal (line 53 + 3): a copy of its tag plays back the answer
            # its read at the deck check gave (the air recorded it)
            port.substitute[53 + 3] = lambda p, code: p.replay_of(victim)
            t.runner.play(script, settle=SOAK)
            st = t.runner.status()
        assert e.control("stats")["resets"] == 0
    assert_forged(t.runner.outcomes, "tag_replay")
    # the deck checked with its tags before the deal (every card read and checked on the chip)
    checks = [b for k, b in events if k == "deck_check"]
    assert checks and checks[0]["deck"] == "3A7F" and checks[0]["ok"], checks
    assert port.sent[53 + 3] == victim.encode()
    # the deck in play when the round opened had its tags' counters: not cloneable
    assert t.runner.ready["cloneable"] is False, t.runner.ready
    if not SOAK:  # card_forged took the deck out of play (latched: blocked until acknowledged)
        assert [(d["deck"], d["status"]) for d in st["decks"]] == [("3A7F", "out")], st
        assert st["phase"] == "blocked" and st["cloneable"] is None, st
        return
    # the runner loads the next one (3A80), whose cards come on plain tags (none were written
    # for it), and the status says it is cloneable
    assert [d["deck"] for d in st["decks"]] == ["3A80"] and st["cloneable"] is True, st


@pytest.mark.clause("rules:3-card-forged")
def test_a_plain_tag_with_another_cards_uid_voids_the_round_on_the_pico(
    tmp_path, request, frozen_image
):
    """Plain tags (cloneable): a tag read whole at the deck check is reported by its UID in the
    deal (shoe/drivers/rfid.py), and its memory read right after. The 4th card of the deal
    comes on a tag carrying the UID of a card still in the shoe (read at the deck check) and
    its own code: reported by the UID as that card, then its memory gives it away:
    round_void card_forged (tag_changed), at a dealer's pace of a card every 250 ms."""
    image = frozen_image("rfid") or request.getfixturevalue("pico_image")
    state = copy_image(image, tmp_path / "pico")
    deck = ["%s%s" % (r, s) for s in "shdc" for r in "A23456789TJQK"]
    random.Random(23).shuffle(deck)
    seats = {"1": {"wagers": {"ante": 10, "odds": 10}, "raise": 10}}
    script = {
        "game": "four-card-frenzy",
        "procedure": "manual-shoe",
        "seed": 4,
        "rounds": [{"deck": deck, "seats": seats}],
    }
    codes = CardCodes(KEY)
    from shoe import cards

    other = codes.make(0x3A7F, "R", cards.parse(deck[30]))
    with _emu.Emulator(state, uf2=image.get("uf2")) as e:
        with EmuTable(e, "rfid", event_timeout=900.0, pace=PACE) as t:
            port = t.port
            port.substitute[53 + 3] = lambda p, code: {
                "uid": p.uid_hex(p.uids[other]),
                "code": code,
            }
            t.runner.play(script, settle=False)
            st = t.runner.status()
        assert e.control("stats")["resets"] == 0
    assert_forged(t.runner.outcomes, "tag_changed")
    assert st["cloneable"] in (True, None), st  # plain tags


def assert_forged(outcomes, why):
    """The round's only outcome: void, card_forged, for the reader's reason `why`."""
    assert [k for _, k, _ in outcomes] == ["round_void"], outcomes
    body = outcomes[0][2]
    assert body["reason"] == "card_forged" and why in body["detail"], body
