"""The submission pack a gaming lab gets from one command (`shoectl certify pack`, `make pack`;
docs/certification.md "The submission pack"): par sheets of every preset pay table with charts,
the clause matrix, the firmware hashes and expected trees, the build and attestation
instructions, the protocol, journal and threat-model documents, the test report of the run,
an index (index.md, index.html) and a MANIFEST of every file's SHA-256.

    info = build(root, out, sim_rounds=None, test_report=None, ...)   # -> dict (run/pack.json)

Deterministic: the same commit and options give the same bytes everywhere but in run/ (the
run's times, the raw JUnit XML) and in the MANIFEST lines of run/'s files. The par sheets' times
are moved out of the sheets into run/pack.json, SVG charts carry no date and fixed ids.
"""

import contextlib
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from host_tools.cert import packdoc
from host_tools.errors import ShoeError

DOCS = (
    ("protocol.md", "the link protocol: frames, keys, commands, attestation"),
    ("journal.md", "the journal on flash: records, recovery, recall"),
    ("threat-model.md", "attackers, assets, what protects each and which test proves it"),
    ("certification.md", "clause matrix, reproducible builds, attestation procedure"),
    ("hardware.md", "building the frozen Pico image (make pico-firmware), wiring"),
    ("par.md", "how the par sheets are computed"),
)


@contextlib.contextmanager
def _fixed_svg(epoch):
    """matplotlib SVGs without the run's date and with fixed element ids."""
    import matplotlib

    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = str(epoch)
    try:
        with matplotlib.rc_context({"svg.hashsalt": "shoe-submission-pack"}):
            yield
    finally:
        if old is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = old


def _commit_epoch(root):
    p = subprocess.run(
        ["git", "-C", str(root), "log", "-1", "--format=%ct"], capture_output=True, text=True
    )
    return int(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip() else 0


def _outdir(out):
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not (out / packdoc.MANIFEST).is_file():
            raise ShoeError(
                "%s is not empty and holds no pack (no MANIFEST): not replacing it" % out
            )
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def par_sheets(out, presets, sim_rounds, seed, epoch, progress):
    """par/<name>.{md,html,json} and the charts; -> (rows for the index, times)."""
    from host_tools import par
    from host_tools.par import rendering

    d = out / "par"
    d.mkdir()
    sheets, times = [], {}
    for name in presets:
        progress("par sheet %s" % name)
        s = par.sheet(name, sim_rounds=sim_rounds, seed=seed)
        times[name] = s.pop("seconds")
        if "simulation" in s:
            times[name]["simulation_engine"] = s["simulation"].pop("seconds")
        with _fixed_svg(epoch):
            ret, hits = rendering.charts(s, "svg")
        for fmt in ("md", "json"):
            (d / ("%s.%s" % (name, fmt))).write_text(par.render(s, fmt))
        (d / ("%s.html" % name)).write_text(rendering.render(s, "html", (ret, hits)))
        (d / ("%s-return.svg" % name)).write_text(ret)
        if hits:
            (d / ("%s-hits.svg" % name)).write_text(hits)
        sheets.append((name, s, bool(hits)))
    return sheets, times


def firmware(root, out, worktree, variants, pico, pico_sources, pico_uf2, progress):
    from host_tools.cert import firmware as fw
    from host_tools.cert.fwreport import firmware_markdown, firmware_report

    vs = tuple(v for v in fw.VARIANTS if not variants or v[0] in variants)
    if variants and len(vs) != len(set(variants)):
        raise ShoeError(
            "unknown variant in %s (known: %s)"
            % (", ".join(variants), ", ".join(v[0] for v in fw.VARIANTS))
        )
    d = out / "firmware"
    with tempfile.TemporaryDirectory(prefix="shoe-pack-") as work:
        rep, trees = firmware_report(root, work, worktree, pico, pico_sources, progress, vs)
    for label, board, _reader in vs:
        fw.write_expected(trees[label], board, d / "expected" / label)
    if pico_uf2 and not rep["pico"].get("built"):
        import hashlib

        b = Path(pico_uf2).read_bytes()
        rep["pico"] = {
            "built": True,
            "source": "given with --pico-uf2 (%s): make sure it was "
            "built from the same commit" % Path(pico_uf2).name,
            "firmware.uf2": {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)},
        }
    times = {"mpy": rep.pop("mpy_seconds")}
    if "seconds" in rep["pico"]:
        times["pico"] = rep["pico"].pop("seconds")
    (d / "firmware.json").write_text(json.dumps(rep, indent=1, sort_keys=True) + "\n")
    (d / "firmware.md").write_text(firmware_markdown(rep))
    return rep, times


def run_tests(root, out, marker, progress):
    """Run the tests selected by `marker` with --junitxml into run/junit.xml."""
    junit = out / "run" / "junit.xml"
    junit.parent.mkdir(exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        marker,
        "--junitxml",
        str(junit),
    ]
    progress("running the tests: pytest -m %r (minutes)" % marker)
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=str(root), capture_output=True, text=True)
    if not junit.is_file():
        raise ShoeError(
            "pytest wrote no report (exit %d):\n%s" % (p.returncode, (p.stdout + p.stderr)[-2000:])
        )
    return junit, {
        "command": "python -m pytest -q -p no:cacheprovider -m %r --junitxml "
        "run/junit.xml" % marker,
        "exit": p.returncode,
        "seconds": round(time.monotonic() - t0, 1),
    }


