"""Deterministic JSON text for round results: the same bytes under CPython and MicroPython.

MicroPython dicts do not keep insertion order and its float repr differs from CPython's, so
results are written here rather than with json.dumps: keys in the fixed order of KEY_ORDER
(interfaces.md 4 order), other keys after them (digit strings numerically, then by text); ints as
they are; floats (fractional odds, always multiples of 1/10000) with up to four decimals;
strings ASCII-only with \\uXXXX escapes (like json.dumps with ensure_ascii).
"""

KEY_ORDER = (
    "type", "line", "message", "reason", "game", "round", "deck", "paytable", "example",
    "dealer", "all_six_card", "seats", "amount", "cards", "best", "category", "opens", "flush",
    "length",
    "straight_flush", "qualifies", "wagers", "ante", "odds", "raise", "prime",
    "four_card_bonus", "all_six", "flush_bonus", "straight_flush_bonus", "progressive",
    "tier", "result", "payout", "rounded", "net", "capped", "uncapped_net")


def sort_key(k):
    """The order of keys in the text: KEY_ORDER first, then digit strings, then the rest."""
    try:
        return (0, KEY_ORDER.index(k), "")
    except ValueError:
        pass
    if isinstance(k, str) and 0 < len(k) < 10 and not k.strip("0123456789"):
        return (1, int(k), "")
    return (2, 0, str(k))


def write_str(s, w):
    """Write string `s` as JSON text (ASCII-only, escaped) through w(str)."""
    for b in s.encode():  # fast path: plain ASCII needs no escaping
        if b < 0x20 or b > 0x7E or b == 0x22 or b == 0x5C:
            break
    else:
        w('"')
        w(s)
        w('"')
        return
    w('"')
    for ch in s:
        o = ord(ch)
        if ch == '"':
            w('\\"')
        elif ch == "\\":
            w("\\\\")
        elif 0x20 <= o < 0x7F:
            w(ch)
        elif ch == "\n":
            w("\\n")
        elif o >= 0x10000:
            o -= 0x10000
            w("\\u%04x\\u%04x" % (0xD800 | (o >> 10), 0xDC00 | (o & 0x3FF)))
        else:
            w("\\u%04x" % o)
    w('"')


def _float(x):
    n = int(round(x * 10000))
    if n == x * 10000 or abs(n - x * 10000) < 1e-6 * (1 + abs(n)):
        sign = "-" if n < 0 else ""
        n = abs(n)
        frac = ("%04d" % (n % 10000)).rstrip("0")
        return "%s%d.%s" % (sign, n // 10000, frac or "0")
    return repr(x)


def dump(obj, w):
    """Write obj as JSON text through w(str) (e.g. sys.stdout.write): no big string built."""
    if obj is None:
        w("null")
    elif obj is True:
        w("true")
    elif obj is False:
        w("false")
    elif isinstance(obj, int):
        w(str(obj))
    elif isinstance(obj, float):
        w(_float(obj))
    elif isinstance(obj, str):
        write_str(obj, w)
    elif isinstance(obj, dict):
        w("{")
        first = True
        for k in sorted(obj, key=sort_key):
            if not first:
                w(", ")
            first = False
            write_str(str(k), w)
            w(": ")
            dump(obj[k], w)
        w("}")
    elif isinstance(obj, (list, tuple)):
        w("[")
        first = True
        for v in obj:
            if not first:
                w(", ")
            first = False
            dump(v, w)
        w("]")
    else:
        raise TypeError("not JSON: %s" % type(obj).__name__)


def dumps(obj):
    out = []
    dump(obj, out.append)
    return "".join(out)
