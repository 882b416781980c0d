"""Double reads and cloned cards (issue 9, finding 5), under MicroPython and on the virtual board.

A cloned card read 100 ms after the real one must not vanish as a "double read": without a
card-exit beam the driver only de-duplicates when the table's configuration says the reader
double-reads, and its window never slides with dropped repeats."""

import json

from tests.firmware.drivers.test_optical import READER
from tests.mpy import json_lines, run_code

PRELUDE = (
    READER
    + """
def at(t, line):
    T[0] = t
    u.inject(line + b"\\r\\n")
    out = []
    while True:
        x = r.poll()
        if x is None:
            return len(out)
        out.append(x)
"""
)
CODE = b"3A7FRAs1d52a21b"


def run(body):
    return json_lines(run_code(PRELUDE + body))


def test_a_clone_read_100_ms_after_the_real_card_reaches_the_table():
    [out] = run(
        """
r.dedup = False      # no beam, the configuration does not say the reader double-reads
print(json.dumps([at(0, %r), at(100, %r), r.double_reads]))
"""
        % (CODE, CODE)
    )
    assert out == [1, 1, 0]


def test_the_window_does_not_slide_with_dropped_repeats():
    [out] = run(
        """
print(json.dumps([at(0, %r), at(200, %r), at(300, %r), at(450, %r), r.double_reads]))
"""
        % (CODE, CODE, CODE, CODE)
    )
    # 200 is within 250 ms of the first read: dropped; 300 is not (a sliding window would
    # have dropped it, and every later repeat as long as they kept coming)
    assert out == [1, 0, 1, 0, 2]


def test_on_the_virtual_board_a_second_read_voids_the_round_unless_configured(tmp_path):
    """The world's double-read fault (the same code twice in a row) during the deal: an
    irregularity by default (no beam on the virtual board); one read when the configuration
    says the reader double-reads (which needs the supervisor key)."""
    from host_tools.errors import ShoeError
    from host_tools.sim.virtual_table import VirtualTable
    from tests.e2e.conftest import Recorder

    seats = {"1": {"wagers": {"ante": 10, "odds": 10}}}
    rnd = {"seats": seats, "faults": [{"kind": "double-read", "at": 4}]}
    rec = Recorder()
    with VirtualTable(str(tmp_path / "s"), on_event=rec) as t:
        out = t.runner.play(
            {"game": "four-card-frenzy", "procedure": "manual-shoe", "seed": 3, "rounds": [rnd]}
        )
        assert [o[1] for o in out] == ["round_void"]
        [void] = rec.of("round_void")
        assert void["reason"] == "card_duplicate", void
        # turning the check off is a supervisor's decision
        try:
            t.link.command(
                "configure",
                {"game": "four-card-frenzy", "procedure": "manual-shoe", "double_reads": True},
                timeout=10,
                supervisor=False,
            )
            raise AssertionError("double_reads accepted with the table key")
        except ShoeError as e:
            assert e.reason == "needs_supervisor"
    rec = Recorder()
    with VirtualTable(str(tmp_path / "d"), on_event=rec) as t:
        out = t.runner.play(
            {
                "game": "four-card-frenzy",
                "procedure": "manual-shoe",
                "seed": 3,
                "double_reads": True,
                "rounds": [rnd],
            }
        )
        assert [o[1] for o in out] == ["round_result"]
        assert json.dumps(rec.of("double_read")).count('"count": 1') == 1
