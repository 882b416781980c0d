"""shoectl certify: what a gaming lab gets (docs/certification.md).

    shoectl certify check                  # every clause has code and a test (exit 1 if not)
    shoectl certify matrix --out DIR       # the clause matrix: clause-matrix.md/.html/.json
    shoectl certify firmware --out DIR     # the .mpy sets' SHA-256s and attestation manifests,
                                           # built from a clean clone; --pico: the frozen image
    shoectl certify repro [--pico]         # build twice from clean clones in two places: same?
    shoectl certify mutate                 # break each listed clause's code: its tests fail?
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
    "which must fail. Needs a checkout (tests/, board/, tools/).")


def configure(p):
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("check", help="fail if a clause lacks code or a test, or a tag is unknown")
    m = sub.add_parser("matrix", help="write the clause matrix (md, html, json)")
    m.add_argument("--out", default="build/cert", help="directory (default build/cert)")
    f = sub.add_parser("firmware", help="firmware hashes and attestation manifests")
    f.add_argument("--out", default="build/cert", help="directory (default build/cert)")
    f.add_argument("--worktree", action="store_true",
                   help="build the working tree's files (with local changes), not HEAD")
    f.add_argument("--pico", action="store_true", help="also build the frozen Pico image")
    f.add_argument("--pico-sources", help="MicroPython sources tarball (SHOE_PICO_SOURCES)")
    r = sub.add_parser("repro", help="build twice from clean clones in two places, compare")
    r.add_argument("--pico", action="store_true", help="the frozen Pico image too (minutes)")
    r.add_argument("--pico-sources", help="MicroPython sources tarball (SHOE_PICO_SOURCES)")
    r.add_argument("--worktree", action="store_true", help="copies of the working tree, not HEAD")
    r.add_argument("--json", action="store_true")
    u = sub.add_parser("mutate", help="break each listed clause's code: do its tests fail?")
    u.add_argument("--only", action="append", metavar="NAME|CLAUSE",
                   help="only this mutation or clause (repeatable)")
    u.add_argument("--list", action="store_true", help="list the mutations and exit")
    u.add_argument("--json", action="store_true")


def _root():
    from host_tools.runtime import ROOT

    if not (ROOT / "tests").is_dir() or not (ROOT / "board").is_dir():
        raise ShoeError("shoectl certify needs a checkout of the project (tests/, board/)")
    return ROOT


def run(args):
    return {"check": _check, "matrix": _matrix, "firmware": _firmware, "repro": _repro,
            "mutate": _mutate}[args.action](args)


def _check(args):
    from host_tools.cert import matrix

    m = matrix.build(_root())
    c = m["counts"]
    for p in m["problems"]:
        print("problem: %s" % p)
    print("%d clauses (%d of the shoe, %d outside it), %d code locations, %d tests" % (
        c["clauses"], c["shoe"], c["outside"], c["code_locations"], c["tests"]))
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
    print("clause matrix: %s/clause-matrix.{md,html,json} (%d clauses, %d problems)" % (
        out, m["counts"]["clauses"], len(m["problems"])))
    if m["problems"]:
        for p in m["problems"]:
            print("problem: %s" % p)
        raise ShoeError("the clause matrix is incomplete")
    return 0


def firmware_report(root, workdir, worktree=False, pico=False, pico_sources=None,
                    progress=print):
    """Build the firmware from a clean clone (or copy) of `root` in `workdir`.
    -> (report, trees)"""
    from host_tools.cert import firmware as fw

    src = Path(workdir) / "src" / "shoe"
    if worktree:
        fw.copy_sources(root, src)
        commit = None
    else:
        src, commit = fw.clean_copy(root, src)
    progress("building the .mpy sets in %s (%s)" % (src, commit or "working tree"))
    t0 = time.monotonic()
    trees = fw.build_trees(src)
    rep = {"commit": commit, "worktree": worktree, "mpy_seconds": round(time.monotonic() - t0, 1),
           "variants": fw.describe(trees)}
    from host_tools import build

    import subprocess

    tool = build.mpy_cross()
    rep["mpy_cross"] = {"path": tool, "mpy_version": "%d.%d" % build.mpy_version(),
                        "flags": build.flags(),
                        "version": subprocess.run([tool, "--version"], capture_output=True,
                                                  text=True).stdout.strip()}
    if pico:
        why = fw.pico_toolchain()
        if why:
            rep["pico"] = {"built": False, "why": why}
        else:
            progress("building the frozen Pico image (make pico-firmware: minutes)")
            rep["pico"] = dict(fw.pico_image(src, pico_sources), built=True)
    else:
        rep["pico"] = {"built": False, "why": "not asked for (--pico)"}
    return rep, trees


def _firmware(args):
    from host_tools.cert import firmware as fw

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
        print("%-14s %s  %2d files  manifest %s" % (label, v["version"], v["files"],
                                                    v["attest_manifest"]))
    p = rep["pico"]
    print("frozen Pico image: %s" % ("firmware.uf2 sha256 %s" % p["firmware.uf2"]["sha256"]
                                     if p.get("built") else "not built: " + p["why"]))
    print("written: %s/firmware.{md,json}, %s/expected/<variant>/v-<hash>/" % (out, out))
    return 0


def firmware_markdown(rep):
    out = ["# Firmware hashes and attestation", "",
           "Built from %s with %s (.mpy v%s, flags %s) by `shoectl certify firmware`: "
           "each variant is exactly what `shoectl deploy` copies into the shoe's version "
           "directory `shoe_fw/v-<hash>/`, plus the DEPLOYED marker deploy writes last." % (
               "commit %s (a clean clone)" % rep["commit"] if rep["commit"] else "the working "
               "tree", rep["mpy_cross"]["version"] or "mpy-cross",
               rep["mpy_cross"]["mpy_version"],
               " ".join(rep["mpy_cross"]["flags"])), "",
           "| variant | deploy command | version directory | files | bytes "
           "| attestation manifest |",
           "|---|---|---|---|---|---|"]
    for label, v in rep["variants"].items():
        out.append("| %s | `%s` | `%s` | %d | %d | `%s` |" % (label, v["deploy"], v["version"],
                                                            v["files"], v["bytes"],
                                                            v["attest_manifest"]))
    out += ["", "## Checking a running shoe from the laptop", "",
            "The shoe answers a fresh random nonce with HMAC-SHA256(shoe key, `SHOE1attest` + "
            "nonce + manifest)[:16], the manifest being SHA-256 over every file of its version "
            "directory (`name` + 0x00 + sha256(file), names in sorted order; docs/protocol.md "
            "\"Attestation\"). `shoectl verify` sends the nonce, checks the MAC with the shoe key "
            "and compares the manifest with the one it computes over a local tree:", "",
            "    shoectl verify --port /dev/ttyACM0 --keys shoe.json --no-chain \\",
            "        --firmware expected/pico/v-<hash>", "",
            "`expected/<variant>/v-<hash>/` (written beside this file) is the version directory "
            "as the shoe holds it. `firmware: VERIFIED` means the shoe runs these bytes; "
            "`MISMATCH` names both manifests. A nonce is never reused, so a recorded answer "
            "cannot be replayed.", "",
            "Not covered by the attestation: `main.py` (board/main.py, the boot selector, outside "
            "the version directory; deploy verifies its SHA-256 when it writes it), the "
            "MicroPython firmware itself (the UF2 flashed first), and the frozen image (a shoe "
            "running it has no firmware root and attests no files: its identity is the UF2's "
            "SHA-256 when it is flashed).", ""]
    p = rep["pico"]
    out += ["## The frozen Pico image (`make pico-firmware`)", ""]
    if p.get("built"):
        out += ["| file | SHA-256 | bytes |", "|---|---|---|"]
        for name in ("firmware.uf2", "firmware.elf"):
            out.append("| %s | `%s` | %d |" % (name, p[name]["sha256"], p[name]["bytes"]))
        out += ["", "Built in %.0f s." % p["seconds"], ""]
    else:
        out += ["Not built: %s." % p["why"], ""]
    out += ["## Files", ""]
    for label, v in rep["variants"].items():
        out += ["### %s (`%s`)" % (label, v["version"]), "", "| file | SHA-256 |", "|---|---|"]
        out += ["| %s | `%s` |" % (f, h) for f, h in v["sha256"].items()]
        out.append("")
    return "\n".join(out) + "\n"


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
        report["mpy"] = {"same": descs[0] == descs[1],
                         "manifests": [{k: v["attest_manifest"] for k, v in d.items()}
                                       for d in descs]}
        if args.pico:
            why = fw.pico_toolchain()
            if why:
                report["pico"] = {"built": False, "why": why}
            else:
                imgs = [fw.pico_image(s, args.pico_sources) for s in srcs]
                report["pico"] = {"built": True, "builds": imgs,
                                  "same": all(imgs[0][f] == imgs[1][f]
                                              for f in ("firmware.uf2", "firmware.elf"))}
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
                    print("frozen image: firmware.uf2 %s, firmware.elf %s (%s s)" % (
                        b["firmware.uf2"]["sha256"], b["firmware.elf"]["sha256"], b["seconds"]))
                print("frozen images (uf2 and elf): %s" % ("identical" if p["same"]
                                                           else "DIFFER"))
    same = report["mpy"]["same"] and report.get("pico", {}).get("same", True) is not False
    if not same:
        raise ShoeError("the two builds differ")
    return 0


def _mutate(args):
    from host_tools.cert import mutate

    if args.list:
        for name, cid, edits, what in mutate.MUTATIONS:
            print("%-28s %-24s %s" % (name, cid, what))
        return 0
    root = _root()
    with tempfile.TemporaryDirectory(prefix="shoe-mutate-") as work:
        res = mutate.run(root, work, only=args.only,
                         progress=None if args.json else print)
    if args.json:
        print(json.dumps(res, indent=1))
    if not res:
        raise ShoeError("no mutation matches %s" % ", ".join(args.only or []))
    bad = [r for r in res if r["outcome"] != "killed"]
    print("%d of %d mutations killed" % (len(res) - len(bad), len(res)))
    if bad:
        raise ShoeError("not killed: %s" % ", ".join("%s (%s)" % (r["mutation"], r["outcome"])
                                                    for r in bad))
    return 0
