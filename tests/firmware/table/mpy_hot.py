"""MicroPython, 64k heap: a deal and a stub through the ledger and the tracker under
micropython.heap_lock(): the per-card paths allocate nothing."""

import json
import micropython

from shoe.deck.ledger import Ledger
from shoe.dealing.tracker import Tracker

S = 0x3A7F


def deal_and_stub(lg, tr, order):
    i = 0  # while loops: range() itself allocates
    while i < tr.total:
        c = order[51 - i]
        if lg.classify(S, "R", c, 0) is None:
            lg.accept(c)
            tr.place(c)
        i += 1
    lg.open_pass("stub", 0)  # clears its bitmaps in place
    while i < 52:
        lg.pass_read(S, "R", order[51 - i])
        i += 1
    return lg.pass_read(S, "R", 52)


def main():
    lg = Ledger()
    lg.load(S, "R", 0)
    for c in range(53):
        lg.pass_read(S, "R", c)
    ok = lg.close_pass()["ok"]
    tr = Tracker()
    tr.reset("four-card-frenzy", "automated-shoe", [1, 2, 3, 4, 5, 6], False)
    lg.begin_round(0)
    order = bytearray(range(52))
    micropython.heap_lock()
    try:
        end = deal_and_stub(lg, tr, order)
    finally:
        micropython.heap_unlock()
    rep = lg.close_pass()
    print(
        json.dumps({"dealt": tr.n, "stub": rep["counts"]["stub"], "ok": ok and end and rep["ok"]})
    )


main()
