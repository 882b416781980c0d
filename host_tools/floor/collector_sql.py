"""What the collector reads and writes in PostgreSQL (its SQL, and nothing else): the batch of
one transaction (Writes) and its commit, the leases' advisory locks and heartbeat, the heads and
the events a check needs again. host_tools/floor/collector.py drives them.

    w = Writes(); w.event(...); w.alert(...); w.live(shoe, head)
    commit(conn, w, name)                      # one transaction, NOTIFY floor inside it
"""

import json

from host_tools.events import jsonable

LOCK_NS = 0x5E0E  # advisory lock namespace (first int of the two-int form)


# ---- the collector's own row and its leases ---------------------------------------------------
def register(conn, name):
    conn.execute(
        "INSERT INTO collectors (name) VALUES (%s) ON CONFLICT (name) DO "
        "UPDATE SET seen_at = clock_timestamp()",
        (name,),
    )


def is_live(conn, name, live_s):
    """Whether a collector of this name has a fresh heartbeat (None: never registered)."""
    live = conn.execute(
        "SELECT seen_at > clock_timestamp() - make_interval(secs => %s) FROM collectors "
        "WHERE name = %s",
        (live_s, name),
    ).fetchone()
    return bool(live and live[0])


def goodbye(conn, name):
    conn.execute("DELETE FROM collectors WHERE name = %s", (name,))


def heartbeat(conn, name, live_s):
    """Beat, and count the live collectors (at least 1)."""
    conn.execute("UPDATE collectors SET seen_at = clock_timestamp() WHERE name = %s", (name,))
    return (
        conn.execute(
            "SELECT count(*) FROM collectors WHERE seen_at > clock_timestamp() - "
            "make_interval(secs => %s)",
            (live_s,),
        ).fetchone()[0]
        or 1
    )


def try_lock(conn, shoe):
    return conn.execute(
        "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (LOCK_NS, shoe)
    ).fetchone()[0]


def unlock(conn, shoe):
    conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (LOCK_NS, shoe))


def head_of(conn, shoe):
    """(head_eseq, head_hash, state_ctr, state_mac) of a shoe, or None if it has no row."""
    return conn.execute(
        "SELECT head_eseq, head_hash, state_ctr, state_mac FROM shoes WHERE shoe = %s", (shoe,)
    ).fetchone()


def own(conn, shoe, name):
    conn.execute(
        "INSERT INTO shoes (shoe, owner) VALUES (%s, %s) ON CONFLICT (shoe) "
        "DO UPDATE SET owner = EXCLUDED.owner, updated_at = clock_timestamp()",
        (shoe, name),
    )


# ---- what the checks read again --------------------------------------------------------------
def round_events(conn, shoe, rnd):
    """A round's round_open, card and reveal events already in the database."""
    return [
        (k, b)
        for k, b in conn.execute(
            "SELECT kind, body FROM events WHERE shoe = %s AND kind IN ('round_open', 'card', "
            "'reveal') AND body->>'round' = %s ORDER BY eseq",
            (shoe, str(rnd)),
        ).fetchall()
    ]


def payload_of(conn, shoe, eseq):
    r = conn.execute(
        "SELECT payload FROM events WHERE shoe=%s AND eseq=%s", (shoe, eseq)
    ).fetchone()
    return bytes(r[0]) if r else None


def hash_of(conn, shoe, eseq):
    r = conn.execute("SELECT hash FROM events WHERE shoe=%s AND eseq=%s", (shoe, eseq)).fetchone()
    return bytes(r[0]) if r else None


def horizon(conn, shoe):
    """The highest eseq the retention archived and dropped (0: none)."""
    r = conn.execute("SELECT eseq FROM event_horizon WHERE shoe = %s", (shoe,)).fetchone()
    return r[0] if r else 0


# ---- upkeep ------------------------------------------------------------------------------------
def make_partitions(conn, days):
    """The event partitions from today for `days` days (the owner's function) -> made."""
    return conn.execute("SELECT floor_event_partitions(clock_timestamp(), %s)", (days,)).fetchall()


def open_alerts(conn):
    return conn.execute("SELECT count(*) FROM alerts WHERE closed_at IS NULL").fetchone()[0]


