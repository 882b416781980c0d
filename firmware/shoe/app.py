"""The shoe application: asyncio tasks wiring reader -> table -> journal -> link -> host
(docs/architecture.md). A board's main.py builds the hardware and calls `run(Hardware(...))`;
nothing here creates hardware. main() starts every task of tasks() (start()): one that an
exception ends is a fault (reported) and starts again, never ending the others.

    reader   awaits the code reader (a stream); each read goes to the table (card, reject)
    host     awaits the host UART (a stream), feeds the link, answers commands (shoe.commands)
    link     every tick: the link's timers (retransmissions, handshake, heartbeats); frames of
             new events leave from the task that made them (pump())
    ticker   table timers (reader jam, deck age), journal idle work, heartbeat log line
    + the board's peripherals (shoe.drivers.peripherals): beam pairing, lid, LED, and the
      watchdog, fed only while `link` (as "host") and `ticker` check in

Every table event is journalled (with the table's state change, a delta) before the link may
transmit it: a power cut loses nothing; after a reset the journal restores the table and
re-sends every event the host has not acknowledged. (A card the reader task hands on is
programmed while its frame goes out, and the frame is finished only once it is durable:
take_read, _to_host; docs/journal.md "Power-loss safety".)
"""
import asyncio
import gc
import time
from os import urandom as _urandom

from micropython import const

from shoe import VERSION, forget
from shoe.cardcode import CardCodes, CodeError
from shoe.gcpacer import GcPacer
from shoe.commands import roots, run as _run_command
from shoe.hardware import Hardware  # noqa: F401 (what a board hands to run(): shoe.hardware)
from shoe.errors import ShoeError
from shoe.wire import for_wire

_TICK_MS = 20
_QUIET_TICK_MS = const(100)  # the tick of a quiet shoe (App.next_tick): 5 ticks' worth
_QUIET_MS = const(1000)   # no card for this long, nothing in flight on the link: quiet
_TABLE_TICKS = const(10)  # the table's own timers (jam, deck age: seconds) every 10 ticks
_RTO_MS = 100             # retransmission timer: a 120-byte fragment is ~10 ms at 115200 baud
_BACKLOG_MAX = 64         # events held in RAM while the outbox is full
_OUTBOX_BYTES = 8192      # a whole six-seat round fits while the host is away
_OUTBOX_MAX = 96          # ... as messages
_JOURNAL_BYTES = 65536    # compaction (a full snapshot) every ~6 rounds: fewer partly used sectors
_WATCHED = {"host": 2000, "ticker": 2000}   # task -> longest silence (ms) before no feed
_HEARTBEAT_S = 30
_IDLE_MS = 150            # no card for this long and none expected: the journal may erase
#                           ahead; while cards are expected it erases right after a card
#                           instead (tick(): a 45 ms erase that began 150 ms after a card met
#                           the next riffle's first tag, which stays ~96 ms in an RFID field)
_GC_IDLE_MS = 60          # no card for this long: collect now if enough was allocated (a
#                           collection between cards, ~25 ms on a Pico, not inside one)


def _log(*args):
    print("[shoe]", *args)


def _nothing():
    pass


def _what(exc):
    """repr(exc) and the cause a LinkError carries (the store's MemoryError): what the
    internal_error event and an "internal" reply say."""
    d = getattr(exc, "detail", None)
    return repr(exc) if d is None else "%r: %r" % (exc, d)


