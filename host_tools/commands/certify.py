"""shoectl certify: what a gaming lab gets (docs/certification.md).

shoectl certify check                  # every clause has code and a test (exit 1 if not)
shoectl certify matrix --out DIR       # the clause matrix: clause-matrix.md/.html/.json
shoectl certify firmware --out DIR     # the .mpy sets' SHA-256s and attestation manifests,
                                       # built from a clean clone; --pico: the frozen image
shoectl certify repro [--pico]         # build twice from clean clones in two places: same?
shoectl certify mutate                 # break each listed clause's code: its tests fail?
shoectl certify pack --out DIR         # the submission pack: par sheets, matrix, firmware,
                                       # documents, test report, index, MANIFEST
"""

import json
import tempfile
import time
from pathlib import Path

from host_tools.errors import ShoeError

NAME = "certify"
HELP = "the clause matrix, reproducible firmware hashes and attestation, mutation checks"
DESCRIPTION = (
    "Certification material. check: every rule clause (58 Pa. Code 684a.7, 684a.11, 678a.7 and "
    "the decisions of rules.md) has a code location (a `# clause: ID` comment) and a test "
    "(@pytest.mark.clause), and no tag names an unknown clause. matrix: the clause matrix "
    "(Markdown, HTML, JSON). firmware: the deployed .mpy set of each board variant built from a "
    "clean clone of HEAD, every file's SHA-256, the version directory and the attestation "
    "manifest a running shoe answers `shoectl verify` with, and the expected trees to verify "
    "against; --pico also builds the frozen Pico image (needs the ARM toolchain). repro: builds "
    "twice from clean clones in two different directories and compares the bytes. mutate: "
    "breaks the code of a list of clauses in a copy of the tree and runs each clause's tests, "
    "which must fail. pack: the submission pack for a lab in one directory (index.md/.html, "
    "par sheets of every preset table with charts, the clause matrix, the firmware hashes and "
    "expected trees, protocol/journal/threat-model/certification documents, the test report "
    "of the clause-marked tests it runs, or of --test-report FILE, and a MANIFEST of SHA-256s; "
    "minutes with the full simulation). Needs a checkout (tests/, board/, tools/)."
)


