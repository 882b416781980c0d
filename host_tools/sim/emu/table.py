"""A table around the emulated Pico: the host on UART0 (ShoeLink), the dealer (world simulator)
feeding the fitted reader, and the session runner (host_tools/sim/session.py) playing a script.

    with EmuTable(emu, reader="rfid", keys=EMU_KEYS, on_event=print) as t:
        t.runner.play(script)        # the same runner and scripts as the unix virtual board

The dealer's cards reach the chip through the rig's control channel, timed in emulated time
(`card`): for "rfid" a tag holding the card code enters the MFRC522's field on SPI0 (an NTAG
424 DNA when the deck's tags were written: `tags`, {code: spec} from `shoectl tags provision
--sim-tags`; a code with no tag, e.g. a forged one, comes on a plain tag), for "optical" the
code line arrives on UART1; then the card breaks the exit beam (GP14). Power cuts of the runner
kill the emulator (SIGKILL) and power it up on the same flash. `substitute` puts another tag
(a copy: replay_of) in place of the card drawn at a given index.

This is the seam to replace with `shoectl session --port URL --reader URL` once that command
drives any board: `play(emu, script, reader)` is all the tests call.
"""

import threading
import time

from host_tools.errors import ShoeError
from host_tools.sim.session import TableRunner
from host_tools.sim.world import World, WorldError

NOREAD = b"NOREAD"


