"""A dealer's pace on the firmware that ships (the frozen image, docs/hardware.md section 5):
every card dealt at 250 ms and the deck check and stub riffled at 120 ms a card, through each
reader, on the emulated Pico; every
card read once (the results equal the unix board's: a missed card is a misdeal, a doubled one a
duplicate, either voids the round), every event once, no reset, and no reader byte lost to an
overrun (the rig loses a byte due at a full receive FIFO, as the chip does while flash is
programmed or erased with interrupts off: tests/emu/test_rig.py; a host frame so lost is sent
again by the link).

The shoe is made as a technician makes one from the image: the UF2 on a blank board, then
`shoectl flash --no-image --port REPL [--reader optical]` (main.py, the wiring) and
`shoectl provision`. In `make test`: one round through the RFID reader, the same session as
test_e2e's RFID round (played once for the run, tests/emu/test_e2e.dealers_pace_rfid, about 3
minutes of one core on a loaded machine); SHOE_EMU_E2E=1 adds the optical reader;
SHOE_SOAK=full: 50 rounds each (SHOE_EMU_PACE_ROUNDS; SHOE_EMU_PACE_MS and SHOE_EMU_RIFFLE_MS
to try another pace).
Needs the frozen image (`make pico-firmware`; `.ci/run` builds it), else skips.
"""

import os

import pytest

from host_tools import frozen
from tests.emu.test_e2e import (  # noqa: F401 - unix_results: a fixture
    SOAK,
    as_json,
    check_once_and_none_missing,
    dealers_pace_rfid,
    play_record,
    rfid_pace,
    script,
    unix_results,
)

pytestmark = pytest.mark.skipif(
    not frozen.DEFAULT_UF2.is_file(),
    reason="no frozen image: `make pico-firmware` builds build/pico-firmware/firmware.uf2",
)

ROUNDS = int(os.environ.get("SHOE_EMU_PACE_ROUNDS", "50" if SOAK else "1"))
PITCH_MS = int(os.environ.get("SHOE_EMU_PACE_MS", "250"))
RIFFLE_MS = int(os.environ.get("SHOE_EMU_RIFFLE_MS", "120"))  # the deck check and the stub
# a tag stays in the field 80 % of the pitch and the card breaks the beam at 70 %; a printed
# code is read as it passes the optical module, the beam 40 ms later
PACE = {
    "rfid": {
        "pitch_ms": PITCH_MS,
        "dwell_ms": PITCH_MS * 4 // 5,
        "beam_at_ms": PITCH_MS * 7 // 10,
        "riffle_ms": RIFFLE_MS,
    },
    "optical": {"pitch_ms": PITCH_MS, "beam_at_ms": 40, "riffle_ms": RIFFLE_MS},
}
GAME = {"rfid": "four-card-frenzy", "optical": "high-card-flush"}


@pytest.fixture(
    scope="module",
    params=[
        "rfid",
        pytest.param(
            "optical",
            marks=pytest.mark.skipif(
                not (SOAK or os.environ.get("SHOE_EMU_E2E")),
                reason="the optical reader at this pace on the frozen image: SHOE_SOAK=full or "
                "SHOE_EMU_E2E=1 (make test plays it with the .mpy deploy, test_e2e)",
            ),
        ),
    ],
)
def frozen_shoe(request, frozen_image):
    """The frozen image flashed and provisioned for the reader (tests/emu/conftest.py
    frozen_image: made once for the run, shared with test_e2e's chip sessions)."""
    return dict(frozen_image(request.param), reader=request.param)


def test_every_card_at_a_dealers_pace_on_the_frozen_image(
    frozen_shoe,
    tmp_path,
    tmp_path_factory,
    unix_results,  # noqa: F811 - the fixture imported above
):
    reader = frozen_shoe["reader"]
    s = script(GAME[reader], rounds=ROUNDS)
    if reader == "rfid" and ROUNDS == 1 and PACE["rfid"] == rfid_pace():
        # the same session as test_e2e's RFID round (one round of FCF at this pace on this
        # image): played once for the run, checked here for what this file asks of it
        rec = dealers_pace_rfid(tmp_path_factory, frozen_shoe)
    else:
        rec = play_record(tmp_path, frozen_shoe, reader, GAME[reader], PACE[reader], ROUNDS)
    stats, presented = rec["stats"], rec["presented"]
    # no watchdog reset (the message says where the chip was: control `watchdog`)
    assert stats["resets"] == 0, (stats["reset_causes"], stats["starved"])
    # the rig found mp_hal_delay_us's spin in the image and skipped it (rig.js findWaitLoop):
    # without it the suite runs every busy wait of the RFID driver, instruction by instruction
    assert stats["fast_wait"], "no mp_hal_delay_us loop found in %s" % frozen_shoe["uf2"]
    if reader == "rfid":  # every tag answered the reader, and was read, while in the field
        field = stats["rfid_field"]
        assert field["heard"] == field["cards"] and not field["unread"], (
            field,
            stats["rfid_polls"],
        )
        # ... its memory too (a plain tag read whole before is reported by its UID, and its
        # memory compared with the next poll: shoe/drivers/rfid.py)
        assert not field["unchecked"], "%s; polls %s" % (field, stats["rfid_polls"])
    assert rec["kinds"] == ["round_result"] * ROUNDS, rec["kinds"]
    assert rec["results"] == as_json(unix_results(s))  # every card once, right
    check_once_and_none_missing(rec["eseqs"])
    # no byte lost at a full receive FIFO (the rig overruns as the chip does while it programs
    # or erases flash with interrupts off): none of the reader's, and none of the host's since
    # the wiring turns UART0's RTS flow control on (before, a host frame that came during an
    # erase was lost and sent again by the link)
    assert stats["rx_overrun"] == [0, 0], stats["rx_overrun"]
    # the pace held: cards went in at the pitch asked, in emulated time (the deck check's 52
    # gaps at the riffle's, then the round's at the dealing pitch)
    gaps = [(b - a) / 1e6 for a, b in zip(presented, presented[1:])]
    riffle, dealt = sorted(gaps[:52]), sorted(gaps[53 : 53 + 10])
    assert riffle[len(riffle) // 2] <= RIFFLE_MS * 1.5, riffle
    assert dealt[len(dealt) // 2] <= PITCH_MS * 1.5, dealt
