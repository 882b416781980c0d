"""What the table does with a damaged journal (Table.journal_damaged, called by the app at boot
when the journal reports corruption): journal_corrupt is latched and blocks until a supervisor
acknowledges it; a state that may be stale voids the open round and takes the decks out."""

import pytest

from shoe import reasons as R
from tests.firmware.table.helpers import FCF, kinds, make, seats_body, shuffled
from tests.firmware.table.test_irregularities import recover


@pytest.mark.clause("irr:journal-corrupt")
def test_a_stale_state_voids_the_open_round_and_blocks_until_acknowledged():
    t = make(FCF, "manual-shoe")
    t.command("open_round", seats_body(FCF, (1, 3)), 1)
    for c in shuffled(7)[:4]:
        t.card(0x3A7F, "R", c, 1)
    t.pop_events()
    t.journal_damaged("journal: 1 bad region(s)", True, 2)
    ev = t.pop_events()
    void = [b for k, b in ev if k == "round_void"]
    assert void and void[0]["reason"] == "journal_corrupt"
    irq = [b for k, b in ev if k == "irregularity"][0]
    assert irq["reason"] == "journal_corrupt" and irq["blocks"] and irq["latched"]
    assert t.rnd is None and t.current_phase() == "blocked"
    try:
        t.command("open_round", seats_body(FCF, (1,)), 3)
        raise AssertionError("a round opened over journal_corrupt")
    except ValueError as e:
        assert e.reason == "blocked"
    recover(t, 4)  # acknowledge, then load and check a deck again
    assert [i for i in t.latched if i["reason"] == "journal_corrupt"] == []
    t.command("open_round", seats_body(FCF, (1,)), 5)
    assert t.rnd is not None


@pytest.mark.clause("irr:journal-corrupt")
def test_an_exact_state_only_latches():
    t = make(FCF, "manual-shoe")
    t.journal_damaged("journal: 1 bad region(s)", False, 2)
    assert kinds(t.pop_events()).count("irregularity") == 1
    assert t.ledger.status(0) != 3 and t.current_phase() == "blocked"
    t.command("ack", {"all": True}, 3, "supervisor")
    assert t.current_phase() == "open_round"


def test_journal_corrupt_is_a_listed_blocking_irregularity():
    assert ("journal_corrupt", "void_quarantine") in R.irregularities()
    assert R.blocks("journal_corrupt")


def test_the_journals_marks_give_back_the_latched_list_and_the_numbers():
    """A damaged end of the journal (issue 18): the state is older than what happened; the
    marks (kept) hold the latched irregularities and the round and irregularity numbers."""
    t = make(FCF, "manual-shoe")
    t.pop_events()
    kept = {
        "latched": [
            {
                "id": 4,
                "reason": "lid_open",
                "action": "event",
                "latched": True,
                "round": None,
                "blocks": False,
                "detail": None,
            }
        ],
        "n": 6,
        "irq": 4,
    }
    t.journal_damaged("journal: end damaged", True, 2, 5, kept, [5])
    ev = t.pop_events()
    assert [i["reason"] for i in t.latched] == ["lid_open", "journal_corrupt"]
    assert t.latched[1]["id"] == 5 and t.n_irq >= 5 + 16
    # round 6 was opened in the lost records and never ended: void (the host may hold it)
    assert [b["round"] for k, b in ev if k == "round_void"] == [6] and t.n_round == 6
    t.command("ack", {"all": True}, 3, "supervisor")
    recover(t, 4)
    t.command("open_round", seats_body(FCF, (1,)), 5)
    assert t.rnd.n == 7


def test_a_stale_open_round_that_ended_is_not_voided_again():
    t = make(FCF, "manual-shoe")
    t.command("open_round", seats_body(FCF, (1, 3)), 1)
    n = t.rnd.n
    t.pop_events()
    t.journal_damaged("journal: end damaged", True, 2, n, {"latched": [], "n": n, "irq": 0}, [n])
    ev = t.pop_events()
    assert [k for k, b in ev if k == "round_void"] == [] and t.rnd is None
    assert [i["reason"] for i in t.latched] == ["journal_corrupt"]