# ---- one batch ---------------------------------------------------------------------------------
def commit(c, w, name):
    """Write the batch `w` in one transaction (NOTIFY floor in it); raises if anything fails
    (then nothing of it is stored)."""
    with c.transaction():
        if w.events:
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO events (shoe, eseq, kind, body, prev, hash, mac, payload, "
                    "chain, collector, gateway_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,"
                    "to_timestamp(%s))",
                    w.events,
                )
            # (shoe, eseq) stored once: the insert trigger skips a duplicate across the
            # day partitions (migrations/004_partitions.sql), as ON CONFLICT DO NOTHING did
        if w.rounds:
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO rounds (shoe, eseq, round, outcome, summary, "
                    "reeval) VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                    w.rounds,
                )
        for shoe, ref in w.closes:
            c.execute(
                "UPDATE alerts SET closed_at = clock_timestamp() WHERE shoe=%s AND "
                "kind='irregularity' AND ref=%s AND closed_at IS NULL",
                (shoe, ref),
            )
        if w.alerts:
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO alerts (shoe, eseq, kind, detail, ref, collector)"
                    " VALUES (%s,%s,%s,%s,%s,%s)",
                    [a + (name,) for a in w.alerts],
                )
        for shoe, lv in w.lives.items():
            c.execute(
                "INSERT INTO shoes AS s (shoe, head_eseq, head_hash, phase, round, last_kind,"
                " last_event_at, last_result, owner) VALUES (%s,%s,%s,%s,%s,%s,"
                "clock_timestamp(),%s,%s) ON CONFLICT (shoe) DO UPDATE SET "
                "head_eseq=EXCLUDED.head_eseq, head_hash=EXCLUDED.head_hash, "
                "phase=COALESCE(EXCLUDED.phase, s.phase), round=COALESCE(EXCLUDED.round, "
                "s.round), last_kind=EXCLUDED.last_kind, last_event_at=EXCLUDED.last_event_at,"
                " last_result=COALESCE(EXCLUDED.last_result, s.last_result), "
                "owner=EXCLUDED.owner, updated_at=clock_timestamp() "
                "WHERE s.head_eseq < EXCLUDED.head_eseq",
                (
                    shoe,
                    lv["eseq"],
                    lv["hash"],
                    lv.get("phase"),
                    lv.get("round"),
                    lv["kind"],
                    json.dumps(lv["result"]) if lv.get("result") else None,
                    name,
                ),
            )
        for shoe, (st, ctr, mac, at) in w.gateway.items():
            # gateway_at: the signed time (a retained state of a dead gateway shows as old)
            c.execute(
                "UPDATE shoes SET gateway=%s, gateway_at=to_timestamp(%s), "
                "state_ctr=%s, state_mac=%s, updated_at=clock_timestamp() "
                "WHERE shoe=%s AND state_ctr < %s",
                (json.dumps(st), at, ctr, mac, shoe, ctr),
            )
        for shoe, n in w.replays.items():
            c.execute(
                "UPDATE shoes SET replays = replays + %s, updated_at=clock_timestamp() "
                "WHERE shoe=%s",
                (n, shoe),
            )
        for shoe, n in w.state_refused.items():
            c.execute(
                "UPDATE shoes SET state_refused = state_refused + %s, "
                "updated_at=clock_timestamp() WHERE shoe=%s",
                (n, shoe),
            )
        for shoe, (n, topic) in w.quarantine.items():
            c.execute(
                "INSERT INTO quarantine AS q (shoe, collector, messages, last_topic) "
                "VALUES (%s,%s,%s,%s) ON CONFLICT (shoe, collector) DO UPDATE SET "
                "messages = q.messages + EXCLUDED.messages, last_topic = "
                "EXCLUDED.last_topic, last_seen = clock_timestamp()",
                (shoe, name, n, topic),
            )
        for shoe in w.unknown:  # one open alert per unknown id on the floor
            c.execute(
                "INSERT INTO alerts (shoe, kind, detail, collector) SELECT %s, "
                "'unknown_shoe', %s, %s WHERE NOT EXISTS (SELECT 1 FROM alerts WHERE "
                "shoe = %s AND kind = 'unknown_shoe' AND closed_at IS NULL)",
                (
                    shoe,
                    "messages for a shoe id this floor has no key for: quarantined "
                    "(not shown as a table; counts in quarantine)",
                    name,
                    shoe,
                ),
            )
        c.execute("SELECT pg_notify('floor', %s)", (",".join(sorted(w.touched))[:7000],))


def summary(res):
    return {
        "game": res.get("game"),
        "dealer": res.get("dealer", {}).get("category"),
        "seats": {s: v.get("net") for s, v in (res.get("seats") or {}).items()},
    }


class Writes:
    """What one batch writes, in one transaction."""

    def __init__(self):
        self.events, self.rounds, self.alerts, self.closes = [], [], [], []
        self.payloads = {}
        self.hashes = {}
        self.lives = {}
        self.gateway = {}
        self.config = {}
        self.touched = set()
        self.replays = {}
        self.state_refused = {}
        self.quarantine = {}
        self.unknown = []

    def empty(self):
        return not (
            self.events
            or self.alerts
            or self.lives
            or self.gateway
            or self.closes
            or self.replays
            or self.state_refused
            or self.quarantine
        )

    def event(
        self, shoe, eseq, kind, body, prev, head, mac, payload, chain, collector, gateway_at=None
    ):
        self.events.append(
            (
                shoe,
                eseq,
                kind,
                json.dumps(body, sort_keys=True),
                prev,
                head,
                mac,
                payload,
                chain,
                collector,
                gateway_at,
            )
        )
        self.payloads[(shoe, eseq)] = payload
        self.hashes[(shoe, eseq)] = head
        self.touched.add(shoe)

    def live(self, shoe, h):
        """The table's row as its live table (h.live) stands after this batch's events."""
        t = h.live
        result = t.last_result
        if result is not None and result["outcome"] == "result":
            result = dict(summary(t.result), round=t.result.get("round"), outcome="result")
        self.lives[shoe] = {
            "eseq": h.eseq,
            "hash": h.hash,
            "kind": t.kind,
            "phase": t.phase,
            "round": t.last_round,
            "result": result,
        }

    def round(self, shoe, eseq, rnd, outcome, summary, verdict):
        self.rounds.append((shoe, eseq, rnd, outcome, json.dumps(jsonable(summary)), verdict))

    def alert(self, shoe, eseq, kind, detail, ref=None):
        self.alerts.append((shoe, eseq, kind, detail, None if ref is None else str(ref)))
        self.touched.add(shoe)
