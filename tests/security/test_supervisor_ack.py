"""Acknowledging a latched irregularity needs the supervisor (rules.md 3), end to end on the
virtual board: the firmware's own roles table (shoe.roles: ack_error and ack are the
supervisor's) and the link's key check, not a test double. A forged card voids the round and
latches card_forged (blocking); `ack_error` signed with the table key is refused and changes
nothing; signed with the supervisor key it clears the irregularity and the next round can open."""

import random

import pytest

from host_tools.errors import ShoeError
from host_tools.sim.virtual_table import VirtualTable
from tests.e2e.conftest import Recorder

ALL = [r + s for r in "23456789TJQKA" for s in "cdhs"]


@pytest.mark.clause("rules:3-supervisor-ack", "rules:3-latched")
def test_ack_error_needs_the_supervisor_key(tmp_path):
    from shoe import cards

    with VirtualTable(str(tmp_path), on_event=Recorder()) as t:
        r = t.runner
        r.command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe"})
        r.load_and_check(0x3A7F, "R", seed=1)
        deck = ALL[:]
        random.Random(4).shuffle(deck)
        spec = {
            "deck": deck,
            "faults": [{"kind": "forged", "at": 2}],
            "seats": {"1": {"wagers": {"ante": 10, "odds": 10}, "raise": 10}},
        }
        r.play_round(spec, [cards.parse(c) for c in deck], random.Random(1))
        st = r.status()
        latched = st["latched"]
        assert [i["reason"] for i in latched] == ["card_forged"] and latched[0]["blocks"]
        assert st["phase"] == "blocked"
        with pytest.raises(ShoeError) as e:  # the table key: refused, nothing changes
            t.link.command("ack_error", {"id": latched[0]["id"]}, supervisor=False, timeout=10)
        assert e.value.reason == "needs_supervisor"
        with pytest.raises(ShoeError) as e:  # nor through the table's own `ack`
            t.link.command("ack", {"all": True}, supervisor=False, timeout=10)
        assert e.value.reason == "needs_supervisor"
        st = r.status()
        assert st["latched"] == latched and st["phase"] == "blocked"
        t.link.command("ack_error", {"id": latched[0]["id"]}, supervisor=True, timeout=10)
        st = r.status()
        assert st["latched"] == [] and st["phase"] != "blocked"
