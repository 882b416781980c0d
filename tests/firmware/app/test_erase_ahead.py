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


def idle(dealing=False):
    IDLE.append(T[0] if not dealing else -T[0])   # negative: the pause after a card
    return _idle(dealing)


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
    return [t - base if t >= 0 else base + t for t in IDLE]


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
card(D[3])
app.hw.host.sending = True   # the card's frame still on the wire at the first tick after it
out["after_card_frame_going"] = ticks_at(10, 30)
app.hw.host.sending = False
out["after_card_frame_gone"] = ticks_at(50)
for c in D[4:] + [52]:
    card(c)
out["deck_checked_due"] = app.hw.reader.dealing
out["after_deck_check"] = ticks_at(10, 100, 160, 180)
app.hw.host.sending = True
out["idle_frame_going"] = ticks_at(20, 40)
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
    # ... and each card is followed by one chance, at the first tick after it, as a pause
    # while dealing (negative: a compaction waits for a pause where none is expected)
    assert r["after_card"] == [-10], r
    # a card met while the ticker slept a quiet tick (App.next_tick): the tick after it may be
    # up to 100 ms late, close to the next card, so it erases only if it is as soon as usual
    assert r["after_quiet_sleep_late"] == [] and r["after_quiet_sleep_soon"] == [-10], r
    # a frame still going out to the host: an erase would hold it on the wire (its interrupts
    # off), so the erase waits for the first tick after the frame has left
    assert r["after_card_frame_going"] == [] and r["after_card_frame_gone"] == [-50], r
    # ... but with no card expected it is not put off: a reply waits at most 45 ms, and put off
    # the erase met the deck check that follows a configure at once (the README's session flow
    # on the emulated Pico: the reader UART overran under the riffle)
    assert r["idle_frame_going"] == [20, 40], r


PREFETCH_SCRIPT = (
    CLOCKED_APP
    + r"""
TICKS = []   # per tick: what it did ("erase", "none": the journal's idle and its answer; "import")
_idle = app.journal.idle
SECTORS = [0]   # sectors the ring still has to erase ahead (this board's store has none: the
                # journal's idle() says it erased while this is above 0)


def idle(*a):
    if SECTORS[0] > 0:
        SECTORS[0] -= 1
        r = True
    else:
        r = _idle(*a)
    TICKS[-1].append("erase" if r else "none")
    return r


_step = app.prefetch_one


def step():
    TICKS[-1].append("import")
    return _step()


app.journal.idle = idle
app.prefetch_one = step
app.boot()


def ticks(*offsets):
    base = T[0]
    del TICKS[:]
    for dt in offsets:
        T[0] = base + dt
        TICKS.append([])
        app.tick(1)
    return TICKS[:]


r = app.on_command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe",
                                 "paytable": "fcf-public-1"}, "supervisor")
out = {"configured": r.get("ok", True), "prefetch": app._prefetch is not None}
SECTORS[0] = 2
out["after_configure"] = ticks(*range(160, 160 + 20 * 16, 20))
app._prefetch = app._warm("four-card-frenzy")   # pending again, then a deck check starts
app.on_command("load_deck", {"serial": "3A7F", "back": "R"})
out["deck_check_pause"] = ticks(160, 400, 2000)
print(json.dumps(out))
"""
)


def test_idle_ticks_erase_ahead_before_they_import_and_a_riffle_pause_does_neither(
    tmp_path, fw_build
):
    """After a configure the first round's imports are pending (App._warm), and a deck check
    may start at once: the idle ticks erase ahead first, a tick that erased imports nothing, and
    the imports come once nothing is left to erase. A pause inside a deck check (cards expected)
    does neither. With the imports first, an erase left for the deck check blacked the emulated
    Pico out under the riffle and its reader UART overran (tests/emu/test_readme_flows.py)."""
    r = run_clocked(tmp_path, fw_build, PREFETCH_SCRIPT)
    assert r["configured"] and r["prefetch"], r
    ticks = r["after_configure"]
    assert all(t[0] in ("erase", "none") for t in ticks), r  # the journal is asked first
    assert all("import" not in t for t in ticks if t[0] == "erase"), r
    assert ticks[:3] == [["erase"], ["erase"], ["none", "import"]], r  # two sectors, then
    assert sum(t.count("import") for t in ticks) >= 5, r  # ... the imports go on
    assert r["deck_check_pause"] == [[], [], []], r
