"""Mutation smoke test: break the code of a clause on purpose and check that its marked tests
fail. A clause counts as tested only when a test fails with its protection removed.

    results = run(root, only=None, progress=print)   # [{"mutation", "clause", "outcome", ...}]

Each mutation replaces exact source snippets in a copy of the tree (never in `root`), then runs
that clause's tests (from the clause matrix, `-x`: the first failure is enough) in the copy with
the copy's own code on PYTHONPATH. Outcomes: "killed" (a test failed: good), "survived" (every
test passed: the tests do not prove the clause), "error" (the copy did not run: collection
error, timeout). `shoectl certify mutate` runs them; tests/host_tools/cert checks that every
snippet is still in the sources (a mutation that no longer applies is a failure, not a skip).
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from host_tools.cert import matrix

F = "firmware/shoe/"

# (name, clause, [(file, old, new), ...], what the mutation does)
MUTATIONS = [
    (
        "raise-kings-3x",
        "684a.11(b)(1)",
        [
            (
                F + "games/fcf.py",
                "(cat == PAIR and v & (_ACE << 13))",
                "(cat == PAIR and v & ((_ACE | _KING) << 13))",
            )
        ],
        "a pair of kings may raise 2x or 3x",
    ),
    (
        "dealer-opens-ace-only",
        "684a.11(c)(2)(i)",
        [(F + "games/fcf.py", "v & (_KING | _ACE) != 0", "v & _ACE != 0")],
        "king high no longer opens (ace high needed)",
    ),
    (
        "fold-returns-odds",
        "684a.11(b)(2)",
        [
            (
                F + "games/fcfround.py",
                "e_ante = entry(ante, LOST)\n            e_odds = entry(ante, LOST)",
                "e_ante = entry(ante, LOST)\n            e_odds = entry(ante, 0)",
            )
        ],
        "a fold pushes the Odds instead of losing it",
    ),
    (
        "no-bad-beat",
        "684a.11(c)(4)(i)(B)",
        [
            (
                F + "games/fcfround.py",
                "(odds_win if pv >= dv else odds_bad)",
                "(odds_win if pv >= dv else {})",
            )
        ],
        "a losing straight or better loses the Odds (no bad-beat payout)",
    ),
    (
        "ante-odds-unequal",
        "684a.7(d)(1)",
        [
            (F + "games/engine.py", "if amounts[0] != amounts[1]:", "if False:"),
            (F + "games/engine.py", '(n == 5 and ante != w.get("odds", 0))', "(n == 5 and False)"),
        ],
        "Ante and Odds of different amounts are accepted",
    ),
    (
        "wheel-not-straight",
        "rules:1.2-ace",
        [(F + "games/fcf.py", "_WHEEL = const(0x1007)", "_WHEEL = const(0x100F)")],
        "A-2-3-4 is no straight (A-2-3-4-5 needed)",
    ),
    (
        "automated-all-six-last-card",
        "rules:1.4-automated",
        [
            (
                F + "dealing/tracker.py",
                "return ALL_SIX if p % k == 0 else DISCARD",
                "return ALL_SIX if p % k == k - 1 else DISCARD",
            )
        ],
        "automated shoe: the All-Six card is the last card of its stack, not the first",
    ),
    (
        "duplicate-not-detected",
        "rules:3-duplicate",
        [
            (
                F + "deck/ledger.py",
                '        if has(self.seen, card):\n            return "card_duplicate"',
                '        if False:\n            return "card_duplicate"',
            )
        ],
        "a card dealt twice since the shuffle is accepted",
    ),
    (
        "foreign-serial-accepted",
        "rules:3-card-foreign",
        [
            (
                F + "deck/ledger.py",
                "        s = self.slots[slot]\n"
                "        if serial != s[_SERIAL] or back != s[_BACK]:",
                "        s = self.slots[slot]\n        if back != s[_BACK]:",
            )
        ],
        "a card of another deck with the same back colour is dealt",
    ),
    (
        "cover-card-dealt",
        "rules:3-cover-card",
        [
            (
                F + "deck/ledger.py",
                '        if card == _COVER:\n            return "cover_card"',
                '        if False:\n            return "cover_card"',
            )
        ],
        "the cover card during a deal is not an irregularity",
    ),
    (
        "foreign-stub-misdealt",
        "rules:3-stub-deck-wrong",
        [
            (
                F + "deck/ledger.py",
                "elif not missing and not self.p_extra_n and cover:",
                "elif cover:",
            )
        ],
        "a stub with a foreign card is only 'misdealt' (the deck stays)",
    ),
    (
        "no-shuffle-check",
        "rules:3-unshuffled",
        [
            (
                F + "table/round.py",
                'finding = self.shuffle.check(seq) if self.cfg["shuffle_check"] else None',
                "finding = None",
            )
        ],
        "an unshuffled deck settles",
    ),
    (
        "wagers-change-while-dealing",
        "684a.7(c)",
        [
            (
                F + "table/round.py",
                "def need_idle(self, what):\n    if self.rnd is not None:",
                "def need_idle(self, what):\n    if False:",
            )
        ],
        "open_round, configure and load_deck are accepted while a round is open",
    ),
    (
        "no-payout-limit",
        "rules:1.6-payout-limit",
        [
            (
                F + "games/fcfround.py",
                "capped = limit is not None and wins > limit",
                "capped = False",
            ),
            (F + "games/settle.py", "if limit is not None and wins > limit:", "if False:"),
        ],
        "the payout limit is ignored",
    ),
    (
        "hcf-dealer-ten-high",
        "rules:2.2-dealer-qualifies",
        [(F + "games/hcf.py", "(v & _RANKS) >= _NINE", "(v & _RANKS) >= _NINE << 1")],
        "the dealer needs a 10-high three-card flush to qualify",
    ),
    (
        "progressive-from-four",
        "678a.7(d)(4)",
        [
            (
                F + "games/hcfround.py",
                "if sf >= 3 and prog is not None:",
                "if sf >= 4 and prog is not None:",
            )
        ],
        "a three-card straight flush never hits a progressive tier",
    ),
    (
        "ack-with-table-key",
        "rules:3-supervisor-ack",
        [(F + "roles.py", " ack_error:supervisor ack:supervisor ", " ack_error:table ack:table ")],
        "a latched irregularity can be acknowledged with the table key",
    ),
]


def check_snippets(root):
    """Problems: mutation snippets that are not (exactly once) in the sources."""
    out = []
    for name, cid, edits, _ in MUTATIONS:
        for path, old, _new in edits:
            n = (Path(root) / path).read_text().count(old)
            if n != 1:
                out.append("mutation %s (%s): %r found %d times in %s" % (name, cid, old, n, path))
    return out


def _cost(nodeid):
    """Cheap tests first: the first failure ends the run (-x)."""
    slow = ("tests/e2e/", "tests/security/", "test_counts.py", "tests/emu/")
    return (any(s in nodeid for s in slow), nodeid)


def copy_tree(root, dest):
    root, dest = Path(root), Path(dest)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules", ".*", "build")
    for d in ("firmware", "board", "host_tools", "tests", "tools"):
        shutil.copytree(root / d, dest / d, ignore=junk)
    for f in ("pyproject.toml", "Makefile", "README.md"):
        shutil.copy(root / f, dest / f)
    return dest


def run(root, workdir, only=None, progress=None, timeout=1200):
    m = matrix.build(root)
    tests = {r["id"]: sorted({t["nodeid"] for t in r["tests"]}, key=_cost) for r in m["clauses"]}
    bad = check_snippets(root)
    if bad:
        raise RuntimeError("; ".join(bad))
    copy = copy_tree(root, Path(workdir) / "tree")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy), str(copy / "firmware")])
    results = []
    for name, cid, edits, what in MUTATIONS:
        if only and name not in only and cid not in only:
            continue
        saved = {}
        for path, old, new in edits:
            f = copy / path
            saved.setdefault(f, f.read_text())
            f.write_text(f.read_text().replace(old, new, 1))
        t0 = time.monotonic()
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            *tests[cid],
        ]
        try:
            p = subprocess.run(
                cmd, cwd=str(copy), env=env, capture_output=True, text=True, timeout=timeout
            )
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            rc, out = None, "timeout after %ds" % timeout
        finally:
            for f, text in saved.items():
                f.write_text(text)
        outcome = "killed" if rc == 1 else "survived" if rc == 0 else "error"
        failed = [x.split(" ")[1] for x in out.splitlines() if x.startswith("FAILED ")]
        r = {
            "mutation": name,
            "clause": cid,
            "what": what,
            "outcome": outcome,
            "seconds": round(time.monotonic() - t0, 1),
            "tests": len(tests[cid]),
            "failed": failed[:3],
            "files": sorted({e[0] for e in edits}),
        }
        if outcome == "error":
            r["output"] = out[-1500:]
        results.append(r)
        if progress:
            progress(
                "%-28s %-24s %-8s %5.1fs %s"
                % (name, cid, outcome, r["seconds"], failed[0] if failed else "")
            )
    return results
