"""The demo's players and script (host_tools/sim/demo.py), without a board."""

from host_tools.sim.demo import FAULT_KINDS, demo_script, strategy
from host_tools.sim.session import load_script


def test_script_is_a_valid_session_script_fixed_by_its_seed():
    a = demo_script(12, 7, 0.1)
    assert a == demo_script(12, 7, 0.1) and a != demo_script(12, 8, 0.1)
    load_script(a)
    assert len(a["rounds"]) == 12 and all(len(r["seats"]) == 6 for r in a["rounds"])
    faulty = [r["faults"] for r in a["rounds"] if r["faults"]]
    assert faulty, "at least one round of three or more gets a fault"
    kinds = {f["kind"] for fs in faulty for f in fs}
    assert kinds <= set(FAULT_KINDS) | {"no-read"}
    assert not any(r["faults"] for r in demo_script(12, 7, 0)["rounds"])


def test_strategy_raises_3x_on_aces_1x_on_a_pair_and_folds_otherwise():
    seats = {
        "1": {"wagers": {"ante": 10}},
        "2": {"wagers": {"ante": 10}},
        "3": {"wagers": {"ante": 10}},
    }
    hands = {
        "1": ["As", "Ad", "7c", "4h", "2s"],
        "2": ["9s", "9d", "7c", "4h", "2s"],
        "3": ["Ks", "Jd", "7c", "4h", "2s"],
    }
    assert strategy(None, hands, seats) == {"1": 30, "2": 10, "3": 0}


def test_the_players_decide_from_their_cards_on_the_table(tmp_path):
    """The shoe names no card before the decisions close, so a player looks at the table: the
    runner gives the strategy what the world's dealer put where (the card events' public
    targets). Those are exactly the hands the round's reveal opens afterwards, and every seat's
    raise is what the strategy makes of its own hand."""
    from host_tools.sim.virtual_table import VirtualTable
    from tests.e2e.conftest import Recorder

    seen = []

    def player(rnd, hands, seats):
        seen.append({k: list(v) for k, v in hands.items()})
        return strategy(rnd, hands, seats)

    rec = Recorder()
    with VirtualTable(str(tmp_path / "flash"), on_event=rec) as t:
        t.runner.strategy = player
        outcomes = t.runner.play(demo_script(2, 5, 0))
    assert [o[1] for o in outcomes] == ["round_result", "round_result"]
    for hands, rev, res in zip(seen, rec.of("reveal"), rec.of("round_result")):
        targets = {
            c["position"]: c["target"] for c in rec.of("card") if c["round"] == rev["round"]
        }
        opened = {}
        for p, c in enumerate(rev["cards"]):
            opened.setdefault(targets[p], []).append(c)
        assert hands == opened
        want = strategy(
            None,
            hands,
            {
                s: {"wagers": {"ante": res["seats"][s]["wagers"]["ante"]["amount"]}}
                for s in res["seats"]
            },
        )
        got = {s: v["wagers"].get("raise", {}).get("amount", 0) for s, v in res["seats"].items()}
        assert got == want