class EmuReaderPort:
    """The world's reader port (`line`, `reconnect`, `close`) on the emulated board."""

    # card timing in emulated ms (a brisk dealer): one card every pitch_ms; an RFID tag stays in
    # the field dwell_ms; the card breaks the exit beam beam_at_ms after reaching the reader
    PACE = {
        "rfid": {"pitch_ms": 400, "dwell_ms": 250, "beam_at_ms": 200},
        "optical": {"pitch_ms": 250, "beam_at_ms": 40},
    }

    def __init__(self, emu, reader, pace=None, tags=None, uid_bytes=4):
        if reader not in ("rfid", "optical"):
            raise ValueError("reader must be 'rfid' or 'optical'")
        self.emu = emu
        self.reader = reader
        pace = dict(pace or {})
        riffle = pace.pop("riffle_ms", None)
        self.pace = self.dealing = dict(self.PACE[reader], **pace)
        # the deck check and the stub, riffled through the reader faster than a deal (riffle_ms
        # a card; None: the dealing pace): World calls riffle(True/False) around them
        self.riffling = None if riffle is None else dict(self.dealing, **self.pitch(riffle))
        self.tags = tags or {}  # code -> an authenticated tag's spec (NTAG 424 DNA)
        self.substitute = {}  # index of a line -> fn(port, code) -> the spec presented instead
        self.sent = []
        self.uid = 0x04A10000
        # each card's tag keeps its UID (a code's first presentation gives it the next one): a
        # card read at the deck check comes back with the same UID in the deal, as a real tag
        self.uids = {}
        self.uid_bytes = uid_bytes  # 4 (a single-size UID) or 7 (NTAG21x: two cascade levels)
        self.times = []  # emulated ns at which each card was presented

    def pitch(self, ms):
        """The pace at one card every `ms`, in the same proportions as PACE."""
        if self.reader == "rfid":
            return {"pitch_ms": ms, "dwell_ms": ms * 4 // 5, "beam_at_ms": ms * 7 // 10}
        return {"pitch_ms": ms}

    def riffle(self, on):
        self.pace = self.riffling if on and self.riffling else self.dealing

    def line(self, data):
        data = bytes(data)
        self.sent.append(data)
        try:
            if data == NOREAD and self.reader == "optical":
                self.emu.control("feed", uart=1, hex=(data + b"\r\n").hex())
                return
            code = data.decode("latin-1")
            uid = self.uids.get(code)
            if uid is None:
                self.uid += 1
                uid = self.uids[code] = self.uid
            sub = self.substitute.pop(len(self.sent) - 1, None)
            spec = sub(self, code) if sub else self.tags.get(code)
            if spec is not None and self.reader == "rfid":
                r = self.emu.control("card", reader="rfid", tag=spec, **self.pace)
            else:
                r = self.emu.control(
                    "card", reader=self.reader, code=code, uid=self.uid_hex(uid), **self.pace
                )
        except (OSError, ShoeError) as e:
            # the power is off (the rig was killed): the runner waits for it to come back
            raise WorldError("cannot reach the emulated Pico's reader: %s" % e) from e
        self.times.append(r["ns"])

    def uid_hex(self, n):
        return "%08x" % n if self.uid_bytes == 4 else "%08x112233" % n

    def counter(self, code):
        """The read counter of the tag of `code` now (the rig's tags keep theirs in ntag.json)."""
        import json
        import os

        spec = self.tags[code]
        path = os.path.join(self.emu.state_dir, "ntag.json")
        with open(path) as f:
            return json.load(f).get("%s:%s" % (spec["uid"], spec["sdm"]["key"]), spec["ctr"])

    def replay_of(self, code):
        """A copy of the tag of `code` (its UID and memory) that plays back the answer of its
        last read: what a copier recording the air gets (host_tools/sim/ntag424.py copy_spec)."""
        from host_tools.sim.ntag424 import copy_spec

        return copy_spec(self.tags[code], self.counter(code))

    def reconnect(self):
        pass  # the control channel reconnects by itself after a power cut

    def close(self):
        pass


class EmuClock:
    """The host link's clock for the emulated board: the chip's emulated ms (ShoeLink clock_ms).

    Busy chip code runs slower than real time (about half on an idle core, a tenth or less on a
    loaded machine). On the wall clock the host's link timers (retransmission after 300 ms,
    heartbeats, HELLO repeats) fired many times per emulated card on a loaded machine: the chip
    spent its time on retransmitted frames and HELLOs and missed the tags in its field (a deck
    check with 30 of 52 cards unread; in CI, deck checks never reported and a power-cut round's
    status unanswered). On the chip's own time the host keeps the pace a real board would see,
    however loaded the machine. Asked of the rig at most every `every_s` of wall time; never goes
    back (a power-up starts the chip's clock again at 0); while the board is off it stands
    still."""

    def __init__(self, emu, every_s=0.05):
        self.emu = emu
        self.every_s = every_s
        self._asked = None  # wall time of the last question
        self._raw = None  # the chip's last answer (ms since its power-up)
        self._ms = 0  # this clock: the sum of the chip's forward steps
        self._lock = threading.Lock()  # the link's thread and its callers (link_up) share it

    def __call__(self):
        with self._lock:
            return self._read()

    def _read(self):
        t = time.monotonic()
        if self._asked is None or t - self._asked >= self.every_s:
            self._asked = t
            try:
                raw = int(self.emu.clock_ns()) // 1000000  # the rig's ns may be a float
            except (OSError, ShoeError, ValueError):
                return self._ms  # the power is off: the link sees its socket close
            if self._raw is not None and raw > self._raw:
                self._ms += raw - self._raw
            self._raw = raw
        return self._ms


# With the host on the chip's clock (EmuClock) a quiet link is not a dead one for longer than a
# real board's would be; these are generous all the same (a power cut closes the rig's sockets,
# which the link sees at once, so long timeouts cost nothing there).
LINK_OPTIONS = {"timeout_ms": 30000, "stall_ms": 60000}


class EmuTable:
    def __init__(
        self,
        emu,
        reader="rfid",
        keys=None,
        on_event=None,
        event_timeout=60.0,
        pace=None,
        link_options=None,
        tags=None,
        wall_clock=False,
        uid_bytes=4,
    ):
        from host_tools.sim.emu import EMU_KEYS

        self.pace = pace
        self.tags = tags
        self.uid_bytes = uid_bytes
        self.link_options = LINK_OPTIONS if link_options is None else link_options
        self.wall_clock = wall_clock  # the host's link timers on the wall clock (a benchmark's
        # comparison), not the chip's (EmuClock)
        self.emu = emu
        self.reader = reader
        self.keys = keys or EMU_KEYS
        self.on_event = on_event
        self.event_timeout = event_timeout
        self.link = None
        self.runner = None

    def __enter__(self):
        from host_tools.link import ShoeLink

        self.link = ShoeLink(
            self.emu.urls["uart0"],
            self.keys["shoe"],
            supervisor_key=self.keys["supervisor"],
            reconnect_s=0.2,
            endpoint_options=self.link_options,
            clock_ms=None if self.wall_clock else EmuClock(self.emu),
        )
        try:
            self.link.open(timeout=self.event_timeout)
            self.port = EmuReaderPort(self.emu, self.reader, self.pace, self.tags, self.uid_bytes)
            world = World(self.port, card_key=self.keys["card"])
            self.runner = TableRunner(
                self.emu,
                self.link,
                world,
                on_event=self.on_event,
                event_timeout=self.event_timeout,
            )
        except BaseException:
            self.link.close()
            raise
        return self

    def __exit__(self, *exc):
        if self.link:
            self.link.close()


def play(emu, script, reader="rfid", on_event=None, event_timeout=60.0, pace=None, tags=None):
    """Play a session script on the emulated board -> the runner (outcomes, counters)."""
    with EmuTable(
        emu, reader, on_event=on_event, event_timeout=event_timeout, pace=pace, tags=tags
    ) as t:
        t.runner.play(script)
        return t.runner
