"""A shoe (the real Journal under the firmware's Endpoint) and a host (HostEndpoint + the real
audit store) in one process, for damage done to the journal between two lives of the shoe
(test_damage.py, CPython).

    rig = Rig(root, store=factory)   # factory() -> a journal store (None: the files in root)
    rig.history()                    # commands, rounds, cards, a latched irregularity, acks:
                                     # the host stores every event, the shoe closes
    ... damage the journal (its files, or the fake flash behind the store) ...
    problems = rig.second_life()     # boot, a boot event, the host (holding what it held)
                                     # reconnects, one more event: [] or what went wrong

second_life() checks the issue's properties end to end: the shoe's event sequence, command
counter and boot count never go back; no event of the second life has the number of one the
first life journalled (so none of the host's); every first-life event the host lacks lies
inside a gap the host counted (event_gap) and the audit store marks (and `verify` reports) it,
never a broken chain; every event the recovered journal still holds reaches the host byte for
byte; the journal's marks keep the latched irregularities and the round number.
"""

import os

from host_tools.audit import AuditStore
from host_tools.link.host import make_endpoint
from shoe.journal.journal import Journal

KEY = b"k" * 32
ID = "T-DMG"
KEEP = (("table", "latched"), ("table", "n"), ("table", "irq"))
# SHOE_SOAK=full: the sweeps at EVERY bit position and zeroed length (minutes); make test
# samples positions (the journal's damage tests stay a few seconds in all)
SOAK = os.environ.get("SHOE_SOAK") == "full"


class Unsettled(Exception):
    pass


