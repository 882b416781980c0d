"""Par sheets as text: Markdown tables, JSON (every number), or one standalone HTML page with
the tables and SVG charts (return by outcome, hit frequencies) drawn by matplotlib."""

import html
import io
import json

FORMATS = ("md", "json", "html")
GAMES = {"four-card-frenzy": "Four Card Frenzy", "high-card-flush": "High Card Flush"}


# the HCF strategy's rows by flush length: (column head, key), in the sheets' order
_BY_LENGTH = (
    ("flush length", "flush_length"),
    ("hands", "hands"),
    ("fold", "fold"),
    ("raise 1x", "raise_1x"),
    ("raise 2x", "raise_2x"),
    ("raise 3x", "raise_3x"),
)


def render(sheet, fmt, drawn=None):
    """drawn: charts(sheet) already drawn (the submission pack writes them as files too)."""
    if fmt == "json":
        return json.dumps(sheet, indent=1) + "\n"
    if fmt == "md":
        return _md(sheet)
    if fmt == "html":
        return _html(sheet, drawn)
    raise ValueError("format must be one of %s" % ", ".join(FORMATS))


def pct(x, places=4):
    return "n/a" if x is None else "%.*f %%" % (places, 100 * x)


def _num(x):
    if x is None:
        return "jackpot (host meter)"
    return "%g" % x


def _sim(s):
    if not s:
        return "not run"
    return "%+.6f ± %.6f (z = %+.2f, %s)" % (
        s["return"],
        s["se"],
        s["z"],
        "agrees" if s["agrees"] else "DISAGREES",
    )


def _head(sheet):
    pt = sheet["paytable"]
    rules = ", ".join("%s=%s" % kv for kv in sorted(sheet["rules"].items())) or "none"
    lines = [
        "Pay table: %s%s%s"
        % (
            pt["name"],
            " (example)" if pt["example"] else "",
            "; digest " + pt["digest"] if pt["digest"] else "",
        ),
        "Rules: " + rules,
        "Model: " + sheet["model"],
    ]
    sim = sheet.get("simulation")
    if sim:
        lines.append(
            "Simulation: %d rounds of %d seats (%d hands), seed %d, %s%s; "
            "every figure within %d standard errors: %s"
            % (
                sim["rounds"],
                sim["seats"],
                sim["hands"],
                sim["seed"],
                sim["engine"],
                ", %.1f s" % sim["seconds"] if "seconds" in sim else "",
                sim["sigmas"],
                "yes" if sim["agrees"] else "NO",
            )
        )
    if "seconds" in sheet:  # a submission pack keeps the times apart (host_tools/cert/pack.py)
        lines.append(
            "Time: exact %.1f s, simulation %.1f s"
            % (sheet["seconds"]["exact"], sheet["seconds"]["simulation"])
        )
    return lines


def _summary_rows(sheet):
    mg = sheet["main_game"]
    rows = [
        (
            "Main game, per hand",
            "%+.6f" % mg["return_per_hand"],
            "%s of the initial %d; element of risk %s"
            % (pct(mg["house_edge_per_hand"]), mg["initial_wager"], pct(mg["element_of_risk"])),
            mg["brief"],
            _sim(mg.get("simulation")),
        )
    ]
    for w in sheet["wagers"]:
        he = pct(w["house_edge"])
        if w["wager"] == "raise":
            he += " per unit raised (%.4f units a hand)" % w["wagered_per_hand"]
        rows.append((w["title"], "%+.6f" % w["return"], he, w["brief"], _sim(w.get("simulation"))))
    return rows


