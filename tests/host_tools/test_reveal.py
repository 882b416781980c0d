"""The host checks every commitment at the reveal (host_tools/reveal.py): a lying shoe (its own
key, so every event it sends is genuine on the link) is caught by ShoeLink as the events
arrive (a `reveal_mismatch` event after the one that showed it, and a flag in the audit store),
and again by `shoectl verify` over the stored log. The floor collector's own check is
tests/host_tools/floor/test_reveal.py."""

import json
import subprocess
import sys

import pytest

from host_tools.audit import AuditStore
from host_tools.link import ShoeLink
from host_tools.reveal import RoundWatch, audit, check_reveal
from host_tools.sim.floor.simshoe import SimShoe, make_keys
from shoe.commitment import commit
from tests.host_tools.lying import HOW, POS, lying_round
from tests.support import wait_for


def _play(tmp_path, how, seed=3):
    """One round of a (lying) simulated shoe into ShoeLink + AuditStore. -> (events the link
    queued, the store, the shoe, its keys)."""
    keys = make_keys(seed)
    shoe = SimShoe("L001", keys, seed=seed, seats=(6, 6))
    shoe._plan = lying_round(shoe, how)
    n = len(shoe._plan)
    store = AuditStore(tmp_path / "a.sqlite")
    link = ShoeLink(
        "sim://L001",
        keys["shoe"],
        audit=store,
        open_port=lambda u: shoe.open_port(u, 0.05),
        read_timeout=0.05,
    )
    got = []
    try:
        link.open(timeout=10)
        for _ in range(n):
            shoe.step()

        def drained():
            while True:
                ev = link.next_event(0.01)
                if ev is None:
                    break
                got.append(ev)
            return store.last_eseq("L001") >= n and any(k == "round_result" for k, _, _ in got)

        wait_for(drained, timeout=20, what="the round stored and delivered")
        while True:  # what follows the result (an alert)
            ev = link.next_event(0.2)
            if ev is None:
                break
            got.append(ev)
    finally:
        link.close()
    return got, store, shoe, keys


@pytest.mark.parametrize("how", HOW)
def test_the_link_and_verify_catch_a_lying_shoe(tmp_path, how):
    got, store, shoe, keys = _play(tmp_path, how)
    try:
        alerts = [b for k, b, e in got if k == "reveal_mismatch"]
        flags = store.flags("L001")
        rep = store.verify("L001", keys["shoe"])
    finally:
        store.close()
    assert rep["bad_mac"] == [] and rep["broken"] == []  # every event is genuine
    if how == "honest":
        assert alerts == [] and flags == [] and rep["reveal"] == []
        return
    want = {
        "changed": "position %d: the revealed card" % POS,
        "missing": "position %d: revealed" % POS,
        "result": "in the result are not the revealed",
    }[how]
    for found in (alerts, flags, rep["reveal"]):
        assert any(want in a["detail"] for a in found), (how, found)
    assert all(a["kind"] == "reveal_mismatch" for a in flags)
    # the alert follows the event that showed it (the reveal, or the result)
    kinds = [k for k, _, _ in got]
    at = kinds.index("reveal_mismatch")
    assert kinds[at - 1] == ("round_result" if how == "result" else "reveal"), kinds


@pytest.mark.parametrize("how", HOW)
def test_shoectl_verify_fails_on_a_lying_shoes_log(tmp_path, how):
    got, store, shoe, keys = _play(tmp_path, how, seed=4)
    store.close()
    keyfile = tmp_path / "keys.json"
    keyfile.write_text(
        json.dumps({"shoe_id": "L001", "keys": {k: v.hex() for k, v in keys.items()}})
    )
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "host_tools",
            "verify",
            "--shoe",
            "L001",
            "--db",
            str(tmp_path / "a.sqlite"),
            "--keys",
            str(keyfile),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if how == "honest":
        assert p.returncode == 0, p.stderr
        assert "reveal mismatches 0" in p.stdout
    else:
        assert p.returncode == 1, (p.stdout, p.stderr)
        assert "reveal_mismatch" in p.stderr


SECRET = bytes(range(16))


def _cards(n, target="dealer"):
    shown = ["%s%s" % (r, s) for r in "23456789TJQKA" for s in "cdhs"][:n]
    evs = [
        {"round": 5, "position": p, "target": target, "commit": commit(SECRET, 5, p, target, c)}
        for p, c in enumerate(shown)
    ]
    return shown, evs


