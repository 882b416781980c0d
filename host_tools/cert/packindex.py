"""The submission pack's index page (index.md and index.html, host_tools/cert/pack.py): what is
in the pack, the headline figures (house edge of every wager of every preset table, clause
counts, firmware manifests, test counts) and a link to every part."""

from host_tools.cert import packdoc
from host_tools.par.rendering import GAMES, pct


def _sim(x):
    s = x.get("simulation")
    if not s:
        return "not run"
    return "z = %+.2f (%s)" % (s["z"], "agrees" if s["agrees"] else "DISAGREES")


def _par(sheets, options):
    if options["sim_rounds"] == 0:
        sim = "not run: --sim-rounds 0"
    else:
        sim = "%s rounds of six seats per table, seed %d" % (
            options["sim_rounds"]
            if options["sim_rounds"] is not None
            else "the default number of (30,000 FCF, 20,000 HCF)",
            options["seed"],
        )
    b = [
        ("h2", "1. Par sheets"),
        (
            "p",
            [
                "Every preset pay table, every wager: combinations, probability, pay and "
                "contribution of each outcome, exact (the method beside each figure), "
                "cross-checked by a seeded simulation through the firmware's engine (%s). "
                "How they are computed: " % sim,
                ("docs/par.md", "docs/par.md"),
                ".",
            ],
        ),
    ]
    for name, s, hits in sheets:
        game = GAMES[s["game"]]
        b += [
            ("h3", "%s (%s)" % (name, game)),
            (
                "p",
                [
                    "Sheet: ",
                    ("Markdown", "par/%s.md" % name),
                    ", ",
                    ("HTML", "par/%s.html" % name),
                    ", ",
                    ("JSON", "par/%s.json" % name),
                    ". Pay table digest %s." % (s["paytable"]["digest"] or "-"),
                ],
            ),
        ]
        mg = s["main_game"]
        rows = [
            (
                "main game (per hand)",
                "%+.6f" % mg["return_per_hand"],
                pct(mg["house_edge_per_hand"]),
                "-",
                _sim(mg),
            )
        ]
        rows += [
            (
                w["title"],
                "%+.6f" % w["return"],
                pct(w["house_edge"]),
                pct(w["hit_frequency"]),
                _sim(w),
            )
            for w in s["wagers"]
        ]
        b.append(
            (
                "table",
                ("wager", "return per unit", "house edge", "hit frequency", "simulation"),
                rows,
            )
        )
        b.append(("img", "%s: return by outcome" % name, "par/%s-return.svg" % name))
        if hits:
            b.append(("img", "%s: hit frequencies" % name, "par/%s-hits.svg" % name))
    return b


def _matrix(m):
    c = m["counts"]
    return [
        ("h2", "2. Clause matrix"),
        (
            "p",
            [
                "Every clause of the rules the shoe enforces, its code and the tests that "
                "prove it: ",
                ("clause-matrix.md", "clause-matrix.md"),
                ", ",
                ("HTML", "clause-matrix.html"),
                ", ",
                ("JSON", "clause-matrix.json"),
                ". %d clauses (%d of the shoe, %d outside it), %d code locations, %d tests; "
                "%d problems."
                % (
                    c["clauses"],
                    c["shoe"],
                    c["outside"],
                    c["code_locations"],
                    c["tests"],
                    len(m["problems"]),
                ),
            ],
        ),
    ]


def _firmware(rep):
    rows = [
        (
            label,
            "`%s`" % v["deploy"],
            v["version"],
            str(v["files"]),
            [
                (
                    "%s" % v["attest_manifest"],
                    "firmware/expected/%s/%s/DEPLOYED" % (label, v["version"]),
                )
            ],
        )
        for label, v in rep["variants"].items()
    ]
    p = rep["pico"]
    if p.get("built"):
        frozen = "the frozen Pico image firmware.uf2 has SHA-256 %s" % p["firmware.uf2"]["sha256"]
    else:
        frozen = "the frozen Pico image is not in this pack: %s" % p["why"]
    return [
        ("h2", "3. Firmware hashes, build and attestation"),
        (
            "p",
            [
                "Built from %s with %s. Every file's SHA-256 and the "
                "attestation procedure: "
                % (
                    "commit %s (a clean clone)" % rep["commit"]
                    if rep["commit"]
                    else "the working tree",
                    rep["mpy_cross"]["version"]
                    or "mpy-cross (.mpy v%s)" % rep["mpy_cross"]["mpy_version"],
                ),
                ("firmware/firmware.md", "firmware/firmware.md"),
                " (",
                ("JSON", "firmware/firmware.json"),
                "); ",
                frozen,
                ". The version "
                "directory of each variant as a shoe holds it, to verify a shoe against "
                "(`shoectl verify --firmware firmware/expected/<variant>/v-<hash>`), is "
                "under firmware/expected/ (each row links its DEPLOYED marker). How to "
                "rebuild and check the bytes, and what attestation does not cover: ",
                ("docs/certification.md", "docs/certification.md"),
                " section 2; the frozen image: ",
                ("docs/hardware.md", "docs/hardware.md"),
                ".",
            ],
        ),
        (
            "table",
            ("variant", "deploy command", "version directory", "files", "attestation manifest"),
            rows,
        ),
    ]


def _docs(docs):
    return [
        ("h2", "4. Documents"),
        (
            "table",
            ("document", "what"),
            [([("docs/" + n, "docs/" + n)], what) for n, what in docs],
        ),
    ]


def _tests(summary):
    c = summary["counts"]
    bad = [x for x in summary["clauses"] if x["status"] != "passed"]
    return [
        ("h2", "5. Test report"),
        (
            "p",
            [
                "%d tests: %d passed, %d failed, %d errors, %d skipped; %d of %d clauses of "
                "the shoe had every test run pass. "
                % (
                    c["tests"],
                    c["passed"],
                    c["failed"],
                    c["error"],
                    c["skipped"],
                    len(summary["clauses"]) - len(bad),
                    len(summary["clauses"]),
                ),
                ("tests/test-report.md", "tests/test-report.md"),
                ", ",
                ("HTML", "tests/test-report.html"),
                ", ",
                ("JSON", "tests/test-report.json"),
                ", the raw report ",
                ("run/junit.xml", "run/junit.xml"),
                ".",
            ],
        ),
    ]


def index(m, sheets, rep, summary, problems, docs, options):
    """(index.md, index.html)."""
    src = m["source"]
    blocks = [
        ("h1", "Submission pack: the smart dealing shoe"),
        (
            "p",
            "Made by `shoectl certify pack` from commit %s%s. Check it with "
            "`sha256sum -c MANIFEST` in this directory; everything but run/ (the "
            "run's times and raw test report) is the same bytes when made again from "
            "the same commit with the same options."
            % (
                src.get("commit") or "(not a git checkout)",
                " with local changes" if src.get("modified") else "",
            ),
        ),
        (
            "p",
            [
                ("MANIFEST", "MANIFEST"),
                " (SHA-256 of every file), ",
                ("run/pack.json", "run/pack.json"),
                " (options, start time, times).",
            ],
        ),
    ]
    if problems:
        blocks += [("h2", "Problems"), ("table", ("problem",), [(p,) for p in problems])]
    blocks += _par(sheets, options) + _matrix(m) + _firmware(rep) + _docs(docs) + _tests(summary)
    return packdoc.index(blocks, "Submission pack")
