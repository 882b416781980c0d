"""Text of the submission pack (host_tools/cert/pack.py): the index as Markdown and HTML from one
list of blocks, the MANIFEST, and the summary of a JUnit XML test report (which clause's tests
passed in the run).

    md, html = index(blocks)          # blocks: ("h1"|"h2"|"p", segments), ("table", head, rows),
                                      # ("img", alt, href), ("pre", text)
    rep = junit(path, root, matrix)   # counts, cases, per-clause outcome
    text = manifest(dir)              # "sha256  path" lines (sha256sum -c), MANIFEST left out
    hrefs(md_text), hrefs_html(text)  # the relative links of a page (the tests resolve them)

A segment is a string or (label, href); a table cell is a segment or a list of segments.
"""

import hashlib
import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

MANIFEST = "MANIFEST"


def _seg_md(seg):
    if isinstance(seg, tuple):
        return "[%s](%s)" % (seg[0], seg[1])
    return str(seg)


def _seg_html(seg):
    if isinstance(seg, tuple):
        return '<a href="%s">%s</a>' % (html.escape(seg[1], quote=True), html.escape(seg[0]))
    return html.escape(str(seg))


def _segs(x, one):
    return "".join(one(s) for s in (x if isinstance(x, list) else [x]))


def index(blocks, title):
    """(Markdown, HTML) of the index page."""
    md, ht = (
        [],
        [
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title>"
            % html.escape(title),
            "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;"
            "color:#222}table{border-collapse:collapse;margin:.6em 0;font-size:13px}"
            "td,th{border:1px solid #bbb;padding:3px 7px;text-align:left}"
            "th{background:#eee}img{max-width:100%}</style></head><body>",
        ],
    )
    for b in blocks:
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            md += ["#" * int(kind[1]) + " " + _segs(b[1], _seg_md), ""]
            ht.append("<%s>%s</%s>" % (kind, _segs(b[1], _seg_html), kind))
        elif kind == "p":
            md += [_segs(b[1], _seg_md), ""]
            ht.append("<p>%s</p>" % _segs(b[1], _seg_html))
        elif kind == "pre":
            md += ["    " + line for line in b[1].splitlines()] + [""]
            ht.append("<pre>%s</pre>" % html.escape(b[1]))
        elif kind == "img":
            md += ["![%s](%s)" % (b[1], b[2]), ""]
            ht.append(
                '<p><img src="%s" alt="%s"></p>'
                % (html.escape(b[2], quote=True), html.escape(b[1], quote=True))
            )
        elif kind == "table":
            head, rows = b[1], b[2]
            md.append("| " + " | ".join(head) + " |")
            md.append("|" + "---|" * len(head))
            md += [
                "| " + " | ".join(_segs(c, _seg_md).replace("|", "\\|") for c in r) + " |"
                for r in rows
            ]
            md.append("")
            ht.append("<table><tr>%s</tr>" % "".join("<th>%s</th>" % html.escape(h) for h in head))
            ht += [
                "<tr>%s</tr>" % "".join("<td>%s</td>" % _segs(c, _seg_html) for c in r)
                for r in rows
            ]
            ht.append("</table>")
        else:
            raise ValueError("unknown block %r" % kind)
    ht.append("</body></html>")
    return "\n".join(md).rstrip() + "\n", "\n".join(ht) + "\n"


_MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HTML_LINK = re.compile(r"(?:href|src)=\"([^\"]+)\"")


def hrefs(text):
    """The link targets of a Markdown page."""
    return _MD_LINK.findall(text)


def hrefs_html(text):
    return [html.unescape(h) for h in _HTML_LINK.findall(text)]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest(root):
    """The MANIFEST text of a directory: every file but MANIFEST, sorted by path, in the format
    `sha256sum -c` reads."""
    root = Path(root)
    files = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() != MANIFEST
    )
    return "".join("%s  %s\n" % (sha256(root / f), f) for f in files)


def verify_manifest(root):
    """[problems] of a pack's MANIFEST: a file changed, missing, or not listed."""
    root = Path(root)
    listed = {}
    for line in (root / MANIFEST).read_text().splitlines():
        digest, _, name = line.partition("  ")
        listed[name] = digest
    problems = ["%s: not in the pack" % n for n in listed if not (root / n).is_file()]
    problems += [
        "%s: SHA-256 differs" % n
        for n, d in listed.items()
        if (root / n).is_file() and sha256(root / n) != d
    ]
    present = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    problems += ["%s: not in the MANIFEST" % n for n in sorted(present - set(listed) - {MANIFEST})]
    return problems


def _nodeid(root, classname, name):
    """pytest's node id from a JUnit case (classname "tests.a.test_b.TestC", name "test_d[x]")."""
    parts = (classname or "").split(".")
    for i in range(len(parts), 0, -1):
        path = "/".join(parts[:i]) + ".py"
        if (Path(root) / path).is_file():
            return "::".join([path] + parts[i:] + [name])
    return "::".join(parts + [name])


def junit(path, root, matrix):
    """Summary of a JUnit XML report: counts, the cases not passed, and for every clause of the
    shoe whether its tests ran and passed in this run."""
    tree = ET.parse(str(path))
    cases = []
    for tc in tree.iter("testcase"):
        outcome = "passed"
        for child in tc:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        cases.append(
            {"nodeid": _nodeid(root, tc.get("classname"), tc.get("name")), "outcome": outcome}
        )
    counts = {
        k: sum(1 for c in cases if c["outcome"] == k)
        for k in ("passed", "failed", "error", "skipped")
    }
    counts["tests"] = len(cases)
    by_test = {}
    for c in cases:
        by_test.setdefault(c["nodeid"].split("[")[0], []).append(c["outcome"])
    clauses = []
    for cl in matrix["clauses"]:
        if cl["scope"] != "shoe":
            continue
        got = [o for t in cl["tests"] for o in by_test.get(t["nodeid"], [])]
        if not got:
            status = "not run"
        elif any(o in ("failed", "error") for o in got):
            status = "FAILED"
        elif all(o == "skipped" for o in got):
            status = "skipped"
        else:
            status = "passed"
        clauses.append(
            {"id": cl["id"], "tests": len(cl["tests"]), "cases": len(got), "status": status}
        )
    return {
        "counts": counts,
        "cases": sorted(cases, key=lambda c: c["nodeid"]),
        "clauses": clauses,
        "not_passed": [
            c for c in sorted(cases, key=lambda c: c["nodeid"]) if c["outcome"] != "passed"
        ],
    }