def _md(sheet):
    out = ["# Par sheet: %s, %s" % (sheet["paytable"]["name"], GAMES[sheet["game"]]), ""]
    out += ["- " + line for line in _head(sheet)]
    out += [
        "",
        "## Summary",
        "",
        "| wager | return per hand (units) | house edge | method | simulation |",
        "|---|---:|---|---|---|",
    ]
    out += ["| %s |" % " | ".join(r) for r in _summary_rows(sheet)]
    mg = sheet["main_game"]
    st = mg["strategy"]
    out += ["", "## Strategy", "", st["rule"] + ".", ""]
    if "by_category" in st:
        out += [
            "| player's best four | hands | fold | raise 1x | raise 3x |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in st["by_category"]:
            out.append(
                "| %s | %d | %d | %d | %d |"
                % (r["category"], r["hands"], r["fold"], r["raise_1x"], r["raise_3x"])
            )
        out += [
            "",
            "Weakest hand raised: %s; strongest hand folded: %s (%s)."
            % (st["weakest_raised"], st["strongest_folded"], st["note"]),
        ]
    else:
        out += [
            "| %s |" % " | ".join(head for head, _ in _BY_LENGTH),
            "|" + "---:|" * len(_BY_LENGTH),
        ]
        for r in st["by_length"]:
            out.append("| %s |" % " | ".join("%d" % r[key] for _, key in _BY_LENGTH))
        out += [
            "",
            "Ten-high three-card flushes, hand by hand:",
            "",
            "| flush | hands raised | hands folded |",
            "|---|---:|---:|",
        ]
        out += [
            "| %s | %d | %d |" % (t["flush"], t["raised"], t["folded"]) for t in st["ten_high"]
        ]
        fv = st["flush_value_only"]
        out += [
            "",
            "For comparison, %s: house edge %s per hand."
            % (fv["rule"], pct(fv["house_edge_per_hand"])),
            "",
            "Raise frequency %s; ties with a qualifying dealer %s."
            % (pct(mg["raise_frequency"]), pct(mg["push_frequency"])),
        ]
    d = sheet["dealer"]
    key = "opens" if "opens" in d else "qualifies"
    out += [
        "",
        "Dealer %s: %s (%s; %s)%s."
        % (
            key,
            pct(d[key]),
            d[key + "_exact"],
            d["method"],
            "; simulated %s" % pct(d["simulated"], 2) if "simulated" in d else "",
        ),
    ]
    for w in sheet["wagers"]:
        out += [
            "",
            "## %s" % w["title"],
            "",
            "Method: %s. Unit: %s, %d in all." % (w["method"], w["unit"], w["total"]),
            "",
            "| outcome | combinations | probability | pays | contribution |",
            "|---|---:|---:|---:|---:|",
        ]
        for o in w["outcomes"]:
            out.append(
                "| %s | %d | %.10f | %s | %s |"
                % (
                    o["outcome"],
                    o["combinations"],
                    o["probability"],
                    _num(o["pays"]),
                    "—" if o["contribution"] is None else "%+.8f" % o["contribution"],
                )
            )
        out += [
            "",
            "Return %+.6f per hand (exact %s); house edge %s; hit frequency %s; "
            "simulation %s."
            % (
                w["return"],
                w["return_exact"],
                pct(w["house_edge"]),
                pct(w["hit_frequency"]),
                _sim(w.get("simulation")),
            ),
        ]
        if w.get("note"):
            out += ["", "Note: " + w["note"] + "."]
    out += ["", "## Notes", ""] + ["- " + n for n in sheet.get("notes", [])]
    return "\n".join(out) + "\n"


def _image(fig, fmt):
    if fmt == "png":
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", dpi=90)
        return buf.getvalue()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]  # inline: no XML prolog