class App:
    def __init__(self, hw, clock=time.time, ticks_ms=time.ticks_ms):
        # the outbox's 8 KB in one piece first, while the heap is whole: the journal, link and
        # table bytecode loaded below scatters it (an RFID Pico had no 8 KB hole left at boot)
        from shoe.journal.outbox import Outbox

        gc.collect()
        outbox = Outbox(_OUTBOX_BYTES, _OUTBOX_MAX)
        from shoe.journal.journal import Journal
        from shoe.link.endpoint import Endpoint
        from shoe.table import Table

        self.gcpacer = GcPacer(getattr(hw, "gc_min", None))   # while the app builds itself
        from shoe.drivers.peripherals import Peripherals

        self.hw = hw
        self.clock = clock
        self.per = Peripherals(hw, self._peripheral_event, watch=_WATCHED)
        self._led = None
        self._healthy = False
        self.ticks_ms = ticks_ms
        from shoe import startup

        self.cfg, self.provisioned = startup.load_config(hw.state_dir, _log)
        keys = self.cfg["keys"] or {}
        self.codes = CardCodes(keys["card"]) if keys else None
        self.journal = Journal(hw.state_dir, max_bytes=_JOURNAL_BYTES, outbox=outbox,
                               store=startup.journal_store(hw),
                               keep=startup.JOURNAL_KEEP)
        snap = self.journal.state
        # clause: irr:power-loss
        self.table = Table.from_state(snap["table"]) if snap else Table()
        if self.journal.recovery is not None:
            startup.journal_damaged(self, self.journal.recovery, _log)
        forget("shoe.startup")   # boot work
        self.backlog = []       # events not yet journalled because the outbox was full
        # Unprovisioned: a random key nobody knows, so no command is ever accepted.
        self.link = Endpoint("shoe", keys.get("shoe") or _urandom(32), store=self.journal,
                             shoe_id=self.cfg["shoe_id"], supervisor_key=keys.get("supervisor"),
                             rto_ms=_RTO_MS)
        if hw.host is not None:   # each frame to the UART as it is made (without one, the
            self.link.sink = self._to_host   # caller takes transmit()'s bytes: tests' drivers)
        self._rx = bytearray(256)
        self._rx_mv = memoryview(self._rx)
        self._rx_one = self._rx_mv[:1]      # host_task: the byte it waits for
        self._rx_rest = self._rx_mv[1:]     # and what else has arrived with it
        self._tx_left = None  # the part of the last frames the host UART has not taken yet
        self.mute = False     # the journal took nothing: nothing more to the host (_commit)
        self._card_first = False   # take_read: the card's frame before the rest of its work
        # machine.UART.txdone(): its buffer and shift register are empty (a socket or a test's
        # stream without it sends at once)
        self._txdone = getattr(hw.host, "txdone", None)
        self.reads = 0
        self.faults = 0
        self.dropped = 0
        self._last_card = None
        self._read_ms = ticks_ms()
        self._quiet_for = None    # the read whose pause the ticker has used (GcPacer.collect_in_pause)
        self._erased_for = None   # the read after which the journal last erased ahead
        self._due = False         # cards are expected: a round, its stub or a deck check
        self._slept = _TICK_MS    # the ticker's last sleep (next_tick())
        self._polls_failing = False   # the peripherals' polls failed last tick (reported)
        self._double_seen = getattr(hw.reader, "double_reads", 0)
        self.firmware_sha = None
        self._beat = 0            # when the ticker last logged its heartbeat (clock(), s)
        self._running = {}        # task -> its name in tasks() (start())
        self._prefetch = None     # _warm(): the first round's imports, done while idle
        # a polling reader's one poll between the long steps of a command, a journal write
        # and a snapshot (shoe.drivers.rfid.RFIDReader.poll_between): a card riffled past it
        # stays ~100 ms, and those steps are 80-250 ms on the RP2040
        self._between = getattr(hw.reader, "poll_between", None) or _nothing
        self.reader_policy()

    def reader_policy(self):
        """The reader drops a repeated code only where a repeat cannot hide a cloned card: with
        a card-exit beam, or when the configuration says this reader double-reads. Otherwise
        a second read of a card reaches the table (a duplicate: the round is void)."""
        r = self.hw.reader
        if hasattr(r, "dedup"):
            cfg = self.table.cfg or {}
            r.dedup = self.hw.beam is not None or bool(cfg.get("double_reads"))

    # ---- events -------------------------------------------------------------------------
    def _flush_table(self, again=True):
        """Journal the table's new events together with the state they lead to (one atomic
        record holding the delta: a power cut leaves either both or neither), then they can be
        transmitted. After a round result or void the journal may compact (a full snapshot).

        If the outbox is full (the host has been away for long), the events wait in RAM and
        are retried on every tick; `status` reports the backlog. A write that ran out of memory
        is tried once more at once after a collection (the failed record's own pieces are
        garbage by then; a fragmented heap on the Pico's .mpy deploy, docs/hardware.md), so
        the command that made the events is answered for them; if it fails again they wait as
        for a full outbox and the error goes up (an `internal` reply naming the cause).
        """
        if self.table.out:   # (pop_events() makes a new list: not on every idle tick)
            self.backlog.extend(self.table.pop_events())
        if len(self.backlog) > _BACKLOG_MAX:     # the host has been away for very long:
            self.backlog = self.backlog[-_BACKLOG_MAX:]   # keep RAM bounded (status says so)
            self.dropped += 1
        if not self.backlog:
            return
        from shoe.link.message import LinkError

        wire = [for_wire(k, b) for k, b in self.backlog]
        t = self.table
        ops = t.take_delta()   # a dealt card: the table's own delta, no snapshot to diff
        short = False
        try:
            if ops is None:
                self.link.send_many(wire, state={"table": t.state()})
            else:
                self.link.send_many(wire, ops=ops)
        except Exception as e:
            t.delta_failed()   # not journalled: the next write carries the whole change
            short = again and isinstance(e, LinkError) and isinstance(e.detail, MemoryError)
            if not short:
                if isinstance(e, LinkError) and e.reason == "outbox_full":
                    return
                raise
        if short:   # outside the handler: nothing holds the failed attempt's pieces now
            wire = ops = None
            gc.collect()
            return self._flush_table(False)
        if not self._card_first:   # (take_read: the write is held, the frame goes first)
            self._between()   # the journal's write is behind, the round's record may be next
        settled = boundary = False
        for kind, body in wire:
            if kind == "round_result" or kind == "round_void":
                self.journal.add_round(body.get("round", 0), kind, body)   # as sent: packed
                settled = settled or kind == "round_result"
                boundary = True
        self.backlog = []
        if boundary:   # full snapshots at round boundaries; the cards in between are deltas
            self.journal.checkpoint()
            self._between()
        if not self._card_first:   # (take_read: after the card's frame)
            self._show_phase()
        if settled and not self._healthy:
            self._healthy = True
            from shoe.hardware import clear_crashes

            clear_crashes(self.hw.state_dir)   # a settled round: not a crash loop

    def _report_double_reads(self):
        """The reader dropped a repeated code (one card reported twice): tell the host, for
        the read-quality diagnostics (shoectl diagnose). It belongs to the last card read,
        named by its round and position if that round's cards were still secret when it was
        read (the host learns the card from the round's reveal), else by the card."""
        n = getattr(self.hw.reader, "double_reads", None)
        if n is None or n == self._double_seen:
            return
        body = {"count": n - self._double_seen}
        self._double_seen = n
        last = self._last_card
        if last is not None:
            body["deck"] = "%04X" % last[0]
            if last[2] is not None:
                body["round"], body["position"] = last[2]
            else:
                from shoe.cards import name

                body["card"] = name(last[1])
        self._emit("double_read", body)

    def _show_phase(self):
        t = self.table
        # a reader that polls (RFID) polls fast while cards are expected: a round, its stub or a
        # deck check (rfid.RFIDReader.dealing; the optical reader has no such setting)
        self._due = t.rnd is not None or t.ledger.p_kind is not None
        r = self.hw.reader
        if r is not None:
            r.dealing = self._due
            # a plain RFID tag read whole before is reported by its UID while a round is dealt
            # (shoe/drivers/rfid.py; the optical reader has no such setting either)
            r.by_uid = t.rnd is not None and t.rnd.stage == "dealing"
        pattern = "error" if t.latched else ("dealing" if t.rnd is not None else "ready")
        if pattern != self._led:
            self._led = pattern
            self.per.show(pattern)

    def _peripheral_event(self, kind, body):
        """Beam/read pairing, lid (tamper) and watchdog events: reported durably."""
        try:
            self._emit(kind, body)
        except Exception as e:
            self.fault("peripheral " + kind, e)

    def _emit(self, kind, body):
        """An app event (hello, ...): through the same backlog as the table's events, so a full
        outbox (a host away for many boots) delays it instead of failing the boot."""
        self.backlog.append((kind, body))
        self._flush_table()

    # ---- cards ---------------------------------------------------------------------------
    def on_read(self, kind, data):
        now = self.clock()
        ctr = -1   # a plain read; an authenticated tag's read counter (shoe.sun)
        if kind == "tag":
            kind, data, ctr = self._tag(data)
            if kind is None:
                return   # the tag just read, read again with a fresh count: the same card
        self.reads += 1
        self._read_ms = self.ticks_ms()
        if not self._card_first:   # (take_read: after the card's frame)
            self.per.on_read()
        if kind == "card":
            if self.codes is None:
                self.table.reject("not_provisioned", now)
            else:
                try:
                    serial, back, card = self.codes.parse(data)
                except CodeError as e:
                    self.table.reject(e.reason, now)
                else:
                    why = self.table.tag_read(serial, back, card, ctr)
                    if why is not None:   # a copy of an authenticated tag
                        self.table.reject(why, now)
                    else:
                        self.table.card(serial, back, card, now)
                        self._last_card = (serial, card, self.table.hidden_position())
        elif kind == "noread":
            self.table.reject("no_read", now)
        elif kind == "forged":
            self.table.reject(data, now)
        else:
            self.table.reject("code_format", now)
        self._flush_table()

    def _tag(self, raw):
        """An authenticated RFID tag's read (NTAG 424 DNA; shoe.sun loads at load_deck: _prepare_tags)
        -> ("card", code, read counter) when its SUN message is its own, ("forged", reason,
        -1) when not; (None, ..): the reader had just read it and its count rose (one card)."""
        if self.codes is None:
            return "card", b"", -1
        from shoe.sun import REPEAT, check

        kind, data, ctr = check(self.cfg["keys"]["card"], raw)
        if kind != "card" or not raw[0] & REPEAT:
            return kind, data, ctr
        try:
            serial, back, card = self.codes.parse(data)
        except CodeError:
            return kind, data, ctr
        why = self.table.tag_read(serial, back, card, ctr, True)
        if why == "repeat":   # (its counter goes to the journal with the next record)
            return None, None, -1
        return "forged", why, -1

    # ---- commands ------------------------------------------------------------------------
    def on_command(self, kind, body, role="table"):
        """An authenticated command of `role` (the key the link verified: "table" or
        "supervisor"): shoe.commands.run, which lets shoe.roles decide what the role may do."""
        now = self.clock()
        try:
            reply = _run_command(self, kind, body, now, role)
        except ValueError as e:   # CommandError, EngineError, ConfigError: ShoeErrors
            reply = {"ok": False, "reason": e.reason if isinstance(e, ShoeError) else "bad_command",
                     "message": str(e)}
        if (kind == "load_deck" or kind == "open_round") and reply.get("ok"):
            self._prepare_tags()   # before the reply: the host sends the cards after it
        elif kind[:9] == "configure" and reply.get("ok") and self.table.cfg:
            self._prefetch = self._warm(self.table.cfg.get("game"))   # a first round this boot
        self._between()   # the command's work is done, its journal write is next
        made = bool(self.table.out)   # this command's events (earlier ones wait in backlog)
        try:
            self._flush_table()
        except Exception as e:   # the events wait in the backlog, written at a later tick
            self.fault("journal " + kind, e)
            if not made or not reply.get("ok", True):
                return reply   # a refusal or a query: its answer is true as it stands
            # done in RAM, not durable yet (a power cut before the write undoes it): the host
            # must not send it again but ask `status` (docs/protocol.md section 4)
            return {"ok": False, "reason": "not_journalled",
                    "message": ("done, not journalled yet; ask status: " + _what(e))[:120]}
        return reply

    def _prepare_tags(self):
        """Cards are coming: an RFID reader loads what an authenticated tag's read needs and
        the tag master key is derived now, not with the first tag in the field (shoe.drivers.
        rfid.RFIDReader.prepare). Once per boot; nothing on an optical shoe."""
        prepare = getattr(self.hw.reader, "prepare", None)
        if prepare is None or self.codes is None:
            return
        try:
            prepare()
            from shoe.sun import master

            master(self.cfg["keys"]["card"])
        except Exception as e:   # MemoryError: the first tag loads them as before
            self.fault("prepare_tags", e)

    # ---- tasks ---------------------------------------------------------------------------
    def fault(self, where, exc):
        """An unexpected exception in a task: log it, report it, keep running."""
        self.faults += 1
        what = _what(exc)
        _log("internal error in %s: %s" % (where, what))
        try:
            self.link.send("internal_error", {"where": where, "error": what[:120]},
                           durable=False)
        except Exception:
            pass

    def tasks(self):
        """Every task main() runs, as (name, loop): the app's own and the board's peripherals'
        (shoe.drivers.peripherals). `loop()` makes a fresh coroutine (a failed task restarts)."""
        out = [("reader", self.reader_task), ("host", self.host_task),
               ("ticker", self.ticker_task)]
        out.extend(self.per.loops(ticked=True))
        return out

    def start(self, names=None):
        """Create the tasks (those named; default: all of tasks()). One that an exception ends
        (a bug, a UART error) is a fault (logged, reported to the host) and starts again a tick
        later, so one failure never ends the others. The event loop's exception handler does
        it: no coroutine wraps a task (a wrapper per task would cost the Pico ~800 B)."""
        asyncio.get_event_loop().set_exception_handler(self._task_failed)
        for name, loop in self.tasks():
            if names is None or name in names:
                self._running[asyncio.create_task(loop())] = name

    def _task_failed(self, loop, context):
        name = self._running.pop(context.get("future"), None)
        if name is None:   # not one of ours
            loop.default_exception_handler(loop, context)
            return
        self.fault(name, context["exception"])
        asyncio.create_task(self._restart(name))

    async def _restart(self, name):
        await asyncio.sleep_ms(_TICK_MS)
        self.start((name,))

    async def reader_task(self):
        while True:   # not watched: a shoe can wait minutes between cards
            kind, data = await self.hw.reader.read()
            self.take_read(kind, data)
            # a reader with reads queued returns at once: let the host task (and the watchdog
            # it feeds) run between cards, however long the burst (issue 10: 53 cards)
            await asyncio.sleep_ms(0)

    def take_read(self, kind, data):
        """A read from the reader, as the reader task hands it on: the card (on_read), then its
        event frame to the host at once (pump), not at the next tick. The card's journal record
        is held back (Journal.defer) and programmed while its frame goes out (_to_host): the
        frame starts on the wire ~1-1.5 ms sooner on the RP2040, and is finished (its last
        byte and the 0x00 closing it, which the host waits for before it reads a frame) only
        once the record is durable; a power cut in between leaves a frame short of its last
        byte, which the host never reads (CRC and MAC fail).
        Whatever else a read does waits until then: the beam pairing's note of the read (its
        window is 400 ms), the reader's and LED's phase, and a polling reader's poll between the
        card's steps (its record is not written there: _flush_table)."""
        j = self.journal
        reads = self.reads
        done = False
        j.defer = self._card_first = True
        try:
            self.on_read(kind, data)
            done = True
        finally:
            j.defer = self._card_first = False
            if not done and self.reads != reads:   # a read the app failed on (a fault):
                self.per.on_read()                  # still a card that passed the reader
        self.pump()
        if self.reads != reads:   # (not a repeated authenticated tag's read)
            self.per.on_read()
        self._show_phase()

    def on_host_bytes(self, data, now_ms):
        """Bytes from the host UART: authenticated commands are dispatched and answered."""
        for kind, body, ctr, role in self.link.receive(data, now_ms):
            try:
                reply = self.on_command(kind, body, role)
            except Exception as e:
                self.fault("command " + kind, e)
                reply = {"ok": False, "reason": "internal", "message": _what(e)[:120]}
            try:
                if reply.get("ok", True):
                    self.link.reply(ctr, reply)
                else:
                    self.link.error(ctr, reply["reason"], reply.get("message"))
            except Exception as e:  # e.g. no RAM for the reply: the next commands still run
                self.fault("reply " + kind, e)

    def pump(self, now=None):
        """Write what the link has to send now (frames, retransmissions, acks, heartbeats):
        each frame as the link makes it (_to_host, the link's sink). A UART takes what fits in
        its transmit buffer and returns that count (None: nothing fitted; machine.UART with
        timeout=0 does not block): the rest is kept and written first on the next pump, and the
        link is asked for more only once it has all gone."""
        if self.mute:
            return
        try:
            p = self._tx_left
            if p is not None:
                n = self.hw.host.write(p) or 0
                if n < len(p):
                    self._tx_left = p[n:]
                    return
                self._tx_left = None
            if now is None:
                now = self.ticks_ms()
            if self._host_sending():   # the retransmission timer waits for the wire
                self.link.wire_busy(now)
            self.link.transmit(now)   # frames: _to_host
        finally:
            if self.journal.held():   # no frame went out (a link down, a full window)
                self._commit()

    def _commit(self):
        """Program the journal's held record (take_read). If the flash takes nothing (its
        program and a rewrite of the log failed: Journal.commit), what the link holds is not
        durable and must never reach the host whole: the shoe falls silent (_to_host writes
        nothing more, the ticker stops checking in, so the watchdog resets the chip, whose boot
        recovers the journal as after a power cut). -> True if the record is durable."""
        try:
            self.journal.commit()
            return True
        except Exception as e:
            self.fault("journal", e)
            self.mute = True
            return False

    def _to_host(self, b):
        """The link's sink: one frame (with the leading delimiter of a transmit's first) to
        the host UART at once, so that it is on the wire while the link makes the next (a
        card that completes the deal has two events; a settlement, seven frames and more).
        What the UART does not take now is kept, in order, for pump(); `b` is the link's
        buffer, reused for its next frame, so it is copied. While the journal holds a record
        back (take_read) the frame goes out but its last byte and closing delimiter, which
        follow once the record is programmed: the host reads a frame only once it is closed,
        and a frame cut there is one the host never reads (not its delimiter alone: the next
        boot's first frame starts with a delimiter, which would close the cut one whole)."""
        if self.mute:
            return
        if self.journal.held():
            mv = memoryview(b)
            self._put(mv[:-2])
            if not self._commit():
                return
            b = mv[-2:]
        self._put(b)

    def _put(self, b):
        if self._tx_left is None:
            n = self.hw.host.write(b) or 0
            if n >= len(b):
                return
            self._tx_left = bytes(b[n:])
        else:
            self._tx_left = bytes(self._tx_left) + bytes(b)

    async def host_task(self):
        """Reads the host UART as a stream: the task sleeps in the event loop until a byte
        arrives (the UART's poll ioctl), takes what else has arrived with it (any()), and
        answers at once. Never a read of more than has arrived: machine.UART's readinto fills
        its buffer, waiting up to timeout_char after each byte for the next (on the rp2 port at
        least 13 bit times, 1 ms at 115200 baud, spinning), so reading a 52-byte frame into
        the 256-byte buffer held the chip 1-2 ms before the frame was even looked at."""
        host = self.hw.host
        stream = asyncio.StreamReader(host)
        rest = self._rx_rest
        room = len(rest)
        while True:
            n = await stream.readinto(self._rx_one)
            if n:
                m = host.any()
                if m:
                    n += host.readinto(rest, m if m < room else room) or 0
                now = self.ticks_ms()
                self.on_host_bytes(self._rx_mv[:n], now)
                self.pump(now)

    async def ticker_task(self):
        """Every tick, one task step: the link's timers (retransmission, handshake, heartbeats;
        frames of new events go out from the task that made them, pump()), the peripherals'
        polls (lid, beam pairing) and the ticker's work (tick()). One task rather than four: on
        the Pico every step of a task costs asyncio a 72-byte heap frame, which counts towards
        the next collection (a collection marks ~150 KB of bytecode with the .mpy deploy); four
        tasks made ~170 steps a second on an idle shoe. A fault in the polls (a broken sensor)
        is reported once a run of faults as "peripherals" and stops neither the link nor the
        table's timers; any other fault restarts this task a tick later (App.start), and the
        polls run again first. The watchdog sees both its check-ins ("host", "ticker")."""
        n = 0
        while True:
            if not self.mute:   # muted: the watchdog resets the chip (_commit)
                self.per.checkin("host")
            self.pump()
            try:   # here, not in tick(): a handler in tick() makes its frame a heap block
                self.per.tick(self.ticks_ms())
                self._polls_failing = False
            except Exception as e:
                if not self._polls_failing:   # once a run of faults, restarts included
                    self.fault("peripherals", e)
                self._polls_failing = True
            n = self.tick(n)
            self._slept = self.next_tick()
            await asyncio.sleep_ms(self._slept)

    def next_tick(self):
        """ms to the ticker's next step: _TICK_MS while anything is under way, _QUIET_TICK_MS
        once the shoe is quiet (no card for _QUIET_MS, no first-round import to make, nothing
        for the link's timers or the outbox to do). Cards and host bytes are answered by their
        own tasks at once either way; a quiet shoe only notices its lid, a beam break without a
        card and its table's timers up to 80 ms later. An idle tick and its asyncio step cost
        the .mpy deploy's chip ~110,000 instructions: the optical shoe with no host was 9.6 %
        busy ticking every 20 ms, 4.1 % at 100 ms (bench/bench_pico_idle.py)."""
        if (self._prefetch is not None or self._tx_left is not None or self.table.out
                or self.backlog or not self.link.quiet()
                or time.ticks_diff(self.ticks_ms(), self._read_ms) < _QUIET_MS):
            return _TICK_MS
        return _QUIET_TICK_MS

    def tick(self, n=0):
        """The ticker's work, every _TICK_MS (after a quiet tick's sleep, _slept: that many
        ticks' worth); n: ticks left until the table's own (returned for the next call). A tick
        with nothing to do allocates nothing (tests/firmware/app: heap_lock): on a Pico running
        .mpy files every collection marks ~150 KB of bytecode."""
        if not self.mute:
            self.per.checkin("ticker")
        ms = self.ticks_ms()
        n -= self._slept // _TICK_MS
        if n <= 0:   # the table's timers count whole seconds: its tick every few ticks
            n = _TABLE_TICKS   # (the clock is a long int on a Pico: each read allocates)
            now = self.clock()
            self.table.tick(now)
            if now - self._beat >= _HEARTBEAT_S:
                self._beat = now
                gc.collect()
                _log("alive mem_free=%d reads=%d" % (gc.mem_free(), self.reads))
        if self.table.out or self.backlog:   # (not called idle: its frame is a heap block)
            self._flush_table()
        self._report_double_reads()
        quiet = time.ticks_diff(ms, self._read_ms)
        if quiet > _GC_IDLE_MS and self._quiet_for != self._read_ms:
            self._quiet_for = self._read_ms   # once a pause (a collection every tick
            self.journal.catch_up()           # would be most of the chip)
            self._between()
            self.gcpacer.collect_in_pause()
        if quiet > _IDLE_MS:
            # no card expected: the journal's flash work first (a due compaction, or an erase
            # ahead: one a tick, cards rarely wait for it), then the first round's imports. A
            # deck check may start the moment a configure is answered, and an erase left for
            # it blacks the chip out under the riffle (the reader UART's FIFO overran on the
            # emulated Pico: tests/emu/test_readme_flows.py). A pause while cards are
            # expected: nothing long. Not put off while a frame is going out (as after a card,
            # below): here the erase holds a reply at most 45 ms, and put off it met the deck
            # check that follows a configure at once (the README's session flow again)
            if not self._due and not self.journal.idle() and self._prefetch is not None:
                self.prefetch_one()
        elif self._due and self._erased_for != self._read_ms and not self._host_sending():
            # cards are expected: erase ahead at the first tick after a card, when the next
            # one is furthest away (a riffle's comes 120 ms after it; a pause before the next
            # riffle would put the erase where its first card is likely to come); a due
            # compaction waits for a pause, unless the log is nearly full. Not after a
            # card that came while the ticker slept a quiet tick: this tick may be up to 100 ms
            # after it, close to the next; the next card's tick comes at the usual pace. Not
            # while the card's frame is still going out (_host_sending): the next tick
            self._erased_for = self._read_ms
            if self._slept == _TICK_MS or quiet < 2 * _TICK_MS:
                self.journal.idle(True)
        return n

    def _host_sending(self):
        """Bytes for the host are still waiting or on the wire. The erase ahead after a card
        (tick(): the journal's idle() while cards are expected) waits for a later tick then: an
        erase holds the chip's interrupts off for ~45 ms, the UART's transmit interrupt with
        them, and the rest of a frame beyond the 32-byte FIFO waits that long on the wire (on
        the emulated Pico a card's frame that started 9 ms after the card ended ~57 ms after
        it, 15 cards of 288: docs/hardware.md section 8, "Frames an erase held")."""
        return self._tx_left is not None or (self._txdone is not None and not self._txdone())

    def _warm(self, game):
        """What the first round of `game` imports (open_round, decisions, settlement, the packed
        result), one step a call: on a Pico these lazy imports cost the first round after a boot
        ~160 ms (docs/hardware.md section 8). Set at boot for a configured table and after a
        configure command (the first round of a shoe configured since it booted); run by idle
        ticks once nothing is left to erase ahead (tick). Imports by the firmware's own calls,
        not by module names: names not yet interned would cost the boot qstrs
        (tests/emu/test_qstr_margin.py).
        tests/firmware/app/test_prefetch.py plays a first round and sees no import."""
        from shoe.dealing import setup  # noqa: F401
        yield
        eng = self.table.engine             # shoe.games.engine, paytable, pttypes
        yield
        eng.module(game)                    # fcf / hcf
        yield
        eng.module(game, True)              # fcfround / hcfround, settle
        yield
        if game == eng.FCF:
            from shoe.games import allsix  # noqa: F401
            yield
        from shoe.games import packing  # noqa: F401  (the round result's wire form)

    def prefetch_one(self):
        """One step of _warm() (set at boot for a configured table); False once it is done. A
        step that fails ends it (the round's own import then reports the error)."""
        try:
            next(self._prefetch)
            return True
        except StopIteration:
            pass
        except Exception as e:   # noqa: BLE001 (never a fault of the idle ticker)
            _log("prefetch: %r" % (e,))
        self._prefetch = None
        return False

    async def main(self):
        self.boot()
        self.start()
        while True:   # the tasks run on their own (start())
            await asyncio.sleep(3600)

    def boot(self):
        from shoe import attest

        self.gcpacer.tune(getattr(self.hw, "gc_min", None))
        if self.hw.firmware_root:
            from shoe.crypto import hexlify

            self.firmware_sha = hexlify(attest.manifest(attest.file_hashes(roots(self.hw))))
        forget("shoe.attest")   # imported again by an `attest` command
        forget("shoe.drivers.hwbuild")   # boot work (the bundle is a shoe.hardware.Hardware)
        _log("firmware %s board %s shoe %s boot %d gc_threshold %d" % (
            VERSION, self.hw.board_name, self.cfg["shoe_id"], self.journal.boot, self.gcpacer.threshold))
        self._emit("hello", {"firmware": VERSION, "board": self.hw.board_name,
                             "shoe_id": self.cfg["shoe_id"], "provisioned": self.provisioned,
                             "firmware_sha256": self.firmware_sha, "boot": self.journal.boot})
        self._flush_table()
        if self.table.cfg:   # configured: its rounds will need these
            self._prefetch = self._warm(self.table.cfg.get("game"))


def run(hw):
    try:
        asyncio.run(App(hw).main())
    finally:
        asyncio.new_event_loop()
