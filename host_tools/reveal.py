"""The host's check of a round's secrecy: every commitment a shoe made, against its reveal.

A shoe sends each dealt card of an open round only as a commitment (firmware/shoe/
commitment.py, drawn and revealed by firmware/shoe/table/secret.py); when the decisions close,
or the round is voided, its `reveal` event gives the round's secret and every card in dealing
order (docs/protocol.md section 10, "Secrecy"). This is the ONE
place the host checks them: ShoeLink (at the table), `shoectl verify` (the audit store) and the
floor collector all feed their events to a RoundWatch, which recomputes every commitment with
the firmware's own `shoe.commitment.commit` and alerts on:

  - a revealed card that does not match its commitment (the shoe, or whoever holds its key,
    changed a card after dealing it),
  - a position committed and not revealed, revealed and never committed, committed twice, or
    committed after the reveal,
  - a round result whose cards are not the revealed ones,
  - a round that ends (result or void) after dealing committed cards without a reveal.

    w = RoundWatch(loader=None)        # one per shoe; events fed in eseq order
    for kind, round, detail in w.feed(kind, body):   # alerts (kind "reveal_mismatch")
        ...
    w.hands(rnd)                       # the revealed hands {"1": [...], "dealer": [...],
                                       # "all_six": name|None} (re-evaluation uses them)
    audit(events)                      # a whole stored log -> [{"eseq", "round", "detail"}]

`loader(rnd) -> [(kind, body), ...]`: the round's round_open, card and reveal events from a
durable store, for a watch that starts mid-round (a host restarted, a collector took a shoe
over). Bodies may come as sent (bytes) or as stored in JSON (bytes as hex). A card event that
still carries its card in clear (firmware before the secrecy change) is checked against the
reveal as it is, and a round made only of such events needs no reveal.
"""

from host_tools import events as E
from host_tools.events import jsonable as _norm  # bodies as a store holds them: an event as

#                                                  sent and loaded again compare equal
from shoe import cards as _cards
from shoe.commitment import commit

ALERT = E.REVEAL_MISMATCH
_KEEP = 2  # rounds a watch remembers after their outcome (their hands only: hands())


def _bytes(x):
    if isinstance(x, (bytes, bytearray, memoryview)):
        return bytes(x)
    if isinstance(x, str):
        try:
            return bytes.fromhex(x)
        except ValueError:
            return None
    return None


def _round_of(body):
    r = body.get("round") if isinstance(body, dict) else None
    return r if isinstance(r, int) and not isinstance(r, bool) else None


def check_reveal(reveal, cards):
    """Problems (text) of a reveal against the round's card events (bodies, any order)."""
    rnd = _round_of(reveal)
    secret = _bytes(reveal.get("secret"))
    shown = reveal.get("cards")
    if secret is None or len(secret) != 16 or not isinstance(shown, list):
        return ["round %s: the reveal is malformed (no 16-byte secret or no card list)" % rnd]
    out = []
    names = []
    for i, c in enumerate(shown):
        try:
            if _cards.parse(c) == _cards.COVER:
                raise _cards.CardError("cover")
            names.append(c)
        except _cards.CardError:
            out.append("round %s position %d: the reveal names no card (%r)" % (rnd, i, c))
            names.append(None)
    seen = {}
    for c in names:
        if c is not None:
            seen[c] = seen.get(c, 0) + 1
    for c, n in sorted(seen.items()):
        if n > 1:
            out.append("round %s: the reveal names %s %d times" % (rnd, c, n))
    by_pos = {}
    for b in cards:
        p = b.get("position")
        if not isinstance(p, int) or isinstance(p, bool):
            out.append("round %s: a card event without a position" % rnd)
            continue
        if p in by_pos:
            out.append("round %s position %d: committed twice" % (rnd, p))
            continue
        by_pos[p] = b
    for p in range(len(names)):
        if p not in by_pos:
            out.append(
                "round %s position %d: revealed (%s) but never committed" % (rnd, p, names[p])
            )
    for p in sorted(by_pos):
        b = by_pos[p]
        if p >= len(names):
            out.append("round %s position %d: committed but not revealed" % (rnd, p))
            continue
        card = names[p]
        if card is None:
            continue
        if "commit" in b:
            c = _bytes(b.get("commit"))
            target = b.get("target")
            if (
                c is None
                or not isinstance(target, str)
                or c != commit(secret, rnd, p, target, card)
            ):
                out.append(
                    "round %s position %d: the revealed card %s does not match its "
                    "commitment" % (rnd, p, card)
                )
        elif b.get("card") != card:  # a card sent in clear (older firmware)
            out.append(
                "round %s position %d: revealed %s, dealt %s" % (rnd, p, card, b.get("card"))
            )
    return out