def configure(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("check", help="fail if a clause lacks code or a test, or a tag is unknown")
    m = sub.add_parser("matrix", help="write the clause matrix (md, html, json)")
    m.add_argument("--out", default="build/cert", help="directory (default build/cert)")
    f = sub.add_parser("firmware", help="firmware hashes and attestation manifests")
    f.add_argument("--out", default="build/cert", help="directory (default build/cert)")
    f.add_argument(
        "--worktree",
        action="store_true",
        help="build the working tree's files (with local changes), not HEAD",
    )
    f.add_argument("--pico", action="store_true", help="also build the frozen Pico image")
    f.add_argument("--pico-sources", help="MicroPython sources tarball (SHOE_PICO_SOURCES)")
    r = sub.add_parser("repro", help="build twice from clean clones in two places, compare")
    r.add_argument("--pico", action="store_true", help="the frozen Pico image too (minutes)")
    r.add_argument("--pico-sources", help="MicroPython sources tarball (SHOE_PICO_SOURCES)")
    r.add_argument("--worktree", action="store_true", help="copies of the working tree, not HEAD")
    r.add_argument("--json", action="store_true")
    u = sub.add_parser("mutate", help="break each listed clause's code: do its tests fail?")
    u.add_argument(
        "--only",
        action="append",
        metavar="NAME|CLAUSE",
        help="only this mutation or clause (repeatable)",
    )
    u.add_argument("--list", action="store_true", help="list the mutations and exit")
    u.add_argument("--json", action="store_true")
    k = sub.add_parser("pack", help="the submission pack: everything above in one directory")
    k.add_argument(
        "--out",
        default="build/pack",
        help="directory (default build/pack; a previous pack there is replaced)",
    )
    k.add_argument(
        "--sim-rounds",
        type=int,
        default=None,
        metavar="N",
        help="rounds of the par sheets' simulation (default: shoectl par's; 0: none)",
    )
    k.add_argument("--seed", type=int, default=1, help="simulation seed (default 1)")
    k.add_argument(
        "--paytable",
        action="append",
        metavar="NAME",
        help="only this preset table (repeatable; default every preset)",
    )
    k.add_argument(
        "--test-report",
        metavar="JUNIT_XML",
        help="summarise this JUnit XML (e.g. a full run's --junitxml) instead of "
        "running the clause-marked tests",
    )
    k.add_argument(
        "--tests",
        default="clause",
        metavar="MARKEXPR",
        help="pytest -m expression of the tests to run (default: clause)",
    )
    k.add_argument(
        "--worktree",
        action="store_true",
        help="the working tree's firmware (with local changes), not HEAD",
    )
    k.add_argument(
        "--variant",
        action="append",
        metavar="NAME",
        help="only this firmware variant (repeatable; default all four)",
    )
    k.add_argument("--pico", action="store_true", help="also build the frozen Pico image")
    k.add_argument("--pico-sources", help="MicroPython sources tarball (SHOE_PICO_SOURCES)")
    k.add_argument(
        "--pico-uf2",
        metavar="FILE",
        help="a frozen image built already (make pico-firmware): its SHA-256",
    )


def _root():
    from host_tools.runtime import ROOT

    if not (ROOT / "tests").is_dir() or not (ROOT / "board").is_dir():
        raise ShoeError("shoectl certify needs a checkout of the project (tests/, board/)")
    return ROOT


def run(args):
    return {
        "check": _check,
        "matrix": _matrix,
        "firmware": _firmware,
        "repro": _repro,
        "mutate": _mutate,
        "pack": _pack,
    }[args.action](args)


def _check(args):
    from host_tools.cert import matrix

    m = matrix.build(_root())
    c = m["counts"]
    for p in m["problems"]:
        print("problem: %s" % p)
    print(
        "%d clauses (%d of the shoe, %d outside it), %d code locations, %d tests"
        % (c["clauses"], c["shoe"], c["outside"], c["code_locations"], c["tests"])
    )
    if m["problems"]:
        raise ShoeError("the clause matrix is incomplete: %d problem(s)" % len(m["problems"]))
    return 0


def _out(path):
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _matrix(args):
    from host_tools.cert import matrix

    m = matrix.build(_root())
    out = _out(args.out)
    for fmt in ("md", "html", "json"):
        (out / ("clause-matrix." + fmt)).write_text(matrix.render(m, fmt))
    print(
        "clause matrix: %s/clause-matrix.{md,html,json} (%d clauses, %d problems)"
        % (out, m["counts"]["clauses"], len(m["problems"]))
    )
    if m["problems"]:
        for p in m["problems"]:
            print("problem: %s" % p)
        raise ShoeError("the clause matrix is incomplete")
    return 0


def _firmware(args):
    from host_tools.cert import firmware as fw
    from host_tools.cert.fwreport import firmware_markdown, firmware_report

    root = _root()
    out = _out(args.out)
    with tempfile.TemporaryDirectory(prefix="shoe-cert-") as work:
        rep, trees = firmware_report(root, work, args.worktree, args.pico, args.pico_sources)
    for label, board, _reader in fw.VARIANTS:
        d = out / "expected" / label
        if d.exists():
            import shutil

            shutil.rmtree(d)
        fw.write_expected(trees[label], board, d)
    (out / "firmware.json").write_text(json.dumps(rep, indent=1, sort_keys=True) + "\n")
    (out / "firmware.md").write_text(firmware_markdown(rep))
    for label, v in rep["variants"].items():
        print(
            "%-14s %s  %2d files  manifest %s"
            % (label, v["version"], v["files"], v["attest_manifest"])
        )
    p = rep["pico"]
    print(
        "frozen Pico image: %s"
        % (
            "firmware.uf2 sha256 %s" % p["firmware.uf2"]["sha256"]
            if p.get("built")
            else "not built: " + p["why"]
        )
    )
    print("written: %s/firmware.{md,json}, %s/expected/<variant>/v-<hash>/" % (out, out))
    return 0


def _repro(args):
    from host_tools.cert import firmware as fw

    root = _root()
    report = {}
    with tempfile.TemporaryDirectory(prefix="shoe-repro-") as work:
        work = Path(work)
        srcs = []
        for where in ("one/shoe", "another-place/deeper/x"):
            dest = work / where
            if args.worktree:
                fw.copy_sources(root, dest)
            else:
                fw.clean_copy(root, dest)
            srcs.append(dest)
        descs = []
        for s in srcs:
            t0 = time.monotonic()
            descs.append(fw.describe(fw.build_trees(s)))
            print("mpy set built in %s: %.1f s" % (s, time.monotonic() - t0))
        report["mpy"] = {
            "same": descs[0] == descs[1],
            "manifests": [{k: v["attest_manifest"] for k, v in d.items()} for d in descs],
        }
        if args.pico:
            why = fw.pico_toolchain()
            if why:
                report["pico"] = {"built": False, "why": why}
            else:
                imgs = [fw.pico_image(s, args.pico_sources) for s in srcs]
                report["pico"] = {
                    "built": True,
                    "builds": imgs,
                    "same": all(
                        imgs[0][f] == imgs[1][f] for f in ("firmware.uf2", "firmware.elf")
                    ),
                }
    if args.json:
        print(json.dumps(report, indent=1, sort_keys=True))
    else:
        print("mpy sets: %s" % ("identical" if report["mpy"]["same"] else "DIFFER"))
        for k, v in report["mpy"]["manifests"][0].items():
            print("  %-14s %s" % (k, v))
        if "pico" in report:
            p = report["pico"]
            if not p["built"]:
                print("frozen image: not built: %s" % p["why"])
            else:
                for b in p["builds"]:
                    print(
                        "frozen image: firmware.uf2 %s, firmware.elf %s (%s s)"
                        % (b["firmware.uf2"]["sha256"], b["firmware.elf"]["sha256"], b["seconds"])
                    )
                print("frozen images (uf2 and elf): %s" % ("identical" if p["same"] else "DIFFER"))
    same = report["mpy"]["same"] and report.get("pico", {}).get("same", True) is not False
    if not same:
        raise ShoeError("the two builds differ")
    return 0


def _mutate(args):
    from host_tools.cert import mutate

    if args.list:
        for name, cid, _edits, what in mutate.MUTATIONS:
            print("%-28s %-24s %s" % (name, cid, what))
        return 0
    root = _root()
    with tempfile.TemporaryDirectory(prefix="shoe-mutate-") as work:
        res = mutate.run(root, work, only=args.only, progress=None if args.json else print)
    if args.json:
        print(json.dumps(res, indent=1))
    if not res:
        raise ShoeError("no mutation matches %s" % ", ".join(args.only or []))
    bad = [r for r in res if r["outcome"] != "killed"]
    print("%d of %d mutations killed" % (len(res) - len(bad), len(res)))
    if bad:
        raise ShoeError(
            "not killed: %s" % ", ".join("%s (%s)" % (r["mutation"], r["outcome"]) for r in bad)
        )
    return 0


def _pack(args):
    from host_tools.cert import pack

    if args.sim_rounds is not None and args.sim_rounds < 0:
        raise ShoeError("--sim-rounds must be 0 or more")
    for f in (args.test_report, args.pico_uf2):
        if f and not Path(f).is_file():
            raise ShoeError("no such file: %s" % f)
    info = pack.build(
        _root(),
        args.out,
        presets=args.paytable,
        sim_rounds=args.sim_rounds,
        seed=args.seed,
        test_report_xml=args.test_report,
        test_marker=args.tests,
        worktree=args.worktree,
        variants=args.variant,
        pico=args.pico,
        pico_sources=args.pico_sources,
        pico_uf2=args.pico_uf2,
    )
    print(
        "pack: %s/index.html (index.md, MANIFEST) in %.0f s" % (args.out, info["seconds"]["total"])
    )
    if info["problems"]:
        for p in info["problems"]:
            print("problem: %s" % p)
        raise ShoeError("the pack is written but has %d problem(s)" % len(info["problems"]))
    return 0
