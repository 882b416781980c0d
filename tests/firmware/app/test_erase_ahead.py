"""When the journal erases ahead (under MicroPython, the real App's ticker): while cards are
expected (a deck check, a round, its stub) at the first tick after each card, when the next card
is furthest away, and never after a pause; when none is expected, after 150 ms without a card.
On the emulated Pico an erase that began after the pause between the deal and the stub riffle
met the riffle's first tag: a 45 ms erase with interrupts off delayed its first answer to 61 ms
of the ~96 ms a riffled tag stays in the field (bench/bench_pace.py --gaps)."""

from tests.firmware.app.appscript import CLOCKED_APP, run_clocked

SCRIPT = (
    CLOCKED_APP
    + r"""
IDLE = []
_idle = app.journal.idle


def idle():
    IDLE.append(T[0])
    return _idle()


app.journal.idle = idle
app.boot()
app._prefetch = None   # (the first round's imports, done in the same pauses: not measured)


def command(k, body, role="table"):
    r = app.on_command(k, body, role)
    if not r.get("ok", True):
        raise RuntimeError((k, r))


def ticks_at(*offsets):
    # ticks at these ms after the last card; -> the offsets at which the journal erased ahead
    base = T[0]
    del IDLE[:]
    for dt in offsets:
        T[0] = base + dt
        app.tick(1)
    return [t - base for t in IDLE]


def card(c):
    T[0] += 500
    app.on_read("card", card_code(c))


out = {}
command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe",
                      "paytable": "fcf-public-1"}, "supervisor")
app._prefetch = None   # (set again by the configure: not measured here either)
out["idle_before_deck"] = ticks_at(20, 100, 160, 180)
command("load_deck", {"serial": "3A7F", "back": "R"})
out["due_deck_check"] = app.hw.reader.dealing
out["load_deck_pause"] = ticks_at(20, 160, 400)
D = deck()
card(D[0])
out["after_card"] = ticks_at(10, 30, 60, 160, 400, 2000)
app._slept = 100   # the ticker was in a quiet tick's sleep when the next card came
card(D[1])
out["after_quiet_sleep_late"] = ticks_at(60, 160, 400)
app._slept = 100
card(D[2])
out["after_quiet_sleep_soon"] = ticks_at(10, 30)
app._slept = 20
for c in D[3:] + [52]:
    card(c)
out["deck_checked_due"] = app.hw.reader.dealing
out["after_deck_check"] = ticks_at(10, 100, 160, 180)
print(json.dumps(out))
"""
)


def test_the_journal_erases_ahead_right_after_a_card_while_cards_are_expected(tmp_path, fw_build):
    r = run_clocked(tmp_path, fw_build, SCRIPT)
    # no card expected: after 150 ms without one, at every tick (each erases at most a sector)
    assert r["idle_before_deck"] == [160, 180], r
    assert r["deck_checked_due"] is False and r["after_deck_check"] == [160, 180], r
    # a deck check: the deck's cards are expected, so the pause after load_deck erases nothing
    # (its first card may come at any moment) ...
    assert r["due_deck_check"] is True and r["load_deck_pause"] == [], r
    # ... and each card is followed by one chance, at the first tick after it
    assert r["after_card"] == [10], r
    # a card met while the ticker slept a quiet tick (App.next_tick): the tick after it may be
    # up to 100 ms late, close to the next card, so it erases only if it is as soon as usual
    assert r["after_quiet_sleep_late"] == [] and r["after_quiet_sleep_soon"] == [10], r