def charts(sheet, fmt="svg"):
    """(return by outcome, hit frequencies) as inline SVG text, or PNG bytes; the second is
    empty when no side wager pays."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ws = sheet["wagers"]
    fig, axes = plt.subplots(
        len(ws), 1, figsize=(8, 1.2 + 0.32 * sum(len(w["outcomes"]) for w in ws)), squeeze=False
    )
    for ax, w in zip(axes[:, 0], ws):
        rows = [o for o in w["outcomes"] if o["contribution"] is not None]
        ys = range(len(rows))
        vals = [o["contribution"] for o in rows]
        ax.barh(list(ys), vals, color=["#2a7" if v > 0 else "#c44" for v in vals])
        ax.set_yticks(list(ys))
        ax.set_yticklabels([o["outcome"] for o in rows], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(0, color="#333", lw=0.6)
        ax.set_title(
            "%s: contribution to the return by outcome (sum %+.4f)" % (w["title"], w["return"]),
            fontsize=8,
        )
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    first = _image(fig, fmt)
    plt.close(fig)
    hits = [
        (w["title"] + ": " + o["outcome"], o["probability"])
        for w in ws
        if w["wager"] not in ("ante", "odds", "raise")
        for o in w["outcomes"]
        if o["pays"] is None or o["pays"] > 0
    ]
    second = ""
    if hits:
        fig, ax = plt.subplots(figsize=(8, 0.8 + 0.25 * len(hits)))
        ax.barh(range(len(hits)), [p for _, p in hits], color="#37a")
        ax.set_xscale("log")
        ax.set_yticks(range(len(hits)))
        ax.set_yticklabels([n for n, _ in hits], fontsize=7)
        ax.invert_yaxis()
        ax.set_title("Hit frequency of each paying outcome (log scale)", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        fig.tight_layout()
        second = _image(fig, fmt)
        plt.close(fig)
    return first, second


def _table(head, rows):
    e = html.escape
    out = ["<table><tr>%s</tr>" % "".join("<th>%s</th>" % e(h) for h in head)]
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % e(str(c)) for c in r))
    out.append("</table>")
    return "\n".join(out)


def _html(sheet, drawn=None):
    e = html.escape
    title = "Par sheet: %s, %s" % (sheet["paytable"]["name"], GAMES[sheet["game"]])
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title>" % e(title),
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
        "table{border-collapse:collapse;margin:.6em 0;font-size:13px}"
        "td,th{border:1px solid #bbb;padding:3px 7px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}th{background:#eee}"
        "p,li{font-size:14px}</style></head><body>",
        "<h1>%s</h1>" % e(title),
        "<ul>",
    ]
    parts += ["<li>%s</li>" % e(line) for line in _head(sheet)]
    parts += [
        "</ul>",
        "<h2>Summary</h2>",
        _table(
            ("wager", "return per hand", "house edge", "method", "simulation"),
            _summary_rows(sheet),
        ),
    ]
    first, second = drawn or charts(sheet)
    parts += ["<h2>Return by outcome</h2>", first]
    if second:
        parts += ["<h2>Hit frequencies</h2>", second]
    st = sheet["main_game"]["strategy"]
    parts += ["<h2>Strategy</h2>", "<p>%s.</p>" % e(st["rule"])]
    if "by_category" in st:
        parts.append(
            _table(
                ("best four", "hands", "fold", "raise 1x", "raise 3x"),
                [
                    (r["category"], r["hands"], r["fold"], r["raise_1x"], r["raise_3x"])
                    for r in st["by_category"]
                ],
            )
        )
        parts.append(
            "<p>Weakest hand raised: %s; strongest folded: %s (%s).</p>"
            % (e(st["weakest_raised"]), e(st["strongest_folded"]), e(st["note"]))
        )
    else:
        parts.append(
            _table(
                tuple(head for head, _ in _BY_LENGTH),
                [tuple(r[key] for _, key in _BY_LENGTH) for r in st["by_length"]],
            )
        )
        parts.append(
            _table(
                ("ten-high flush", "raised", "folded"),
                [(t["flush"], t["raised"], t["folded"]) for t in st["ten_high"]],
            )
        )
        fv = st["flush_value_only"]
        parts.append(
            "<p>For comparison, %s: house edge %s per hand.</p>"
            % (e(fv["rule"]), pct(fv["house_edge_per_hand"]))
        )
    for w in sheet["wagers"]:
        parts += [
            "<h2>%s</h2>" % e(w["title"]),
            "<p>Method: %s. Unit: %s, %d in all.</p>" % (e(w["method"]), e(w["unit"]), w["total"]),
            _table(
                ("outcome", "combinations", "probability", "pays", "contribution"),
                [
                    (
                        o["outcome"],
                        o["combinations"],
                        "%.10f" % o["probability"],
                        _num(o["pays"]),
                        "—" if o["contribution"] is None else "%+.8f" % o["contribution"],
                    )
                    for o in w["outcomes"]
                ],
            ),
            "<p>Return %+.6f (exact %s); house edge %s; hit frequency %s; simulation "
            "%s.</p>"
            % (
                w["return"],
                e(w["return_exact"]),
                pct(w["house_edge"]),
                pct(w["hit_frequency"]),
                e(_sim(w.get("simulation"))),
            ),
        ]
        if w.get("note"):
            parts.append("<p>Note: %s.</p>" % e(w["note"]))
    parts += ["<h2>Notes</h2><ul>"] + ["<li>%s</li>" % e(n) for n in sheet.get("notes", [])]
    parts.append("</ul></body></html>")
    return "\n".join(parts) + "\n"
