"""Read-quality diagnostics: misread, double-read and no-read rates per card, deck and position.

Pure functions over read records (the lead feeds them from the audit store), plus a PNG chart:

    report = summarize(records)              # dict, JSON-ready
    rows = timeline(records, buckets=24)     # rates per time bucket
    chart(records, "quality.png")            # matplotlib (Agg): rates over time

A record is a dict:

    {"t": 1764441600.5,        # seconds (Unix time) of the read attempt
     "outcome": "ok",          # ok | misread | double_read | no_read   (older spellings below)
     "deck": "3A7F",           # deck serial (optional: unknown for a no-read)
     "card": "As",             # the card (optional: a round's cards are known from its reveal)
     "position": 12}           # draw position in the shoe since the shuffle (optional)

The outcomes are host_tools.events' (OK, MISREAD, DOUBLE_READ, NO_READ; the shoe's read reasons
map to them by events.read_outcome, which is how `shoectl diagnose` writes them). Record files
written before that, or by other tools, are still read: the reader's own kinds (card, noread,
garbled: firmware/shoe/drivers) and the older spellings in _OLD_SPELLINGS are taken as the
outcome they mean. A misread is a read that produced a wrong
or unparseable code; a double read is one card reported twice; a no-read is a card that left
without a valid read. Rates are per read attempt. Records that are not dicts, have no usable
"t" or an unknown outcome are skipped and counted in "skipped" by reason; nothing raises.
"""

import math

from host_tools import events as E

OUTCOMES = E.READ_OUTCOMES
PROBLEMS = (E.MISREAD, E.DOUBLE_READ, E.NO_READ)
# accepted on input, never written: the reader driver's kinds and older files' spellings
_OLD_SPELLINGS = {
    "card": E.OK,
    "read": E.OK,
    "garbled": E.MISREAD,
    "code_format": E.MISREAD,
    "bad_code": E.MISREAD,
    "double": E.DOUBLE_READ,
    "double-read": E.DOUBLE_READ,
    "noread": E.NO_READ,
    "no-read": E.NO_READ,
    E.UNREADABLE: E.NO_READ,
}


def _clean(records):
    good, skipped = [], {}
    for r in records:
        reason = None
        if not isinstance(r, dict):
            reason = "not_a_record"
        else:
            t = r.get("t")
            out = r.get("outcome")
            out = _OLD_SPELLINGS.get(out, out)
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
                reason = "bad_time"
            elif out not in OUTCOMES:
                reason = "bad_outcome"
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        deck, card, pos = r.get("deck"), r.get("card"), r.get("position")
        good.append(
            {
                "t": float(t),
                "outcome": out,
                "deck": deck if isinstance(deck, str) and deck else None,
                "card": card if isinstance(card, str) and card else None,
                "position": pos if isinstance(pos, int) and not isinstance(pos, bool) else None,
            }
        )
    return good, skipped


def _stats(rows):
    n = len(rows)
    counts = {k: 0 for k in OUTCOMES}
    for r in rows:
        counts[r["outcome"]] += 1
    out = {"reads": n, "counts": counts}
    for k in PROBLEMS:
        out[k + "_rate"] = counts[k] / n if n else 0.0
    out["problem_rate"] = (n - counts["ok"]) / n if n else 0.0
    return out


def _group(rows, key):
    groups = {}
    for r in rows:
        k = key(r)
        if k is not None:
            groups.setdefault(k, []).append(r)
    return groups


def summarize(records, worst=10, min_reads=3):
    """Overall, per deck, per card (deck:card), per position; the worst cards first."""
    rows, skipped = _clean(records)
    per_deck = {k: _stats(v) for k, v in sorted(_group(rows, lambda r: r["deck"]).items())}
    per_card = {
        k: _stats(v)
        for k, v in sorted(
            _group(
                rows, lambda r: "%s:%s" % (r["deck"] or "?", r["card"]) if r["card"] else None
            ).items()
        )
    }
    per_pos = {k: _stats(v) for k, v in sorted(_group(rows, lambda r: r["position"]).items())}
    ranked = sorted(
        (
            (s["problem_rate"], s["reads"], k)
            for k, s in per_card.items()
            if s["reads"] >= min_reads and s["problem_rate"] > 0
        ),
        key=lambda x: (-x[0], -x[1], x[2]),
    )
    worst_cards = [dict(card=k, **per_card[k]) for _, _, k in ranked[:worst]]
    return {
        "overall": _stats(rows),
        "per_deck": per_deck,
        "per_card": per_card,
        "per_position": per_pos,
        "worst_cards": worst_cards,
        "skipped": skipped,
        "span": [min(r["t"] for r in rows), max(r["t"] for r in rows)] if rows else None,
    }


def timeline(records, buckets=24):
    """Rates per equal time bucket over the records' span -> list of dicts (t0, t1, stats)."""
    rows, _ = _clean(records)
    if not rows or buckets < 1:
        return []
    t0 = min(r["t"] for r in rows)
    t1 = max(r["t"] for r in rows)
    width = (t1 - t0) / buckets if t1 > t0 else 1.0
    slots = [[] for _ in range(buckets)]
    for r in rows:
        i = min(int((r["t"] - t0) / width), buckets - 1)
        slots[i].append(r)
    out = []
    for i, s in enumerate(slots):
        st = _stats(s)
        st["t0"] = t0 + i * width
        st["t1"] = t0 + (i + 1) * width
        out.append(st)
    return out


def chart(records, path, buckets=24, title="Read quality over time"):
    """Write a PNG: misread / double-read / no-read rates (%) per time bucket, reads as bars."""
    import matplotlib

    matplotlib.use("Agg")
    import datetime

    from matplotlib import pyplot as plt

    rows = timeline(records, buckets)
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
    try:
        if rows:
            mids = [
                datetime.datetime.fromtimestamp((r["t0"] + r["t1"]) / 2, tz=datetime.timezone.utc)
                for r in rows
            ]
            width = (rows[0]["t1"] - rows[0]["t0"]) / 86400.0 * 0.9
            ax2 = ax.twinx()
            ax2.bar(
                mids,
                [r["reads"] for r in rows],
                width=width,
                color="#dddddd",
                label="reads",
                zorder=0,
            )
            ax2.set_ylabel("reads per bucket")
            ax.set_zorder(ax2.get_zorder() + 1)
            ax.patch.set_visible(False)
            for key, colour in (
                (E.MISREAD, "#d62728"),
                (E.DOUBLE_READ, "#ff7f0e"),
                (E.NO_READ, "#1f77b4"),
            ):
                ax.plot(
                    mids,
                    [100.0 * r[key + "_rate"] if r["reads"] else float("nan") for r in rows],
                    marker="o",
                    ms=3,
                    color=colour,
                    label=key.replace("_", "-"),
                )
            ax.legend(loc="upper left")
            fig.autofmt_xdate()
        else:
            ax.text(0.5, 0.5, "no read records", ha="center", va="center", transform=ax.transAxes)
        ax.set_ylabel("rate (% of reads)")
        ax.set_xlabel("time (UTC)")
        ax.set_title(title)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