def hands_of(shown, cards):
    """{"1": [...], ..., "dealer": [...], "all_six": name|None} from the revealed cards (in
    dealing order) and the card events' targets; discards left out (as the result does)."""
    target = {}
    for b in cards:
        p = b.get("position")
        if isinstance(p, int) and not isinstance(p, bool):
            target[p] = b.get("target")
    out = {"all_six": None}
    for p, c in enumerate(shown):
        t = target.get(p)
        if t == "all_six":
            if out["all_six"] is None:
                out["all_six"] = c
        elif isinstance(t, str) and t != "discard":
            out.setdefault(t, []).append(c)
    return out


def check_result(result, hands):
    """Problems (text) of a round result (unpacked) whose cards are not `hands` (hands_of)."""
    rnd = _round_of(result)
    out = []
    got = (result.get("dealer") or {}).get("cards")
    if got != hands.get("dealer", []):
        out.append(
            "round %s: the result's dealer cards %s are not the revealed %s"
            % (rnd, got, hands.get("dealer", []))
        )
    for seat, s in sorted((result.get("seats") or {}).items()):
        got = s.get("cards") if isinstance(s, dict) else None
        if got != hands.get(str(seat), []):
            out.append(
                "round %s: seat %s's cards %s in the result are not the revealed %s"
                % (rnd, seat, got, hands.get(str(seat), []))
            )
    if "all_six_card" in result and result.get("all_six_card") != hands.get("all_six"):
        out.append(
            "round %s: the result's All-Six card %s is not the revealed %s"
            % (rnd, result.get("all_six_card"), hands.get("all_six"))
        )
    return out


class _Round:
    __slots__ = ("opened", "cards", "reveal", "done", "hands")

    def __init__(self):
        self.opened = False
        self.cards = []
        self.reveal = None
        self.done = False
        self.hands = None  # kept once the round has ended (its card events let go)


