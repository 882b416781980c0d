"""What the screens show of a round (the demo's display, `shoectl monitor`, `shoectl session`):
where each card went as it is dealt, the cards only once the round is revealed. Fed the events
of a real table (shoe.table.Table, a six-seat FCF round with All-Six), each screen's output up
to the reveal names no dealt card; after it, every one."""

import io

from rich.console import Console

from host_tools.commands import monitor
from host_tools.commands import session as session_cmd
from host_tools.display import RoundDisplay
from host_tools.reveal import Shown
from shoe.cards import name
from shoe.games import engine
from tests.firmware.table.helpers import FCF, make, play, shuffled
from tests.security import leaks


def _round():
    t = make(FCF, "manual-shoe", engine=engine)
    order = shuffled(17)
    ev = play(t, range(1, 7), order, a6_seats=(1,), raises={str(s): 10 for s in range(1, 7)})
    from host_tools.events import decode

    return [decode(k, b) for k, b in ev], [name(c) for c in order[:36]]


def _split(events):
    i = [k for k, _ in events].index("reveal")
    return events[:i], events[i:]


def test_the_demo_display_shows_each_card_once_revealed():
    events, cards = _round()
    before, after = _split(events)
    out = io.StringIO()
    show = RoundDisplay(Console(file=out, width=200, color_system=None))
    for k, b in before:
        show(k, b)
    assert leaks.search(out.getvalue(), cards) == {}
    assert "dealt 36 cards face down" in out.getvalue()
    for k, b in after:
        show(k, b)
    assert set(leaks.search(out.getvalue(), cards)) == set(cards)
    assert "%s→A6" % cards[0] in out.getvalue()


def test_the_monitor_shows_each_card_once_revealed():
    events, cards = _round()
    before, after = _split(events)
    view = monitor.TableView()
    lines = []
    for k, b in before:
        view.apply(k, b)
        lines.append(monitor.line(k, b))
    text = "\n".join(lines) + str(view.hands)
    assert leaks.search(text, cards) == {}
    assert all(set(h) <= {"··"} for h in view.hands.values())
    for k, b in after[:1]:  # the reveal
        view.apply(k, b)
        lines.append(monitor.line(k, b))
    assert sorted(c for h in view.hands.values() for c in h) == sorted(cards)
    assert set(leaks.search("\n".join(lines), cards)) == set(cards)


def test_the_printed_session_shows_each_card_once_revealed():
    events, cards = _round()
    before, after = _split(events)
    shown = Shown()
    text = "\n".join(session_cmd._human(k, b, shown) for k, b in before)
    assert leaks.search(text, cards) == {}
    assert "face down -> all_six" in text
    rev = session_cmd._human(*after[0], shown)
    assert rev.startswith("round 1 REVEAL") and set(leaks.search(rev, cards)) == set(cards)
    assert "0 %s->all_six" % cards[0] in rev
