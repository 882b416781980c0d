"""The submission pack (host_tools/cert/pack.py, `shoectl certify pack`): one cheap build (few
simulation rounds, one firmware variant from the working tree, a given JUnit report) checked for
what a lab relies on: every preset table's sheets and charts are there, every link of the
index resolves, the MANIFEST verifies (and catches a changed, added or removed file), the test
report says which clause's tests failed, and the run's times stay in run/. The full pack
(minutes) is `make pack`."""

import json
import re
import shutil

import pytest

from host_tools.cert import pack, packdoc
from host_tools.errors import ShoeError
from host_tools.runtime import ROOT
from shoe.games.paytable import PRESETS

PASSED = "tests/firmware/deck/test_ledger.py::test_deal_classification"
FAILED = "tests/firmware/table/test_irregularities.py::test_duplicate_card"


def _junit(path):
    def case(nodeid, body=""):
        f, name = nodeid.split("::")
        return '<testcase classname="%s" name="%s" time="0.1">%s</testcase>' % (
            f[:-3].replace("/", "."),
            name,
            body,
        )

    path.write_text(
        '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3">'
        + case(PASSED)
        + case(FAILED, '<failure message="x">boom</failure>')
        + case("tests/firmware/deck/test_ledger.py::test_bitmaps[1]", "<skipped/>")
        + "</testsuite></testsuites>"
    )
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("pack")
    out = base / "pack"
    info = pack.build(
        ROOT,
        out,
        sim_rounds=300,
        test_report_xml=_junit(base / "junit.xml"),
        worktree=True,
        variants=["pico"],
        progress=lambda *a: None,
    )
    return out, info


def test_every_preset_table_has_its_sheets_and_charts(built):
    out, _ = built
    for name in PRESETS:
        for ext in ("md", "html", "json"):
            assert (out / "par" / ("%s.%s" % (name, ext))).stat().st_size > 1000
        s = json.loads((out / "par" / ("%s.json" % name)).read_text())
        assert s["paytable"]["name"] == name and s["simulation"]["rounds"] == 300
        assert "seconds" not in s and "seconds" not in s["simulation"]  # times: run/pack.json
        assert (out / "par" / ("%s-return.svg" % name)).read_text().startswith("<svg")
        index = (out / "index.md").read_text()
        assert "par/%s.html" % name in index and "par/%s-return.svg" % name in index


def test_every_link_of_the_index_resolves(built):
    out, _ = built
    md = packdoc.hrefs((out / "index.md").read_text())
    ht = packdoc.hrefs_html((out / "index.html").read_text())
    assert len(md) > 30 and sorted(set(md)) == sorted(set(ht))
    missing = [h for h in md if not (out / h).is_file()]
    assert missing == []
    for part in (
        "clause-matrix.html",
        "firmware/firmware.md",
        "docs/protocol.md",
        "docs/journal.md",
        "docs/threat-model.md",
        "docs/certification.md",
        "tests/test-report.html",
        "run/junit.xml",
        "MANIFEST",
    ):
        assert part in md, part


def test_the_manifest_lists_and_verifies_every_file(built, tmp_path):
    out, _ = built
    assert packdoc.verify_manifest(out) == []
    lines = (out / "MANIFEST").read_text().splitlines()
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert sorted(line.split("  ", 1)[1] for line in lines) == [
        f for f in files if f != "MANIFEST"
    ]
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    svg = copy / "par" / ("%s-return.svg" % PRESETS[0])
    svg.write_text(svg.read_text().replace("<svg", "<svg data-x='1'", 1))
    (copy / "docs" / "journal.md").unlink()
    (copy / "extra.txt").write_text("x")
    assert sorted(packdoc.verify_manifest(copy)) == [
        "docs/journal.md: not in the pack",
        "extra.txt: not in the MANIFEST",
        "par/%s-return.svg: SHA-256 differs" % PRESETS[0],
    ]


def test_the_firmware_part_is_the_expected_tree_and_its_manifest(built):
    out, _ = built
    rep = json.loads((out / "firmware" / "firmware.json").read_text())
    v = rep["variants"]["pico"]
    tree = out / "firmware" / "expected" / "pico" / v["version"]
    assert sorted(
        p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()
    ) == sorted(v["sha256"])
    assert v["attest_manifest"] in (out / "index.md").read_text()
    assert "mpy_seconds" not in rep


def test_the_test_report_names_the_failed_clause(built):
    out, info = built
    s = json.loads((out / "tests" / "test-report.json").read_text())
    assert s["counts"] == {"tests": 3, "passed": 1, "failed": 1, "error": 0, "skipped": 1}
    status = {c["id"]: c["status"] for c in s["clauses"]}
    assert status["rules:3-duplicate"] == "FAILED"
    assert "not run" in status.values()
    assert "test report: 1 failed, 0 errors" in info["problems"]
    assert FAILED in (out / "tests" / "test-report.md").read_text()


def test_problems_are_exactly_the_disagreeing_sheets_and_the_failed_tests(built):
    out, info = built
    disagree = [
        n
        for n in PRESETS
        if not json.loads((out / "par" / ("%s.json" % n)).read_text())["simulation"]["agrees"]
    ]
    assert [p for p in info["problems"] if p.startswith("par sheet")] == [
        "par sheet %s: the simulation disagrees with an exact figure" % n for n in disagree
    ]


def test_the_times_are_in_run_only(built):
    out, info = built
    stamp = info["started"]
    assert stamp in (out / "run" / "pack.json").read_text()
    for p in out.rglob("*"):
        if p.is_file() and p.suffix in (".md", ".html", ".json", ".svg") and p.parts[-2] != "run":
            assert stamp[:19] not in p.read_text(), p
    # the charts' SVG date is the commit's (SOURCE_DATE_EPOCH), not the run's
    for svg in (out / "par").glob("*.svg"):
        assert stamp[:19] not in svg.read_text() and "<dc:date>" in svg.read_text()


def test_a_directory_that_is_not_a_pack_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ShoeError, match="no MANIFEST"):
        pack.build(ROOT, tmp_path, progress=lambda *a: None)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_every_test_the_threat_model_names_exists():
    text = (ROOT / "docs" / "threat-model.md").read_text()
    ids = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", text)
    assert len(ids) > 20
    last = None
    for path, name in ids:
        src = (ROOT / path).read_text()
        last = path
        if name:
            assert re.search(r"def %s\(" % name, src), (path, name)
    # "`::test_x`" continues the file named before it in the same cell
    for row in text.splitlines():
        files = re.findall(r"`(tests/[\w/]+\.py)", row)
        for name in re.findall(r"`::(\w+)`", row):
            owner = [f for f in files if re.search(r"def %s\(" % name, (ROOT / f).read_text())]
            assert owner, (name, files or last)
