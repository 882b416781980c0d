"""Each frame goes to the host UART as the link makes it (App._to_host, the link's sink), under
MicroPython: a transmit() of three frames is three writes, the first on the wire while the next
two are made (a deal's last card has two events, a settlement seven frames and more); a UART
that takes part of the first write gets the rest and the two frames after it on the next pump,
in order and whole, so the host has all three without a retransmission. While the UART still
sends (txdone False) the link's retransmission timer does not run out."""

from tests.firmware.app.appscript import APP_PRELUDE, APP_ROOM, HOST_LINE
from tests.mpy import json_lines, run_mpy

SCRIPT = (
    APP_PRELUDE
    + HOST_LINE
    + r"""
from host import make_endpoint

root = sys.argv[1]
provision(root, "H-0002")
host = make_endpoint("host", KEYS["shoe"])
T = [1000]


line = Line()
app = App(Hardware(host=line, reader=None, state_dir=root, board_name="inproc"))
app.boot()
got = []


for _ in range(40):   # the handshake
    T[0] += 20
    app.pump(T[0])
    wire()
    if host.up and app.link.up:
        break
out = {"up": host.up and app.link.up}
T[0] += 20
app.pump(T[0])
wire()
del got[:]
for i in range(3):
    app.link.send("note", {"i": i}, durable=False)
T[0] += 1
app.pump(T[0])
out["writes"] = len(line.writes)   # one a frame
wire()
out["notes"] = [b["i"] for k, b, _, _ in got if k == "note"]
del got[:]
for i in range(3, 6):
    app.link.send("note", {"i": i}, durable=False)
line.limits = [40]   # the first write takes 40 bytes (the next frames wait behind the rest)
T[0] += 1
app.pump(T[0])
out["narrow_writes"] = [len(w) for w in line.writes]
T[0] += 1
app.pump(T[0])   # the rest, before the link is asked for more
wire()
out["narrow_notes"] = [b["i"] for k, b, _, _ in got if k == "note"]
out["shoe_errors"] = app.link.errors()
# a frame sent, never delivered, while the UART still sends what went before it (txdone False):
# no timeout yet; once the wire is free the timeout runs out and it goes again
busy = [True]
app._txdone = lambda: not busy[0]
app.link.send("note", {"i": 6}, durable=False)
T[0] += 1
app.pump(T[0])
del line.writes[:]
n0 = app.link.errors().get("retransmit", 0)
T[0] += 105   # past the link's 100 ms timeout
app.pump(T[0])
out["resent_busy"] = app.link.errors().get("retransmit", 0) - n0
busy[0] = False
T[0] += 101
app.pump(T[0])
out["resent_free"] = app.link.errors().get("retransmit", 0) - n0
print(json.dumps(out))
"""
)


def test_each_frame_goes_out_as_it_is_made_and_a_part_taken_keeps_the_rest_in_order(tmp_path):
    script = tmp_path / "to_host.py"
    script.write_text(SCRIPT)
    out = json_lines(run_mpy(str(script), heap=APP_ROOM, args=(str(tmp_path),), timeout=120))[-1]
    assert out["up"], out
    assert out["writes"] == 3 and out["notes"] == [0, 1, 2], out
    # 40 bytes of the first frame taken; the rest and the two frames after it written whole on
    # the next pump, before any retransmission: the host has the three notes from one pass
    assert out["narrow_writes"] == [40], out
    assert out["narrow_notes"] == [3, 4, 5], out
    assert not any("retransmit" in k for k in out["shoe_errors"]), out
    # the retransmission timer counts from the wire's last busy moment (App.pump tells the
    # link: Endpoint.wire_busy), not from when a frame was queued behind others
    assert out["resent_busy"] == 0 and out["resent_free"] == 1, out