def test_report(out, summary, how):
    d = out / "tests"
    d.mkdir(exist_ok=True)
    c = summary["counts"]
    st = {}
    for cl in summary["clauses"]:
        st[cl["status"]] = st.get(cl["status"], 0) + 1
    blocks = [
        ("h1", "Test report"),
        ("p", how),
        (
            "table",
            ("tests", "passed", "failed", "errors", "skipped"),
            [
                (
                    str(c["tests"]),
                    str(c["passed"]),
                    str(c["failed"]),
                    str(c["error"]),
                    str(c["skipped"]),
                )
            ],
        ),
        (
            "p",
            "Clauses of the shoe by the outcome of their tests in this run: "
            + ", ".join("%s %d" % kv for kv in sorted(st.items()))
            + ".",
        ),
        ("h2", "Tests not passed"),
        (
            "table",
            ("test", "outcome"),
            [(x["nodeid"], x["outcome"]) for x in summary["not_passed"]] or [("none", "")],
        ),
        ("h2", "Clauses"),
        (
            "table",
            ("clause", "tests in the matrix", "cases run", "outcome"),
            [(x["id"], str(x["tests"]), str(x["cases"]), x["status"]) for x in summary["clauses"]],
        ),
        ("h2", "Every case"),
        ("table", ("test", "outcome"), [(x["nodeid"], x["outcome"]) for x in summary["cases"]]),
    ]
    md, ht = packdoc.index(blocks, "Test report")
    (d / "test-report.md").write_text(md)
    (d / "test-report.html").write_text(ht)
    (d / "test-report.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")


def build(
    root,
    out,
    *,
    presets=None,
    sim_rounds=None,
    seed=1,
    test_report_xml=None,
    test_marker="clause",
    worktree=False,
    variants=None,
    pico=False,
    pico_sources=None,
    pico_uf2=None,
    progress=print,
):
    """Write the pack into `out` (empty, or a previous pack: replaced). -> run/pack.json's
    dict, with "problems" (a simulation that disagrees, a clause-matrix gap, a failed test)."""
    from host_tools.cert import matrix as _matrix
    from host_tools.cert import packindex
    from shoe.games.paytable import PRESETS

    root = Path(root)
    t0 = time.monotonic()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    out = _outdir(out)
    presets = list(presets or PRESETS)
    epoch = _commit_epoch(root)
    info = {
        "started": started,
        "seconds": {},
        "options": {
            "presets": presets,
            "sim_rounds": sim_rounds,
            "seed": seed,
            "worktree": worktree,
            "variants": list(variants or []),
            "test_marker": None if test_report_xml else test_marker,
            "test_report": str(test_report_xml) if test_report_xml else None,
        },
    }
    problems = []

    sheets, info["seconds"]["par"] = par_sheets(out, presets, sim_rounds, seed, epoch, progress)
    for name, s, _ in sheets:
        if s.get("simulation") and not s["simulation"]["agrees"]:
            problems.append("par sheet %s: the simulation disagrees with an exact figure" % name)

    progress("clause matrix")
    m = _matrix.build(root)
    for fmt in ("md", "html", "json"):
        (out / ("clause-matrix." + fmt)).write_text(_matrix.render(m, fmt))
    problems += ["clause matrix: %s" % p for p in m["problems"]]

    rep, info["seconds"]["firmware"] = firmware(
        root, out, worktree, variants, pico, pico_sources, pico_uf2, progress
    )

    d = out / "docs"
    d.mkdir()
    for name, _ in DOCS:
        shutil.copyfile(root / "docs" / name, d / name)

    if test_report_xml:
        junit_path = Path(test_report_xml)
        how = (
            "The JUnit XML report given with --test-report (%s), summarised; the pack did not "
            "run the tests." % junit_path.name
        )
        (out / "run").mkdir(exist_ok=True)
        shutil.copyfile(junit_path, out / "run" / "junit.xml")
    else:
        junit_path, info["tests"] = run_tests(root, out, test_marker, progress)
        info["seconds"]["tests"] = info["tests"].pop("seconds")
        how = (
            "The tests marked as proving a clause (`%s`), run by this pack's command on the "
            "tree the pack comes from; pytest exit code %d."
            % (info["tests"]["command"], info["tests"]["exit"])
        )
    summary = packdoc.junit(junit_path, root, m)
    test_report(out, summary, how + " The raw report with its times: run/junit.xml.")
    if not summary["counts"]["tests"]:
        problems.append("test report: it holds no test")
    if info.get("tests", {}).get("exit", 0) not in (0, 1):  # 1: tests failed (counted below)
        problems.append("test run: pytest exited %d" % info["tests"]["exit"])
    if summary["counts"]["failed"] or summary["counts"]["error"]:
        problems.append(
            "test report: %d failed, %d errors"
            % (summary["counts"]["failed"], summary["counts"]["error"])
        )

    info["problems"] = problems
    md, ht = packindex.index(m, sheets, rep, summary, problems, DOCS, info["options"])
    (out / "index.md").write_text(md)
    (out / "index.html").write_text(ht)
    info["seconds"]["total"] = round(time.monotonic() - t0, 1)
    (out / "run" / "pack.json").write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    (out / packdoc.MANIFEST).write_text(packdoc.manifest(out))
    return info
