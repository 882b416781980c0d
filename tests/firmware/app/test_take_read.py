"""A card as the reader task hands it on (App.take_read, under MicroPython, the real App): its
journal record is held back and programmed while its frame goes out, and the frame is finished
(its last byte and closing delimiter) only once the record is durable. A power cut at the
program leaves the host a frame it never reads, even though the next boot's first bytes start
with a delimiter; a flash that takes nothing leaves the shoe silent (the watchdog's reset), never
a card on the host that the shoe's journal does not hold."""

from tests.firmware.app.appscript import APP_PRELUDE, APP_ROOM, HOST_LINE
from tests.mpy import json_lines, run_mpy

SCRIPT = (
    APP_PRELUDE
    + HOST_LINE
    + r"""
from host import make_endpoint

root, mode = sys.argv[1], sys.argv[2]
provision(root, "H-0003")
host = make_endpoint("host", KEYS["shoe"])
T = [1000]
LOG = []


def boot():
    line = Line(LOG)
    app = App(Hardware(host=line, reader=None, state_dir=root, board_name="inproc"),
              ticks_ms=lambda: T[0])
    app.boot()
    return app, line


app, line = boot()
got = []


def settle(n=40):
    for _ in range(n):
        T[0] += 20
        app.pump(T[0])
        wire()


def command(k, body, role="table"):
    r = app.on_command(k, body, role)
    if not r.get("ok", True):
        raise RuntimeError((k, r))


command("configure", {"game": "four-card-frenzy", "procedure": "manual-shoe",
                      "paytable": "fcf-public-1"}, "supervisor")
command("load_deck", {"serial": "3A7F", "back": "R"})
for c in deck() + [52]:   # the deck check
    app.on_read("card", card_code(c))
command("open_round", {"seats": {"1": {"wagers": {"ante": 10, "odds": 10}}}})
settle()
out = {"up": host.up and app.link.up, "eseq": app.journal.eseq}
del got[:]
del LOG[:]
real_commit = app.journal.commit


def commit():
    if not app.journal.held():
        return real_commit()
    LOG.append(["commit", True])
    if mode == "cut":
        raise SystemExit   # the power goes at the program (not an Exception: nothing runs on)
    if mode == "dead":
        app.journal._held = None
        raise OSError(5, "the flash takes nothing")
    return real_commit()


app.journal.commit = commit
_pair = app.per.on_read


def pair(now=None):   # the beam pairing's note of a read
    LOG.append(["pair"])
    return _pair(now)


app.per.on_read = pair
T[0] += 20
if mode == "fault":   # the table fails on the card (a bug): the read still passed the reader
    def broken(*a):
        raise RuntimeError("a bug")
    app.table.card = broken
try:
    app.take_read("card", card_code(deck()[0]))
except SystemExit:
    pass
except RuntimeError as e:
    LOG.append(["raised", str(e)])
out["log"] = [e if e[0] != "write" else [e[0], len(e[1]), e[1][1:].find(b"\x00")]
              for e in LOG]
out["mute"] = app.mute
if mode == "cut":   # the next boot on the same flash; the host hears what the cut one sent,
    cut = b"".join(line.writes)   # then the new boot's first bytes (its HELLO)
    app.journal.commit = real_commit
    app, line = boot()
    from shoe.link import codec
    out["after_boot"] = [codec.decode(p)[0] for e, p in app.journal.outbox() if e > out["eseq"]]
    for _ in range(3):
        T[0] += 20
        app.pump(T[0])
    got.extend(host.receive(cut + b"".join(line.writes), T[0]))
else:
    wire()
    if mode == "dead":
        del LOG[:]
        seen = []
        app.per.checkin = seen.append   # what the watchdog is told
        for _ in range(50):   # a second of the ticker's work (retransmission timers included):
            T[0] += 20        # nothing more reaches the host, and no check-in
            app.tick()
            app.pump(T[0])
        out["later_writes"] = len(LOG)
        out["checkins"] = seen
out["cards"] = len([e for e in got if e[0] == "card"])
out["host_errors"] = host.errors()
print(json.dumps(out))
"""
)


def run(tmp_path, mode):
    script = tmp_path / "take_read.py"
    script.write_text(SCRIPT)
    args = (str(tmp_path), mode)
    out = json_lines(run_mpy(str(script), heap=APP_ROOM, args=args, timeout=120))[-1]
    assert out["up"], out
    return out


def test_the_cards_frame_starts_before_its_record_is_programmed_and_ends_after(tmp_path):
    """...and what else the read does (the beam pairing's note of it) comes after the frame."""
    out = run(tmp_path, "order")
    log = out["log"]
    at = [e[0] for e in log].index("commit")
    assert log[at] == ["commit", True], out  # a record was held for the program
    before, after = log[:at], log[at + 1 :]
    # the frame is on the wire before the program, none of it closed (no 0x00 after the
    # transmit's leading one)
    assert before and all(e[0] == "write" and e[2] == -1 for e in before), out
    # then its last byte and the delimiter
    assert after and after[0][0] == "write" and after[0][1] == 2 and after[0][2] == 0, out
    # the rest of the read's work after the frame: the beam pairing notes the read, once
    assert after[1:] == [["pair"]], out
    assert out["cards"] == 1, out  # the host has the card, once
    assert not out["mute"], out


def test_a_power_cut_at_the_program_leaves_the_host_a_frame_it_never_reads(tmp_path):
    out = run(tmp_path, "cut")
    assert out["log"][-1] == ["commit", True], out
    assert any(e[0] == "write" for e in out["log"]), out  # part of the frame went out
    # the next boot's journal has no card (it was never durable) and neither has the host,
    # though that boot's first byte, a delimiter, followed the cut frame: a bad frame to it
    assert "card" not in out["after_boot"] and out["after_boot"], out  # (its boot's events)
    assert (
        out["cards"] == 0
        and out["host_errors"].get("frame_cobs", 0) + out["host_errors"].get("frame_crc", 0) >= 1
    ), out


def test_a_flash_that_takes_nothing_leaves_the_shoe_silent_not_the_card_sent(tmp_path):
    out = run(tmp_path, "dead")
    assert out["mute"] and out["cards"] == 0, out
    # the frame stopped short of its last byte; nothing after it, the ticker's work included
    writes = [e for e in out["log"] if e[0] == "write"]
    assert writes and all(e[2] == -1 for e in writes), out
    assert out["later_writes"] == 0 and out["checkins"] == [], out


def test_a_read_the_app_fails_on_is_still_noted_for_the_beam_pairing(tmp_path):
    """(A fault in the table's code: the read task restarts; the card did pass the reader, so
    the beam pairing must not report an exit without a read.)"""
    out = run(tmp_path, "fault")
    assert out["log"] == [["pair"], ["raised", "a bug"]], out
