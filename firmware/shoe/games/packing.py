"""A compact binary form of a round_result for the wire: pack(result) -> bytes (PackError,
reason "pack", for anything it cannot carry exactly). The host reads it back
(host_tools/engine/unpacking.py: unpack(data); the device only packs). The layout and what it
carries: docs/engine.md, "The packed round_result".
"""
from shoe.errors import ShoeError

from shoe import cards as _cards

from shoe.games.vocab import FCF, HCF, ONE, WAGERS  # noqa: F401 (FCF, HCF: host_tools)
HAND_CATS = ("high_card", "pair", "two_pair", "straight", "flush", "three_of_a_kind",
              "straight_flush", "four_of_a_kind")
BONUS_CATS = ("four_of_a_kind", "royal_flush", "straight_flush", "three_of_a_kind", "flush",
               "straight", "two_pair", "six_card_royal_flush", "full_house")


class PackError(ShoeError):
    reason = "pack"


def _need(cond, what):
    if not cond:
        raise PackError("cannot pack round_result: " + what)


def _keys(d, allowed, what):
    _need(isinstance(d, dict), what + " is not an object")
    for k in d:
        _need(k in allowed, "unknown key %s in %s" % (k, what))


def _varint(out, n):
    _need(isinstance(n, int) and not isinstance(n, bool) and n >= 0, "bad integer")
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zvarint(out, n):
    _need(isinstance(n, int) and not isinstance(n, bool), "bad integer")
    _varint(out, n << 1 if n >= 0 else ((-n) << 1) - 1)


def _text(out, s):
    b = s.encode()
    _varint(out, len(b))
    out.extend(b)


def _card(out, name):
    _need(isinstance(name, str), "bad card")
    c = _cards.parse(name)
    _need(c < 52, "bad card")
    out.append(c)


def _cards_out(out, names, n):
    _need(isinstance(names, list) and len(names) == n, "bad card list")
    for x in names:
        _card(out, x)


def _flush(out, f):
    _keys(f, ("length", "cards"), "flush")
    _need(isinstance(f.get("cards"), list), "bad flush")
    _need(f.get("length") == len(f["cards"]), "bad flush")
    out.append(len(f["cards"]))
    _cards_out(out, f["cards"], len(f["cards"]))


def _fixed(x):
    """A result -> (fractional?, integer to store)."""
    if isinstance(x, float):
        n = int(round(x * ONE))
        _need(n / ONE == x, "result is not a multiple of 1/10000")
        return True, n
    _need(isinstance(x, int) and not isinstance(x, bool), "bad result")
    return False, x


def _wager(out, w, name):
    _keys(w, ("amount", "result", "payout", "rounded", "category", "tier"), "wager " + name)
    amount = w.get("amount")
    frac, r = _fixed(w.get("result"))
    fx = r if frac else r * ONE
    derived = -amount if fx < 0 else amount * fx // ONE
    payout = w.get("payout")
    flags = 0
    if "rounded" in w:
        _need(isinstance(w["rounded"], bool), "bad rounded")
        flags |= 1 | (2 if w["rounded"] else 0)
    if payout != derived:
        flags |= 4
    if "category" in w:
        flags |= 8
    if "tier" in w:
        flags |= 16
    if frac:
        flags |= 32
    out.append(flags)
    _varint(out, amount)
    _zvarint(out, r)
    if flags & 4:
        _zvarint(out, payout)
    if flags & 8:
        c = w["category"]
        _need(c is None or c in BONUS_CATS, "bad category")
        out.append(0 if c is None else BONUS_CATS.index(c) + 1)
    if flags & 16:
        t = w["tier"]
        if t is None:
            out.append(0)
        else:
            _need(isinstance(t, str), "bad tier")
            b = t.encode()
            _varint(out, len(b) + 1)
            out.extend(b)
    return payout


def pack(result):
    """round_result dict -> bytes (see the module docstring)."""
    _need(isinstance(result, dict) and result.get("type") == "round_result", "not a result")
    game = result.get("game")
    _need(game == FCF or game == HCF, "bad game")
    g = 0 if game == FCF else 1
    top = ("type", "game", "dealer", "seats", "round", "deck", "paytable")
    _keys(result, top + ("all_six_card",) if g == 0 else top, "round_result")
    out = bytearray((0x10 | g, 0))
    flags = 0
    if "round" in result:
        flags |= 1
        _varint(out, result["round"])
    if "deck" in result:
        flags |= 2
        _varint(out, result["deck"])
    if "paytable" in result:
        flags |= 4
        _need(isinstance(result["paytable"], str), "bad paytable name")
        _text(out, result["paytable"])
    if "all_six_card" in result:
        flags |= 8
        if result["all_six_card"] is not None:
            flags |= 16
            _card(out, result["all_six_card"])
    d = result.get("dealer")
    if g == 0:
        _keys(d, ("cards", "best", "category", "opens"), "dealer")
        _cards_out(out, d.get("cards"), 5)
        _cards_out(out, d.get("best"), 4)
        _need(d.get("category") in HAND_CATS, "bad category")
        out.append(HAND_CATS.index(d["category"]))
        ok = d.get("opens")
    else:
        _keys(d, ("cards", "flush", "qualifies"), "dealer")
        _cards_out(out, d.get("cards"), 7)
        _flush(out, d.get("flush"))
        ok = d.get("qualifies")
    _need(ok is True or ok is False, "bad opens / qualifies")
    if ok:
        flags |= 32
    out[1] = flags
    seats = result.get("seats")
    _need(isinstance(seats, dict) and len(seats) < 256, "bad seats")
    out.append(len(seats))
    order = WAGERS[game]
    for key in sorted(seats):
        _need(isinstance(key, str) and 0 < len(key) < 4 and not key.strip("0123456789")
              and 0 < int(key) < 256, "bad seat key")
        s = seats[key]
        if g == 0:
            _keys(s, ("cards", "best", "category", "wagers", "net", "capped", "uncapped_net"),
                  "seat")
        else:
            _keys(s, ("cards", "flush", "straight_flush", "wagers", "net", "capped",
                      "uncapped_net"), "seat")
        out.append(int(key))
        _need(s.get("capped") is True or s.get("capped") is False, "bad capped")
        at = len(out)
        out.append(0)
        wg = s.get("wagers")
        _keys(wg, order, "wagers")
        mask = 0
        for i in range(len(order)):
            if order[i] in wg:
                mask |= 1 << i
        out.append(mask)
        if g == 0:
            _cards_out(out, s.get("cards"), 5)
            _cards_out(out, s.get("best"), 4)
            _need(s.get("category") in HAND_CATS, "bad category")
            out.append(HAND_CATS.index(s["category"]))
        else:
            _cards_out(out, s.get("cards"), 7)
            _flush(out, s.get("flush"))
            sf = s.get("straight_flush")
            _need(isinstance(sf, int) and 0 <= sf <= 7, "bad straight_flush")
            out.append(sf)
        total = 0
        for name in order:
            if name in wg:
                total += _wager(out, wg[name], name)
        sf = 1 if s["capped"] else 0
        _zvarint(out, s.get("net"))
        if "uncapped_net" in s:
            sf |= 2
            if s["uncapped_net"] != total:
                sf |= 4
                _zvarint(out, s["uncapped_net"])
        out[at] = sf
    return bytes(out)