class RoundWatch:
    """One shoe's rounds as its events arrive (in eseq order): alerts at reveal and outcome."""

    def __init__(self, loader=None):
        self.loader = loader
        self.rounds = {}
        self.checked = 0  # reveals checked (tests, figures)

    def _round(self, n, load=False):
        r = self.rounds.get(n)
        if r is None:
            r = self.rounds[n] = _Round()
            if load and self.loader is not None:
                for kind, body in self.loader(n) or ():
                    self._remember(r, kind, body)
        return r

    @staticmethod
    def _remember(r, kind, body):
        body = _norm(body)
        if kind == E.ROUND_OPEN:
            r.opened = True
        elif kind == E.CARD:
            if all(b.get("position") != body.get("position") for b in r.cards):
                r.cards.append(body)
        elif kind == E.REVEAL and r.reveal is None:
            r.reveal = body

    def feed(self, kind, body):
        """One event (as sent; a packed round_result is unpacked here) -> [(ALERT, round,
        detail)]."""
        if kind not in (E.ROUND_OPEN, E.CARD, E.REVEAL, E.ROUND_RESULT, E.ROUND_VOID):
            return []
        if kind == E.ROUND_RESULT:
            from host_tools.events import decode

            if isinstance(body, dict) and isinstance(body.get("packed"), str):
                body = dict(body, packed=_bytes(body["packed"]) or b"")  # as a store holds it
            try:
                kind, body = decode(kind, body)
            except Exception:  # not unpackable: re-evaluation reports it
                return []
        n = _round_of(body)
        if n is None:
            return []
        body = _norm(body)
        fresh = n not in self.rounds
        if kind == E.ROUND_OPEN:
            r = self._round(n)
            r.opened = True
            return []
        r = self._round(n, load=fresh)
        out = []
        if kind == E.CARD:
            same = [b for b in r.cards if b.get("position") == body.get("position")]
            if r.reveal is not None or r.done:
                if not same or same[0] != body:
                    out.append(
                        "round %s position %s: committed after the reveal"
                        % (n, body.get("position"))
                    )
            elif not same:
                r.cards.append(body)
            elif same[0] != body:  # (the same event again: loaded from the store first)
                out.append("round %s position %s: committed twice" % (n, body.get("position")))
        elif kind == E.REVEAL:
            if r.reveal is not None and r.reveal != body:
                out.append("round %s: revealed twice" % n)
            else:
                r.reveal = body
                self.checked += 1
                out += check_reveal(body, r.cards)
        else:
            out += self._outcome(n, r, kind, body)
            r.hands = self.hands(n)
            r.cards, r.reveal, r.done = [], None, True  # a floor holds hundreds of watches
            self._forget()
        return [(ALERT, n, d) for d in out]

    def _outcome(self, n, r, kind, body):
        clear = [b for b in r.cards if "commit" not in b]
        if r.reveal is None:
            if clear and len(clear) == len(r.cards):  # older firmware: cards in clear
                if kind == E.ROUND_RESULT:
                    pos = {b.get("position"): b.get("card") for b in clear}
                    shown = [pos.get(p) for p in range(len(clear))]
                    return check_result(body, hands_of(shown, clear))
                return []
            if r.cards:
                return [
                    "round %s: %s after %d committed card(s) without a reveal"
                    % (n, kind, len(r.cards))
                ]
            if kind == E.ROUND_RESULT and r.opened:
                return ["round %s: a result without a reveal" % n]
            return []
        if kind == E.ROUND_RESULT:
            return check_result(body, self.hands(n))
        return []

    def hands(self, n):
        """The revealed hands of round n (None before its reveal)."""
        r = self.rounds.get(n)
        if r is not None and r.done:
            return r.hands
        if r is None or r.reveal is None or not isinstance(r.reveal.get("cards"), list):
            return None
        return hands_of(r.reveal["cards"], r.cards)

    def _forget(self):
        done = sorted(k for k, r in self.rounds.items() if r.done)
        for k in done[:-_KEEP]:
            del self.rounds[k]
        if len(self.rounds) > 4 * _KEEP:  # rounds that never ended (a log cut short)
            for k in sorted(self.rounds)[:-4]:
                del self.rounds[k]


def audit(events):
    """Every round of a stored log (dicts with eseq, kind, body: AuditStore.events()) checked
    from scratch -> [{"eseq", "round", "detail"}]."""
    w = RoundWatch()
    out = []
    for ev in events:
        for _, n, detail in w.feed(ev["kind"], ev["body"]):
            out.append({"eseq": ev["eseq"], "round": n, "detail": detail})
    return out


class Shown:
    """What a screen may show of a shoe's rounds (the demo's display, `shoectl monitor`,
    `shoectl session`): where each card went as the card events come (public), and the cards
    once their round is revealed, never before.

        shown = Shown()
        got = shown.feed(kind, body)   # for a `reveal`: [(position, card, target)], else None
    """

    def __init__(self):
        self.targets = {}  # round -> {position: target}

    def feed(self, kind, body):
        if not isinstance(body, dict):
            return None
        n = _round_of(body)
        if kind == E.ROUND_OPEN:
            self.targets = {k: v for k, v in self.targets.items() if k >= (n or 0) - 2}
        elif kind == E.CARD and n is not None:
            self.targets.setdefault(n, {})[body.get("position")] = body.get("target")
        elif kind == E.REVEAL and n is not None and isinstance(body.get("cards"), list):
            t = self.targets.pop(n, {})
            return [(p, c, t.get(p)) for p, c in enumerate(body["cards"])]
        return None