class Rig:
    def __init__(self, root, store=None, max_bytes=1 << 20):
        self.root = root
        self.mkstore = store or (lambda: None)
        self.max_bytes = max_bytes
        self.now = 0
        self.sealed = {}  # eseq -> payload: every event the first life journalled
        self.rows = []  # what the host stored in the first life (to build it again)
        self.table = {"latched": [], "n": 0, "irq": 0, "cards": ""}
        self.ctr_seen = {}

    # ---- the two ends -----------------------------------------------------------------------
    def boot(self):
        self.j = Journal(
            self.root,
            max_bytes=self.max_bytes,
            outbox_limit=64,
            outbox_bytes=16384,
            store=self.mkstore(),
            keep=KEEP,
        )
        self.shoe = make_endpoint("shoe", KEY, store=self.j, shoe_id=ID, sid=7)
        self.new = []  # (eseq, payload) journalled in this life
        add = self.j.outbox_add

        def recorded(items, state=None, ops=None):
            add(items, state, ops)
            self.new.extend((e, bytes(p)) for e, p, _ in items)

        self.j.outbox_add = recorded

    def connect(self, audit):
        self.audit = audit
        self.host = make_endpoint(
            "host", KEY, sid=9, on_peer=lambda h: audit.last_eseq(ID), ctr_seen=self.ctr_seen
        )

    def pump(self, until=None, limit=400, settle=True):
        """Both ends run (20 ms ticks) until `until()` holds and nothing moves (settle=False:
        until it holds), or `limit`."""
        quiet = 0
        for _ in range(limit):
            self.now += 20
            moved = False
            out = self.shoe.transmit(self.now)
            for kind, body, eseq, meta in self.host.receive(out, self.now):
                if eseq:
                    if (
                        self.audit.store(ID, eseq, kind, body, meta) == "new"
                        and self.audit is self.first
                    ):
                        self.rows.append((eseq, kind, body, meta))
            moved = bool(out)
            back = self.host.transmit(self.now)
            for _kind, _body, ctr, _ in self.shoe.receive(back, self.now):
                self.shoe.reply(ctr, {"ok": True})
            moved = bool(out) or bool(back)
            if not settle and until():
                return
            quiet = 0 if moved or (until and not until()) else quiet + 1
            if quiet > 30 and not self.host.backlog():
                return
        raise Unsettled(
            "the link did not settle (the host: %s, %r)" % (self.host.hold, self.host.errors())
        )

    # ---- what a table does ------------------------------------------------------------------
    def step(self, events, change=None):
        t = self.table
        if change:
            change(t)
        self.shoe.send_many(events, state={"table": dict(t, latched=list(t["latched"]))})

    def card(self, i):
        self.table["cards"] += "%02x" % i
        # a dealt card: the table's own delta (extend "cards", key rank 0 of {"table": ...})
        self.shoe.send_many([("card", {"i": i})], ops=[[[0, 0], "%02x" % i, 1]])

    def history(self, rounds=3, away=False):
        """Rounds with commands, cards and a latch, then a card, a latch and two cards (these
        last after the journal's last mark). `away`: the host stores everything up to the first
        of those, then goes away and never receives the other four."""
        self.first = AuditStore(":memory:")
        self.boot()
        self.connect(self.first)
        self.step([("hello", {"boot": self.j.boot})])
        self.pump(lambda: self.host.up)
        for r in range(rounds):
            self.host.command("open_round", {"n": r})
            self.pump()
            self.step([("round_open", {"round": r + 1})], lambda t: t.update(n=t["n"] + 1))
            for c in range(4):
                self.card(r * 4 + c)
            if r == 1:
                self.step(
                    [("irregularity", {"id": 1, "reason": "card_out_of_round"})],
                    lambda t: (
                        t.update(irq=1),
                        t["latched"].append(
                            {"id": 1, "reason": "card_out_of_round", "blocks": False}
                        ),
                    ),
                )
            self.pump()
            self.step([("round_result", {"round": r + 1, "net": 10 * r})])
            self.j.add_round(r + 1, "round_result", {"round": r + 1})
            self.pump()
        self.card(99)  # the last records: a card, then a latch after it
        if away:
            self.pump(lambda: self.first.last_eseq(ID) == self.j.eseq, settle=False)
            self.card(98)
        self.step(
            [("irregularity", {"id": 2, "reason": "lid_open"})],
            lambda t: (
                t.update(irq=2),
                t["latched"].append({"id": 2, "reason": "lid_open", "blocks": True}),
            ),
        )
        self.card(97)  # after the last mark: only the log knows of it
        self.card(96)
        if not away:
            self.pump(lambda: self.first.last_eseq(ID) == self.j.eseq, settle=False)
        self.sealed = dict(self.new)
        self.ctr_seen = dict(self.host.ctr_seen)
        self.before = {
            "eseq": self.j.eseq,
            "ctr": self.j.ctr,
            "boot": self.j.boot,
            "latched": list(self.table["latched"]),
            "n": self.table["n"],
            "acked": self.j.outbox_first() - 1,
        }
        self.j.close()
        assert len(self.sealed) == self.j.eseq
        assert self.first.last_eseq(ID) == self.j.eseq - (4 if away else 0)

    # ---- after the damage ---------------------------------------------------------------------
    def second_life(self):
        audit = AuditStore(":memory:")
        for eseq, kind, body, meta in self.rows:  # the host holds what it held
            audit.store(ID, eseq, kind, body, meta)
        self.boot()
        j, b = self.j, self.before
        bad = []
        if j.eseq < b["eseq"] or j.ctr < b["ctr"] or j.boot <= b["boot"]:
            bad.append(
                "a counter went back: eseq %d ctr %d boot %d, before %d %d %d"
                % (j.eseq, j.ctr, j.boot, b["eseq"], b["ctr"], b["boot"])
            )
        rec = j.recovery
        if rec is not None:
            kept = rec["kept"] or {}
            if kept.get("latched") != b["latched"] or kept.get("n") != b["n"]:
                bad.append("the marks lost what they keep: %r" % (kept,))
        st = j.state
        if st is not None:
            self.table = st["table"]
        if rec is not None and st is not None:  # what the table does (journal_damaged)
            self.table["latched"] = list(rec["kept"]["latched"])
            self.table["n"] = max(self.table["n"], rec["kept"]["n"])
        elif rec is None and (st is None or st["table"]["latched"] != b["latched"]):
            bad.append("an exact recovery without the latched irregularities: %r" % (st,))
        held = j.outbox()  # what the journal still holds is sent, never dropped
        if rec is not None and rec["jump"] and not rec["holes"]:  # kept up to the damage
            held = [(e, p) for e, p in self.sealed.items() if b["acked"] < e <= rec["jump"][0]]
        self.step([("hello", {"boot": j.boot})])
        self.connect(audit)
        try:
            self.pump(lambda: self.host.up and audit.last_eseq(ID) >= j.eseq)
            self.card(100)
            self.pump(lambda: audit.last_eseq(ID) >= j.eseq)
        except Unsettled as e:
            bad.append(str(e))
        reused = [e for e, p in self.new if e in self.sealed]
        if reused:
            bad.append("numbers used again: %r" % reused[:5])
        rows = {e["eseq"]: e for e in audit.events(ID)}
        got = dict(audit.payloads(ID, limit=10000))
        dropped = [e for e, p in held if bytes(got.get(e) or b"") != p]
        if dropped:
            bad.append("events the journal held never reached the host: %r" % dropped[:5])
        lost = [e for e in self.sealed if e not in rows]
        gaps = self.host.errors().get("event_gap", 0)
        for e in lost:
            nxt = min([x for x in rows if x > e] or [0])
            if not nxt or rows[nxt]["chain"] != "gap" or not gaps:
                bad.append("event %d lost without a counted gap" % e)
                break
        rep = audit.verify(ID, KEY)
        if rep["broken"] or rep["bad_mac"] or rep["body_mismatch"] or (lost and not rep["gaps"]):
            bad.append("verify: %r" % ({k: rep[k] for k in ("broken", "bad_mac", "gaps")},))
        if audit.last_eseq(ID) != j.eseq:
            bad.append(
                "the host stores up to %d, the shoe is at %d" % (audit.last_eseq(ID), j.eseq)
            )
        j.close()
        return bad