def test_check_reveal_names_each_kind_of_lie():
    shown, evs = _cards(6)
    rev = {"round": 5, "secret": SECRET, "cards": shown}
    assert check_reveal(rev, evs) == []
    assert check_reveal(dict(rev, secret=SECRET.hex()), evs) == []  # as a JSON store holds it
    swapped = dict(rev, cards=shown[:2] + ["As"] + shown[3:])
    assert check_reveal(swapped, evs) == [
        "round 5 position 2: the revealed card As does not match its commitment"
    ]
    assert (
        "position 5: committed but not revealed"
        in check_reveal(dict(rev, cards=shown[:5]), evs)[0]
    )
    assert (
        "position 3: revealed (2s) but never committed" in check_reveal(rev, evs[:3] + evs[4:])[0]
    )
    assert any(
        "names 2c 2 times" in p
        for p in check_reveal(dict(rev, cards=["2c"] + shown[1:5] + ["2c"]), evs)
    )
    assert "malformed" in check_reveal(dict(rev, secret=b"short"), evs)[0]
    other_target = [dict(e, target="1") if e["position"] == 1 else e for e in evs]
    assert check_reveal(rev, other_target) == [
        "round 5 position 1: the revealed card 2d does not match its commitment"
    ]
    other_round = dict(rev, round=6)
    assert len(check_reveal(other_round, evs)) == 6


def test_a_watch_that_starts_mid_round_loads_what_it_missed_and_checks_everything():
    shown, evs = _cards(6)
    rev = {"round": 5, "secret": SECRET, "cards": shown}
    stored = [("round_open", {"round": 5})] + [("card", e) for e in evs[:4]]
    w = RoundWatch(loader=lambda n: stored if n == 5 else [])
    for e in evs[3:]:  # the first one it sees is also in the store
        assert w.feed("card", e) == []
    assert w.feed("reveal", rev) == []
    assert w.hands(5) == {"dealer": shown, "all_six": None}
    swapped = dict(rev, cards=["As"] + shown[1:])
    w2 = RoundWatch(loader=lambda n: stored + [("card", e) for e in evs[4:]])
    assert len(w2.feed("reveal", swapped)) == 1
    # a card committed after the reveal, or twice with other contents, is a lie too
    assert "committed after the reveal" in w2.feed("card", dict(evs[0], position=9))[0][2]
    w3 = RoundWatch()
    w3.feed("card", evs[0])
    assert "committed twice" in w3.feed("card", dict(evs[0], commit=bytes(16)))[0][2]


def test_a_log_from_firmware_that_sent_cards_in_clear_is_not_flagged():
    """An audit store written before the secrecy change: card events with the card in clear,
    no reveal. verify checks the results against those cards and flags nothing else."""
    evs = [{"eseq": 1, "kind": "round_open", "body": {"round": 1}}]
    hand = ["As", "Ks", "Qs", "Js", "2d"]
    dealer = ["Ah", "Kd", "7c", "7s", "2h"]
    p = 0
    for i in range(5):
        for t, c in (("1", hand[i]), ("dealer", dealer[i])):
            evs.append(
                {
                    "eseq": len(evs) + 1,
                    "kind": "card",
                    "body": {"round": 1, "position": p, "target": t, "card": c},
                }
            )
            p += 1
    res = {
        "type": "round_result",
        "round": 1,
        "dealer": {"cards": dealer},
        "seats": {"1": {"cards": hand}},
    }
    assert audit(evs + [{"eseq": 20, "kind": "round_result", "body": res}]) == []
    bad = dict(res, seats={"1": {"cards": hand[:4] + ["3c"]}})
    assert len(audit(evs + [{"eseq": 20, "kind": "round_result", "body": bad}])) == 1


def test_a_round_that_ends_without_its_reveal_is_flagged():
    shown, evs = _cards(3)
    log = [{"eseq": 1, "kind": "round_open", "body": {"round": 5}}]
    log += [{"eseq": 2 + i, "kind": "card", "body": e} for i, e in enumerate(evs)]
    void = {"eseq": 9, "kind": "round_void", "body": {"round": 5, "reason": "power_loss"}}
    [a] = audit(log + [void])
    assert "without a reveal" in a["detail"] and a["eseq"] == 9
    res = {
        "eseq": 9,
        "kind": "round_result",
        "body": {"type": "round_result", "round": 5, "dealer": {"cards": shown}, "seats": {}},
    }
    assert "without a reveal" in audit(log + [res])[0]["detail"]
    assert "a result without a reveal" in audit(log[:1] + [res])[0]["detail"]
    # a void before any card, from firmware that did not reveal: nothing to reveal
    assert audit(log[:1] + [void]) == []
