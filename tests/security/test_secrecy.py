"""Nothing face down is readable before its time: a listener on the host cable, with no key.

A six-seat round of each game (FCF manual shoe with All-Six, FCF automated shoe with All-Six
and its four discards, HCF) is dealt on the virtual board (the firmware under MicroPython)
through a proxy that keeps every byte both ways. The attacker decodes what anyone can without
a key (COBS, CRC, frame header, fragments joined, the canonical CBOR of every message) and
searches all of it for every dealt card: as "8s", as a card code, as a card id in a field named
like a card. Before the round's `reveal` (sent when the last decision is accepted) it must find
none: not in the card events, not in deal_complete, not in the double_read or unreadable events
of the deal, not in a `status`, `recall` or `rounds` (a recall without a round) reply asked
mid-deal, not in the error of a refused raise. After the reveal it must find every one (so the
search itself works). A round voided mid-deal reveals first, then names the offending card.
The attacker holds the table key, the link's key (an insider: the table system, or a laptop
with its key file): it decrypts every DATA frame (tests.security.leaks.Insider). A keyless
listener reads less still (protocol 3 encrypts; tests/security/test_attacks.py): the
commitments, not the encryption, are what keeps the cards (docs/protocol.md section 10)."""

import random
import time

import pytest

from host_tools.errors import ShoeError
from host_tools.sim.faultproxy import DOWN, UP, FrameMitm
from host_tools.sim.provision_sim import DEMO_KEYS
from host_tools.sim.virtual_table import VirtualTable
from shoe.cards import name
from tests.e2e.conftest import Recorder
from tests.security import leaks

FCF, HCF = "four-card-frenzy", "high-card-flush"


class Listener(FrameMitm):
    """A passive listener on the cable: forwards every byte, keeps every byte with its time."""

    def __init__(self):
        super().__init__(None, keep=10**6)
        self.chunks = {UP: [], DOWN: []}

    def feed(self, direction, data):
        self.chunks[direction].append((time.monotonic(), bytes(data)))
        return super().feed(direction, data)


def stacked(seed):
    ids = list(range(52))
    random.Random(seed).shuffle(ids)
    return [name(c) for c in ids]


def seats(game):
    if game == HCF:
        w = {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 5}
    else:
        w = {"ante": 10, "odds": 10, "prime": 5, "four_card_bonus": 5, "all_six": 5}
    return {str(s): {"wagers": dict(w), "raise": 10} for s in range(1, 7)}


def dealt_count(game, proc):
    if game == HCF:
        return 49
    return 35 + (5 if proc == "automated-shoe" else 1)


def play_listened(tmp_path, game, proc, faults, seed):
    """One round through a listening proxy, with a status, a recall, the rounds list and a
    refused raise asked while the cards are face down. -> (listener, recorder, outcome kinds,
    deck order, the refused raise's message)."""
    order = stacked(seed)
    spec = {
        "game": game,
        "procedure": proc,
        "seed": seed,
        "shuffle_check": False,
        "double_reads": True,
        "rounds": [{"deck": order, "seats": seats(game), "faults": faults}],
    }
    listener = Listener()
    rec = Recorder()
    refused = []
    with VirtualTable(str(tmp_path / "state"), on_event=rec, faults={"hostile": listener}) as t:
        orig = t.runner.command

        def command(kind, body, supervisor=None):
            if kind == "decisions" and not refused:
                st = t.link.command("status", {})
                assert st["round"]["stage"] == "decisions"
                try:
                    t.link.command("recall", {"round": st["round"]["round"]})
                except ShoeError:
                    pass
                # `shoectl rounds`: the kept rounds' list (its reply crosses the cable too)
                assert "rounds" in t.link.command("recall", {})
                try:
                    orig("decisions", {"1": 7})
                except ShoeError as e:
                    refused.append(str(e))
            return orig(kind, body, supervisor)

        t.runner.command = command
        out = t.runner.play(spec)
    return listener, rec, [o[1] for o in out], order, refused


def split_at_reveal(listener):
    """The messages both ways as the table key's holder reads them, cut at the first fragment
    of the reveal (the moment the decisions closed, as the cable shows it).
    -> (before, after, t_reveal)."""
    ins = leaks.Insider(DEMO_KEYS["shoe"], listener.chunks[UP], listener.chunks[DOWN])
    down = leaks.messages(listener.chunks[DOWN], ins.open)
    up = leaks.messages(listener.chunks[UP], ins.open)
    first = [i for i, m in enumerate(down) if m[1] == "reveal"]
    assert first, "no reveal on the cable"
    i = first[0]
    t_rev = down[i][0]
    # the shoe's messages in the order they went (a flush shares one capture time), the
    # host's by time
    return (
        down[:i] + [m for m in up if m[0] < t_rev],
        down[i:] + [m for m in up if m[0] >= t_rev],
        t_rev,
    )


