"""A command whose events the journal cannot write for memory (under MicroPython, the real App;
a fragmented `.mpy` heap on the Pico failed a 988-byte allocation so, docs/hardware.md). Once:
the write is tried again at once after a collection and the command is answered as if nothing
happened. Twice in a row: the shoe answers `not_journalled` naming the cause (done in RAM, not
durable yet: docs/protocol.md section 4), keeps running, and the command's events are not lost:
they wait in RAM and are journalled and sent once a write succeeds (App._flush_table's backlog).
A refused command is answered with its own refusal even then."""

import json

from tests.firmware.app.appscript import APP_ROOM, HOSTED_APP
from tests.mpy import json_lines, run_mpy

SCRIPT = (
    HOSTED_APP
    + r"""
pump(10)
command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe",
                      "paytable": "fcf-public-1"})
command("load_deck", {"serial": "3A7F", "back": "R"})
for c in deck() + [52]:
    app.on_read("card", card_code(c))
    pump(2)
real = app.journal.outbox_add


FAILS = [int(sys.argv[2])]


def no_room(*a, **k):   # the allocation that failed on the chip, FAILS times in a row
    FAILS[0] -= 1
    if FAILS[0] <= 0:
        app.journal.outbox_add = real
    raise MemoryError("memory allocation failed, allocating 988 bytes")


app.journal.outbox_add = no_room
del events[:]
ROUND = {"seats": {"1": {"wagers": {"ante": 10, "odds": 10}}}}
kind, body = command("open_round", ROUND)
during = {}
if len(sys.argv) > 3:   # while the writes still fail: a query and a refused command
    k, b = command("status", {})
    during["status"] = [k, b.get("round")]
    k, b = command("open_round", ROUND)
    during["again"] = [k, b.get("reason")]
for _ in range(30):   # the ticker's ticks: the backlog is retried
    app.tick()
    pump(2)
st = command("status", {})
print(json.dumps({"kind": kind, "body": body, "faults": app.faults,
                  "events": [e[0] for e in events if e[0] not in ("reply", "error")],
                  "internal": [e[1] for e in events if e[0] == "internal_error"],
                  "status": st[0], "round": st[1].get("round"), "backlog": len(app.backlog),
                  "during": during}))
"""
)


def run(tmp_path, fails, *more):
    script = tmp_path / "store_failure.py"
    script.write_text(SCRIPT)
    args = (str(tmp_path), str(fails)) + more
    return json_lines(run_mpy(str(script), heap=APP_ROOM, args=args, timeout=120))[-1]


def test_a_journal_write_short_of_memory_once_is_tried_again_and_answered(tmp_path):
    out = run(tmp_path, 1)
    assert out["kind"] == "reply" and out["faults"] == 0 and out["internal"] == [], out
    assert out["events"].count("round_open") == 1 and out["backlog"] == 0, out


def test_a_journal_write_that_keeps_failing_names_its_cause_and_loses_no_event(tmp_path):
    out = run(tmp_path, 2)
    assert out["kind"] == "error" and out["body"]["reason"] == "not_journalled", out
    assert out["body"]["detail"].startswith("done, not journalled yet; ask status"), out
    assert out["round"], out  # done: status shows the round the command opened
    assert "MemoryError" in out["body"]["detail"] and "988" in out["body"]["detail"], out
    assert any("MemoryError" in e["error"] for e in out["internal"]), out
    # the shoe runs on, and the round's events reached the host once the write succeeded
    assert out["status"] == "reply" and out["faults"] == 1 and out["backlog"] == 0, out
    assert out["events"].count("round_open") == 1, out


def test_a_query_and_a_refusal_are_answered_as_they_are_while_writes_fail(tmp_path):
    """While the journal still cannot write the open round's events, `status` answers (the
    host's way to learn the state) and a second `open_round` is refused `round_open`, not
    `internal`: neither made an event of its own."""
    out = run(tmp_path, 6, "during")
    assert out["body"]["reason"] == "not_journalled", out
    status, again = out["during"]["status"], out["during"]["again"]
    assert status[0] == "reply" and status[1], out
    assert again == ["error", "round_open"], out
    # the events were written and sent once the writes came back, each once
    assert out["backlog"] == 0 and out["events"].count("round_open") == 1, out
