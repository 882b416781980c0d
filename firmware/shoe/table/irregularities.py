"""Irregularities: latched until acknowledged, some blocking the next round; an irregular round
is void (functions of the Table). Reasons and what each does: docs/irregularities.md."""
from micropython import const

from shoe import reasons as R
from shoe.deck.ledger import CHECKING, OUT
from shoe.errors import CommandError

_MAX_LATCHED = const(16)
_LATCHED_BYTES = const(480)  # of the status reply (frame payload <= 1006 B) for latched entries


# clause: rules:3-latched
def latch(self, reason, detail, rnd_n=None):
    self._dirty()   # every outcome but a dealt card latches, or comes through command(),
    #                 reject() or card()'s other branches, which leave the delta unknown too
    self.n_irq += 1
    irq = {"id": self.n_irq, "reason": reason, "action": R.action(reason), "latched": True,
           "round": rnd_n, "blocks": R.blocks(reason), "detail": detail}
    latched = self.latched
    if len(latched) >= _MAX_LATCHED:
        for i in range(len(latched)):
            if not latched[i]["blocks"]:
                latched.pop(i)
                break
    latched.append(irq)
    self._emit("irregularity", irq)
    return irq


# clause: rules:3-latched
def blocked(self):
    for irq in self.latched:
        if irq["blocks"]:
            return True
    return False


# clause: rules:3-latched
def ack(self, body, now):
    known = [i["id"] for i in self.latched]
    ids = body.get("ids")
    if body.get("all") is True:
        ids = known
    elif ids is None:
        ids = [body.get("id")]
    if not isinstance(ids, list):
        raise CommandError("ack: give {\"id\": N}, {\"ids\": [...]} or {\"all\": true}",
                           "bad_field")
    for i in ids:
        if i not in known:
            raise CommandError("ack: no latched irregularity %r" % (i,),
                               "unknown_irregularity")
    keep = []
    for irq in self.latched:
        if irq["id"] in ids:
            self._emit("irregularity_cleared", {"id": irq["id"], "reason": irq["reason"]})
        else:
            keep.append(irq)
    self.latched = keep
    return {"ok": True, "cleared": ids}


def latched_fitting(self, room=_LATCHED_BYTES):
    """The oldest latched irregularities that fit in `room` bytes of the status reply, and in the
    table's share of it (an entry costs at most its text plus 64 bytes encoded): with all 16 the
    reply would not fit in one frame, and a shoe that cannot say its status cannot have its
    errors acknowledged. One is always listed, without its detail if even that does not fit
    (its irregularity event has it); `latched_count` says how many there are, and acknowledging
    these shows the next ones."""
    out = []
    room = min(room, _LATCHED_BYTES)
    for irq in self.latched:
        room -= len(irq["reason"]) + len(irq["action"]) + len(irq["detail"] or "") + 64
        if room < 0:
            break
        out.append(irq)
    if not out and self.latched:
        irq = dict(self.latched[0])   # a copy: the table keeps the detail
        irq["detail"] = None
        out.append(irq)
    return out


# clause: irr:void-supervisor
def void_round(self, body, now):
    """The host voids the open round: the table key until a card of it has left the shoe, the
    supervisor's after (shoe.roles, checked by Table.command)."""
    if self.rnd is None:
        raise CommandError("void_round: no round is open", "no_round")
    detail = body.get("detail", "")
    if not isinstance(detail, str):
        raise CommandError("void_round: detail must be text", "bad_field")
    self._void("void_supervisor", detail[:80], now)
    return {"ok": True}


# clause: rules:3-never-settle, rules:3-card-other-back
def void(self, reason, detail, now, remember=True):
    rnd = self.rnd
    lg = self.ledger
    if remember:
        self.shuffle.remember(self._sequence(False))
    irq = self._latch(reason, detail, rnd.n)
    slot = rnd.slot
    if irq["action"] == "void_recheck":
        lg.mark(slot, CHECKING)
    else:
        lg.mark(slot, OUT)
        if reason == "card_other_back":
            lg.mark(1 - slot, OUT)
    if lg.p_kind is not None:
        lg.drop_pass()
    self._emit("round_void", {"round": rnd.n, "reason": reason, "detail": detail,
                              "irregularity": irq["id"], "deck": rnd.deck})
    lg.end_round(False)
    self.rnd = None
    self.t_last = None


# clause: irr:power-loss
def void_in_progress(self, reason, now):
    """The app cannot know what happened to the open round: void it (default reason
    power_loss). Returns True if a round was voided."""
    if self.rnd is None:
        return False
    self._void(reason if isinstance(reason, str) else "power_loss", "voided by the app", now)
    self._after(now)
    return True


# clause: irr:journal-corrupt
def journal_damaged(self, detail, stale, now, last_round=0):
    """The journal lost records to flash corruption (docs/journal.md): latch
    journal_corrupt (it blocks until a supervisor acknowledges it). If the restored state
    may be older than what happened (`stale`), the open round is void, the loaded decks
    are out (load and check a deck again) and round numbers continue after `last_round`, the
    highest the journal's kept results show (the lost records may have used the ones before)."""
    if stale and last_round > self.n_round:
        self.n_round = last_round
    if stale and self.rnd is not None:
        self._void("journal_corrupt", detail, now, remember=False)
    else:
        self._latch("journal_corrupt", detail, None)
    if stale:
        for s in (0, 1):
            self.ledger.mark(s, OUT)
        self.n_irq += 16  # ids of irregularities the lost records may have latched
    self._after(now)
