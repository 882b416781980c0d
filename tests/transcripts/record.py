"""Record the link transcripts of tests/transcripts/*.jsonl from sessions of the virtual board.

    .venv/bin/python -m tests.transcripts.record            # all of them (about a minute)
    .venv/bin/python -m tests.transcripts.record fcf        # one

Each session: a fresh virtual board (demo keys, a fixed shoe id), a ShoeLink whose Endpoint is
wrapped by host_tools.transcript.RecordingEndpoint and draws its nonces from a seed, the world
simulator and the session runner (host_tools/session.py): configure, load and check a deck,
rounds with cards from the world (seeded decks), decisions, an irregularity and its ack, then a
status and a recall. Two link faults are scripted on the shoe -> host bytes before the host end
sees them: the first DATA frame after the first `deal_complete` is dropped (the host holds what
follows and asks with an ACK bitmap), the first after the next `deal_complete` or `irregularity`
is corrupted (a byte of its CRC).

The board writes its own side too (board/sim/linkrec.py, SHOE_LINK_RECORD): every call the app
makes into its Endpoint, as `NAME-shoe.jsonl`, replayed into the firmware's shoe end.

Re-record after an intended protocol change (frame layout, HELLO fields, a message or reply
changed on purpose): the replay test (test_replay.py) then fails on the old transcripts.
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import serial

from host_tools.link import ShoeLink
from host_tools.sim.provision_sim import DEMO_KEYS, ensure_demo_keys
from host_tools.sim.session import TableRunner
from host_tools.sim.simboard import SimBoard
from host_tools.sim.world import ReaderPort, World
from host_tools.transcript import (
    FORMAT,
    RecordingEndpoint,
    SeededNonces,
    join_chunks,
    key_id,
    write,
)
from shoe import VERSION
from shoe.link import cobs
from shoe.link.frame import DATA
from shoe.link.handshake import PROTOCOL

HERE = Path(__file__).resolve().parent
SHOE_ID = "7E57"
OPTIONS = {"rto_ms": 100}  # as the virtual table runs the link

# An inline pay table (interfaces.md section 3), not a preset: fractional odds travel as floats.
FCF_TABLE = {
    "name": "fcf-transcript",
    "game": "four-card-frenzy",
    "example": False,
    "odds": {
        "four_of_a_kind": {"win": 30, "bad_beat": 100},
        "straight_flush": {"win": 15, "bad_beat": 50},
        "three_of_a_kind": {"win": 2, "bad_beat": 4},
        "flush": {"win": 1.5, "bad_beat": 3},
        "straight": {"win": 1, "bad_beat": 2},
    },
    "prime": {"five_one_colour": 5, "four_one_colour": 1},
    "four_card_bonus": {
        "four_of_a_kind": 100,
        "royal_flush": 50,
        "straight_flush": 30,
        "three_of_a_kind": 8,
        "flush": 4,
        "straight": 3,
        "two_pair": 2,
    },
    "all_six": {
        "six_card_royal_flush": 1000,
        "royal_flush": 200,
        "straight_flush": 50,
        "four_of_a_kind": 20,
        "full_house": 10,
        "flush": 5,
        "straight": 4,
        "three_of_a_kind": 3,
    },
    "payout_limit": None,
}

SESSIONS = {
    "fcf": {
        "nonce_seed": 11,
        "sid": 0x5EED01,
        "script": {
            "game": "four-card-frenzy",
            "procedure": "manual-shoe",
            "seed": 3,
            "paytable": FCF_TABLE,
            "rounds": [
                {
                    "seats": {
                        "1": {
                            "wagers": {
                                "ante": 10,
                                "odds": 10,
                                "prime": 5,
                                "four_card_bonus": 5,
                                "all_six": 5,
                            },
                            "raise": 10,
                        }
                    }
                },
                {
                    "seats": {"2": {"wagers": {"ante": 5, "odds": 5}, "raise": 0}},
                    "faults": [{"kind": "foreign", "at": 4}],
                },
            ],
        },
    },
    "hcf": {
        "nonce_seed": 12,
        "sid": 0x5EED02,
        "script": {
            "game": "high-card-flush",
            "procedure": "manual-shoe",
            "seed": 4,
            "paytable": "hcf-public-2",
            "rounds": [
                {
                    "seats": {
                        "2": {
                            "wagers": {"ante": 10, "flush_bonus": 5, "straight_flush_bonus": 5},
                            "raise": 10,
                        }
                    }
                },
                {
                    "seats": {"5": {"wagers": {"ante": 10, "progressive": 1}, "raise": 0}},
                    "faults": [{"kind": "misread", "at": 2}],
                },
            ],
        },
    },
}


class FaultyPort:
    """A pyserial port whose shoe -> host bytes pass a scripted fault (`arm("drop")`,
    `arm("corrupt")`): applied to the next whole DATA frame, once."""

    def __init__(self, port):
        self.port = port
        self.todo = []
        self.buf = b""
        self.applied = []

    def arm(self, what):
        self.todo.append(what)

    def read(self, n):
        data = self.buf + self.port.read(n)
        self.buf = b""
        if not self.todo or not data:
            return data
        cut = data.rfind(b"\x00")
        if cut < 0:
            self.buf = data
            return b""
        data, self.buf = data[: cut + 1], data[cut + 1 :]
        out = []
        for part in data.split(b"\x00")[:-1]:
            if self.todo and part:
                try:
                    ftype = bytes(cobs.decode(part))[1]
                except Exception:
                    ftype = None
                if ftype == DATA:
                    what = self.todo.pop(0)
                    self.applied.append(what)
                    if what == "drop":
                        continue
                    part = part[:-3] + bytes([part[-3] ^ 0x5A or 1]) + part[-2:]  # CRC byte
            out.append(part)
        return b"\x00".join(out) + b"\x00"

    @property
    def in_waiting(self):
        return self.port.in_waiting

    def write(self, b):
        return self.port.write(b)

    def flush(self):
        self.port.flush()

    def close(self):
        self.port.close()


def record(name, out_dir=HERE):
    spec = SESSIONS[name]
    nonces = SeededNonces(spec["nonce_seed"])
    ports = []

    def open_port(url):
        p = FaultyPort(serial.serial_for_url(url, baudrate=115200, timeout=0.02))
        if ports:  # a reopened port keeps the faults not applied yet
            p.todo = ports[-1].todo
        ports.append(p)
        return p

    seen = []

    def on_event(kind, body):
        if kind in ("deal_complete", "irregularity") and len(seen) < 2 and ports:
            seen.append(kind)
            ports[-1].arm("drop" if len(seen) == 1 else "corrupt")

    with tempfile.TemporaryDirectory() as tmp:
        state = str(Path(tmp) / "state")
        ensure_demo_keys(state, shoe_id=SHOE_ID)
        shoe_log = Path(tmp) / "shoe-link.jsonl"
        os.environ["SHOE_LINK_RECORD"] = str(shoe_log)  # board/sim/linkrec.py
        try:
            board = SimBoard(state).start()
        finally:
            del os.environ["SHOE_LINK_RECORD"]
        try:
            link = ShoeLink(
                board.host_url,
                DEMO_KEYS["shoe"],
                supervisor_key=DEMO_KEYS["supervisor"],
                reconnect_s=0.05,
                open_port=open_port,
                endpoint_options=dict(OPTIONS, sid=spec["sid"], nonce_source=nonces),
            )
            link.ep = RecordingEndpoint(link.ep)
            port = None
            try:
                link.open(timeout=15)
                port = ReaderPort(*board.reader_addr)
                world = World(port, card_key=DEMO_KEYS["card"])
                runner = TableRunner(board, link, world, on_event=on_event)
                outcomes = runner.play(spec["script"])
                st = link.command("status", {})
                rounds = link.command("recall", {}).get("rounds") or []
                if rounds:
                    link.command("recall", {"round": rounds[-1]})
                # let the last events be acknowledged (auto_ack after ack_delay_ms)
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    with link._lock:
                        done = link.ep.delivered and link.ep._acked >= link.ep.delivered
                    if done and not link.ep.backlog():
                        break
                    time.sleep(0.02)
                time.sleep(0.3)
            finally:
                if port:
                    port.close()
                link.close()
            lines = list(link.ep.lines) + [link.ep.end_line()]
        finally:
            board.stop()
        shoe_rows = [json.loads(s) for s in shoe_log.read_text().splitlines() if s.strip()]
    applied = [a for p in ports for a in p.applied]
    header = {
        "op": "header",
        "format": FORMAT,
        "name": name,
        "firmware": VERSION,
        "protocol": PROTOCOL,
        "shoe_id": SHOE_ID,
        "key_id": key_id(DEMO_KEYS["shoe"]),
        "supervisor_key_id": key_id(DEMO_KEYS["supervisor"]),
        "host": {
            "sid": spec["sid"],
            "nonce_seed": spec["nonce_seed"],
            "nonces": [n.hex() for n in nonces.given],
            "options": OPTIONS,
            "on_peer": None,
        },
        "script": spec["script"],
        "faults": applied,
        "outcomes": [[o[0], o[1]] for o in outcomes],
        "phase_after": st.get("phase"),
    }
    path = Path(out_dir) / ("%s.jsonl" % name)
    write(path, header, lines)
    write(Path(out_dir) / ("%s-shoe.jsonl" % name), *_shoe_transcript(name, shoe_rows))
    return path, header, lines


def _shoe_transcript(name, rows):
    init = rows[0]
    if init.get("op") != "init":
        raise RuntimeError("the board's link log does not start with its init line")
    calls = [r for r in rows[1:] if r["op"] != "nonce"]
    for r in calls:
        if r["op"] in ("rx", "tx"):
            r["dir"] = "h2s" if r["op"] == "rx" else "s2h"
    header = {
        "op": "header",
        "format": FORMAT,
        "name": name,
        "side": "shoe",
        "firmware": VERSION,
        "protocol": PROTOCOL,
        "shoe_id": init["shoe_id"],
        "key_id": key_id(DEMO_KEYS["shoe"]),
        "supervisor_key_id": key_id(DEMO_KEYS["supervisor"]) if init["supervisor_key"] else None,
        "sid": init["sid"],
        "boot": init["boot"],
        "nonce": init["nonce"],
        "nonces": [r["hex"] for r in rows if r["op"] == "nonce"],
        "options": init["options"],
        "outbox_limit": init["room"],
    }
    order = ("n", "dir", "op", "t")
    return header, [
        dict(
            [(k, r[k]) for k in order if k in r]
            + sorted((k, v) for k, v in r.items() if k not in order)
        )
        for r in join_chunks(calls)
    ]


def main(argv):
    names = argv or sorted(SESSIONS)
    for name in names:
        path, header, lines = record(name)
        print(
            "%s: %d lines, %d bytes, faults %s, outcomes %s"
            % (
                path,
                len(lines) + 1,
                path.stat().st_size,
                header["faults"],
                json.dumps(header["outcomes"]),
            )
        )


if __name__ == "__main__":
    main(sys.argv[1:])