def search_all(msgs, cards):
    found = {}
    for _t, kind, body, payload in msgs:
        leaks.search(body, cards, "%s" % kind, found)
        leaks.search(payload, cards, "payload of %s" % kind, found)
    return found


def raw_before(listener, t_rev, cards):
    """Card codes in ASCII anywhere in the raw bytes before the reveal (undecoded too)."""
    found = {}
    for d in (UP, DOWN):
        for t, data in listener.chunks[d]:
            if t < t_rev:
                leaks.search(data, cards, "raw %s" % d, found)
    return found


CASES = [
    (FCF, "manual-shoe", [{"kind": "double-read", "at": 3}, {"kind": "no-read", "at": 7}], 11),
    (FCF, "automated-shoe", [{"kind": "double-read", "at": 38}], 12),
    (HCF, "manual-shoe", [{"kind": "double-read", "at": 3}, {"kind": "no-read", "at": 48}], 13),
]


@pytest.mark.parametrize("game,proc,faults,seed", CASES, ids=["fcf", "fcf-auto", "hcf"])
def test_a_listener_with_the_table_key_reads_no_face_down_card_before_the_decisions_close(
    tmp_path, game, proc, faults, seed
):
    listener, rec, out, order, refused = play_listened(tmp_path, game, proc, faults, seed)
    assert out == ["round_result"]
    n = dealt_count(game, proc)
    cards = order[:n]  # the dealer's, the players', All-Six, discards
    before, after, t_rev = split_at_reveal(listener)
    # the attacker saw the whole deal: the card events (commitments), deal_complete, the
    # double read and unreadable events, the status and recall replies, the refused raise
    kinds = [m[1] for m in before]
    assert kinds.count("card") >= n and "deal_complete" in kinds, kinds
    assert "double_read" in kinds and "error" in kinds and "reply" in kinds, kinds
    assert refused and "allowed" in refused[0], refused
    assert search_all(before, cards) == {}
    assert raw_before(listener, t_rev, cards) == {}
    # ... and after the reveal every card is there (the search finds what is readable)
    assert set(search_all(after, cards)) == set(cards)
    # the host (which holds the key) checked every commitment: no alert
    assert not rec.of("reveal_mismatch")
    [rev] = rec.of("reveal")
    assert rev["cards"] == cards


def test_a_void_mid_deal_reveals_first_then_names_the_card(tmp_path):
    """A duplicate at position 12 voids the round: the reveal goes first, so the irregularity
    that names the duplicate card (and every later event) comes after it on the cable."""
    listener, rec, out, order, _ = play_listened(
        tmp_path, FCF, "manual-shoe", [{"kind": "duplicate", "at": 12}], 21
    )
    assert out == ["round_void"]
    cards = order[:12]
    before, after, t_rev = split_at_reveal(listener)
    assert search_all(before, order) == {}  # no card of the deck at all before it
    kinds = [m[1] for m in after]
    assert kinds.index("reveal") < kinds.index("irregularity") < kinds.index("round_void")
    assert set(search_all(after, cards)) == set(cards)
    irq = [m[2] for m in after if m[1] == "irregularity"][0]
    assert order[0] in irq["detail"]  # the duplicate: the round's first card
    assert not rec.of("reveal_mismatch")


def test_a_power_cut_mid_deal_keeps_the_secret_and_the_reveal_opens_every_commitment(tmp_path):
    """The board is killed after the 10th card and powers up again (the journal keeps the
    round's secret); the deal goes on, and the reveal after the decisions opens the commitments
    made before the cut too: the host, which checks each one, raises no alert."""
    listener, rec, out, order, _ = play_listened(
        tmp_path, FCF, "manual-shoe", [{"kind": "power-cut", "at": 10}], 23
    )
    assert out == ["round_result"]
    n = dealt_count(FCF, "manual-shoe")
    before, after, _ = split_at_reveal(listener)
    assert search_all(before, order[:n]) == {}
    [rev] = rec.of("reveal")
    assert rev["cards"] == order[:n]
    assert len(rec.of("card")) == n and not rec.of("reveal_mismatch")
    assert len({h["boot"] for h in rec.of("hello")}) == 2, rec.of("hello")  # it booted again
