"""The reading half of shoe.games.packing: unpack(data) -> the round_result (the host unpacks;
the device only packs). The layout is described in shoe.games.packing.
"""

from shoe import cards as _cards
from shoe.games.packing import BONUS_CATS, HAND_CATS, PackError
from shoe.games.vocab import FCF, HCF, ONE, WAGERS


def _need(cond, what):
    if not cond:
        raise PackError("cannot unpack round_result: " + what)


class _Reader:
    def __init__(self, data):
        self.data = data
        self.i = 0

    def byte(self):
        b = self.data[self.i]
        self.i += 1
        return b

    def varint(self):
        n = shift = 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return n

    def zvarint(self):
        n = self.varint()
        return n >> 1 if not n & 1 else -((n + 1) >> 1)

    def text(self, n):
        s = bytes(self.data[self.i : self.i + n]).decode()
        self.i += n
        return s

    def cards(self, n):
        return [_cards.name(self.byte()) for _ in range(n)]

    def flush(self):
        n = self.byte()
        return {"length": n, "cards": self.cards(n)}


def unpack(data):
    """bytes from shoe.games.packing.pack() -> the round_result dict (PackError if malformed)."""
    try:
        return _unpack(_Reader(data))
    except (IndexError, ValueError, UnicodeError) as e:
        if isinstance(e, PackError):
            raise
        raise PackError("malformed packed round_result") from e


def _unpack(rd):
    b0 = rd.byte()
    _need(b0 >> 4 == 1 and b0 & 15 < 2, "unknown format")
    g = b0 & 15
    flags = rd.byte()
    # the type the engine gives a result (shoe.games.engine.settle), not events.ROUND_RESULT:
    # events.decode imports this module; the engine stays free of the host's vocabulary
    r = {"type": "round_result", "game": FCF if g == 0 else HCF}
    if flags & 1:
        r["round"] = rd.varint()
    if flags & 2:
        r["deck"] = rd.varint()
    if flags & 4:
        r["paytable"] = rd.text(rd.varint())
    if flags & 8:
        r["all_six_card"] = _cards.name(rd.byte()) if flags & 16 else None
    if g == 0:
        r["dealer"] = {
            "cards": rd.cards(5),
            "best": rd.cards(4),
            "category": HAND_CATS[rd.byte()],
            "opens": bool(flags & 32),
        }
    else:
        r["dealer"] = {"cards": rd.cards(7), "flush": rd.flush(), "qualifies": bool(flags & 32)}
    order = WAGERS[r["game"]]
    seats = {}
    for _ in range(rd.byte()):
        key = str(rd.byte())
        sf = rd.byte()
        mask = rd.byte()
        if g == 0:
            s = {"cards": rd.cards(5), "best": rd.cards(4), "category": HAND_CATS[rd.byte()]}
        else:
            s = {"cards": rd.cards(7), "flush": rd.flush(), "straight_flush": rd.byte()}
        wg = {}
        total = 0
        for i in range(len(order)):
            if mask >> i & 1:
                w, p = _read_wager(rd)
                wg[order[i]] = w
                total += p
        s["wagers"] = wg
        s["net"] = rd.zvarint()
        s["capped"] = bool(sf & 1)
        if sf & 2:
            s["uncapped_net"] = rd.zvarint() if sf & 4 else total
        seats[key] = s
    r["seats"] = seats
    _need(rd.i == len(rd.data), "trailing bytes")
    return r


def _read_wager(rd):
    flags = rd.byte()
    amount = rd.varint()
    n = rd.zvarint()
    fx = n if flags & 32 else n * ONE
    w = {"amount": amount, "result": n / ONE if flags & 32 else n}
    w["payout"] = rd.zvarint() if flags & 4 else (-amount if fx < 0 else amount * fx // ONE)
    if flags & 1:
        w["rounded"] = bool(flags & 2)
    if flags & 8:
        c = rd.byte()
        w["category"] = None if c == 0 else BONUS_CATS[c - 1]
    if flags & 16:
        n = rd.varint()
        w["tier"] = None if n == 0 else rd.text(n - 1)
    return w, w["payout"]
