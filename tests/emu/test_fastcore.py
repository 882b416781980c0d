"""The emulated Pico's faster core (host_tools/sim/emu/fastcore.js) runs the same instructions as
rp2040js's own: the dispatch chosen for every 16-bit opcode, and every opcode executed on both
from the same state."""

import json
import subprocess
from pathlib import Path

from host_tools.sim import emu as _emu

ROOT = Path(__file__).resolve().parents[2]


def _node(*argv):
    p = subprocess.run([_emu.node(), *argv], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr[-800:]
    return json.loads(p.stdout.splitlines()[-1])


def test_the_switch_picks_the_chains_branch_for_every_opcode():
    """fastcore's check(): for all 65,536 first halfwords, with 75 second halfwords each (the
    wide instructions' own patterns among them), the branch the switch runs is the one the
    library's chain of tests runs (or none for both)."""
    r = _node(str(_emu.HERE / "fastcore.js"))
    assert r["ok"], r
    assert r["compared"] == 65536 * 75 and r["branches"] > 70, r


def test_every_opcode_leaves_the_same_state_on_both_cores():
    """Each opcode run once on each core from the same random registers, flags and memory:
    the same registers, flags, exception state, cycles and memory accesses, in order."""
    for seed in (1, 2):
        r = _node(str(ROOT / "tests" / "emu" / "fastcore_diff.js"), str(seed))
        assert r == {"ok": True, "ran": 65536}, str(r)[:1500]
