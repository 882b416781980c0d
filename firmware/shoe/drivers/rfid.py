"""RFID card reader: the MFRC522 behind the same `async read()` contract as the optical reader.

    reader = RFIDReader(MFRC522(spi, cs, rst))
    kind, raw = await reader.read()     # ("card", b"3A7FRAs1d52a21b"), ("noread", b"") or
                                        # ("garbled", raw16): a tag in another layout
    shoe.cardcode.CardCodes(key).parse(raw)   # as for the optical module
                                        # ("tag", raw): an NTAG 424 DNA (shoe.sun.check)

The tag layout, polling (REQA, halting, fast polls while dealing), de-duplication of a tag
that answers again (an authenticated one is read again), noreads and chip faults:
docs/hardware.md section 4.
"""
from micropython import const
import asyncio

from shoe.drivers.mfrc522 import RFIDError
from shoe.drivers._ticks import ticks_diff, ticks_ms

CODE_PAGE = const(4)
_CODE_LEN = const(15)
_KNOWN_MAX = const(128)  # plain tags remembered by UID (two decks and their cover cards)


_ERRORS = (RFIDError, OSError)  # a failed read, or an SPI bus error


def _reason(e):
    # an SPI bus error (OSError from machine.SPI) is a reader fault like a stuck chip
    return e.reason if isinstance(e, RFIDError) else "rfid_bus"


class RFIDReader:
    # defaults: a poll every 5 ms; a tag silent for 8 polls (40 ms) has left; a tag failing
    # for 20 polls (100 ms) while it stays is a noread
    def __init__(self, chip, period_ms=5, tries=3, absent_polls=8, retry_ms=1000,
                 fail_polls=20, hold_ms=300, ticks=ticks_ms, fast_period_ms=2, fast_ms=2000):
        self.chip = chip
        # While cards are expected the field is polled every fast_period_ms: the app sets
        # `dealing` (a round is being dealt), and for fast_ms after any tag answered (the next
        # card of a deck check or a deal follows within a second). Otherwise every period_ms.
        self.dealing = False
        self.fast_period_ms = fast_period_ms
        self.fast_ms = fast_ms
        self._fast = False  # a tag answered less than fast_ms ago (as of the last check)
        self._answered = 0  # ticks when a tag last answered REQA/WUPA
        self.hold_ms = hold_ms
        self._ticks = ticks
        self._heard = 0  # ticks when the remembered UID last answered
        self.period_ms = period_ms
        self.tries = tries
        self.absent_polls = absent_polls
        self.fail_polls = fail_polls
        self._failing = 0  # consecutive polls in which the tag in the field failed (unreported)
        self._fail_uid = None  # its UID when the failure got that far
        self._queued = None  # a card read right after a different, failing tag left
        self._queued_next = None  # ... behind a noread that poll_between() found first
        self.retry_ms = retry_ms
        self._buf = bytearray(16)
        self._last_uid = None
        self._absent = 0
        self._ready = False
        self._fail_reported = False  # the failure episode in the field got its noread already
        self._halt_due = False  # the tag just read still waits for its HLTA (next poll)
        self.dep = None  # ISO 14443-4 (drivers/isodep.py), made by prepare() (load_deck) or the first such tag
        self.fault = None
        self.last_reason = None
        self.counts = {"card": 0, "noread": 0, "duplicate": 0, "retry": 0, "fault": 0,
                       "by_uid": 0, "unchecked": 0}
        # plain tags read whole, by UID: their 16 bytes (a deck check reads every card). A tag
        # whose UID is here is reported from them as soon as its anticollision gives the UID,
        # before its last SELECT and its READ (~3 ms of air and ~1 ms of the chip's time on the
        # RP2040); the next poll selects it, reads its memory and compares (_check): a tag that
        # no longer holds what it held is ("forged", "tag_changed"). docs/hardware.md section 4
        self._known = {}   # UID -> its slot in _codes (a small int: no object per tag)
        self._codes = None   # bytearray(_KNOWN_MAX * 16), made by the first whole read
        self._slot = 0   # the next free slot
        self._check_uid = None  # the UID reported from _known whose memory is not read yet
        # set by the app while a round is dealt (the figure that counts, card -> frame): a deck
        # check or a stub is riffled, and the app's long steps after its last card (a pass's
        # end, a round's settlement: ~100 ms on the RP2040) outlast a riffled tag in the field,
        # which would leave before its check
        self.by_uid = False

    def prepare(self):
        """Load the ISO 14443-4 layer and the NTAG 424 DNA read now, while no tag is in the
        field (the app calls it when a deck is loaded): imported by the first authenticated tag
        instead, they cost ~150 ms of the tag's time in the field on the RP2040 (its read took
        176 ms against 23 ms for the next one), and a card dealt or riffled past the reader
        stays ~200 ms."""
        if self.dep is None:
            from shoe.drivers.isodep import IsoDep
            import shoe.drivers.ntag424  # noqa: F401  (rfid._identify imports read_tag from it)

            self.dep = IsoDep(self.chip)

    def _result(self):
        b = self._buf
        if b[_CODE_LEN] == 0:
            return "card", bytes(b[:_CODE_LEN])
        return "garbled", bytes(b)

    def poll(self):
        """One poll of the field -> ("card", code), ("noread", b""), ("garbled", raw) or None.
        The REPL's and the tests' way in; the app awaits read(), which takes the same steps
        inside its generator (here they cost a heap frame per call: see _detect)."""
        if self._queued is not None:
            return self._unqueue()
        try:
            r = self._detect()
        except _ERRORS as e:
            return self._failed(_reason(e), None)
        if r is not True:
            return r
        return self._identify()  # read at once: the tag answered and may not stay long

    def _unqueue(self):
        r = self._queued
        self._queued, self._queued_next = self._queued_next, None
        return r

    def poll_between(self):
        """One poll of the field from a long step of the app (a command, a journal write, a
        snapshot), so that a card passing the reader meanwhile is read while it is still in the
        field; its result waits for read(). A card riffled through the reader stays ~100 ms,
        and the app's longer steps (open_round, decisions, the round's settlement and its
        snapshot) each took 80-250 ms of the RP2040's time, in which the reader task could not
        poll (bench/bench_pace.py --gaps). Nothing when a result already waits (it is read
        first) or the chip is at fault (read() retries it on its own timer). Never raises: the
        step that calls it is not the reader's, and read() meets the same fault at its next
        poll."""
        if self._queued is not None or self.fault:
            return
        try:
            r = self.poll()   # nothing queued: one poll of the field, as the REPL's
        except Exception:  # noqa: BLE001 (not this caller's fault; read() reports it)
            return
        if r is not None:
            self._queued_next = self._queued   # _identify's card behind its noread, or None
            self._queued = r

    def _detect(self):
        """Init if needed, halt the tag read last, then REQA (WUPA while a failing tag is in
        the field). -> True (a tag answered), None, or a result tuple; raises what the chip
        raises (read() and poll() catch it). Allocation-free when the field is empty (the
        common case, every period_ms), its frame included: it runs at every poll, so its VM
        state stays within the 11 words MicroPython keeps on the C stack (a bigger frame is a
        heap block per call, and those count towards the next collection although each is
        freed on return: tests/firmware/drivers/check_rfid.py). An `except ... as e` alone
        makes a frame too big (8 words and 2 handlers of 3): the handler is in read(), a
        generator whose state is allocated once, and the rare steps are methods."""
        if not self._ready and not self._init():
            return None
        if self._halt_due:  # sent now and not waited for: the REQA goes once it is off the air
            self._halt_due = False
            self._halt()
        if self._check_uid is not None and self.chip.resuming():
            r = self._check()   # the tag reported by its UID waits for its last SELECT
            if r is not None:
                return r
        # WUPA while a tag in the field is failing, or its check did (_check: it may still be
        # selected, and a selected tag answers no REQA)
        if self.chip.request(self._failing > 0 or self._fail_reported
                             or self._check_uid is not None) is None:
            return self._silent()
        return True

    def _init(self):
        """(Re)initialise the reader chip -> True if it answered."""
        try:
            self.chip.init()
        except (RFIDError, OSError) as e:
            self.fault = _reason(e)
            self.counts["fault"] += 1
            return False
        self._ready = True
        self._halt_due = False
        self.fault = None
        return True

    def _check(self):
        """Select the tag reported by its UID alone, read its memory and compare it with what
        it held when read whole -> None (the same: the tag is halted), ("forged",
        "tag_changed"), or None with the check left for its next answer (the air failed: the
        tag answers the next poll's WUPA, and _identify checks it then; if it has left,
        `unchecked` counts it)."""
        chip = self.chip
        uid = self._check_uid
        try:
            chip.resume_select()
            chip.read_pages(CODE_PAGE, self._buf)
        except _ERRORS:
            return None
        return self._compare(uid)

    def _compare(self, uid):
        self._check_uid = None
        self._halt()
        i = self._known.get(uid)
        if i is None:   # forgotten meanwhile (the store was full, or RAM short): not compared
            self.counts["unchecked"] += 1
            return None
        if self._codes[i << 4:(i << 4) + 16] == self._buf:
            return None
        self._known.pop(uid, None)   # read whole from now on
        return "forged", "tag_changed"

    def _silent(self):
        """An empty field: after absent_polls of them the tag in it has left -> None, or
        ("noread", b"") if it left without a valid read."""
        self._absent += 1
        if self._absent < self.absent_polls:
            return None
        if self._check_uid is not None:   # reported by its UID, gone before its memory was read
            self._check_uid = None
            self.counts["unchecked"] += 1
        unread = self._failing > 0 and not self._fail_reported
        if self._last_uid is not None and ticks_diff(self._ticks(), self._heard) >= self.hold_ms:
            self._last_uid = None
        self._fail_reported = False
        self._failing = 0
        self._fail_uid = None
        if unread:  # the card left the field without a valid read
            self.counts["noread"] += 1
            return "noread", b""
        return None

    def _halt(self):
        try:
            self.chip.halt()  # on the air while the card is returned
        except (RFIDError, OSError):
            pass  # a lost halt costs one select: the tag answers and is a duplicate

    def _identify(self):
        """Select, read and halt the tag that answered (with retries) -> result or None."""
        chip = self.chip
        self._absent = 0
        self._answered = self._ticks()
        self._fast = True
        reason = None
        uid = None
        for attempt in range(self.tries):
            if attempt:
                self.counts["retry"] += 1
                try:
                    if chip.request(wake=True) is None:
                        reason = "rfid_timeout"
                        break
                except (RFIDError, OSError) as e:
                    reason = _reason(e)
                    continue
            auth = None
            try:
                uid = chip.select(self._known if self.by_uid else None)
                if chip.sak < 0:   # a plain tag read whole before: reported by its UID
                    if (uid != self._last_uid and self._check_uid is None
                            and (self._failing == 0 or self._fail_reported)):
                        return self._by_uid(uid)
                    # heard again, another one waits for its check, or a failing tag's noread
                    # is due first (swapped, below): selected and read whole
                    chip.resume_select()
                if chip.sak & 0x20:  # ISO 14443-4: an authenticated tag, read even if heard
                    from shoe.drivers.ntag424 import read_tag

                    auth = read_tag(self, uid)
                elif uid == self._check_uid:   # reported by its UID: its memory now
                    chip.read_pages(CODE_PAGE, self._buf)
                    self._heard = self._answered
                    return self._compare(uid)
                elif uid == self._last_uid:
                    self.counts["duplicate"] += 1
                    self._heard = self._answered
                    self._halt()
                    return None
                else:
                    chip.read_pages(CODE_PAGE, self._buf)
            except (RFIDError, OSError) as e:
                reason = _reason(e)
                if chip.l4:  # a tag in ISO 14443-4 answers no WUPA until deselected
                    self._halt()
                if reason in ("rfid_stuck", "rfid_overflow", "rfid_bus"):
                    break
                continue
            self._halt_due = True  # with the next poll: the card goes out first
            swapped = (self._failing > 0 and not self._fail_reported
                       and self._fail_uid is not None and uid != self._fail_uid)
            if auth is not None and uid == self._last_uid:
                self.counts["duplicate"] += 1  # an authenticated tag again: the app checks it
            else:
                self.counts["card"] += 1
            self._took(uid)
            r = self._result() if auth is None else auth
            if auth is None and r[0] == "card":
                self._remember(uid)
            if swapped:  # the failing tag left and this one came in between two polls
                self._queued = r
                self.counts["noread"] += 1
                return "noread", b""
            return r
        return self._failed(reason, uid)

    def _by_uid(self, uid):
        """A new card whose UID is in _known: its code from there, its check at the next poll
        (its last SELECT is not sent: the tag waits for it, _check)."""
        self._check_uid = uid
        self.counts["card"] += 1
        self.counts["by_uid"] += 1
        self._took(uid)
        i = self._known[uid] << 4
        self._buf[:] = memoryview(self._codes)[i:i + 16]
        return self._result()

    def _remember(self, uid):
        """Keep the 16 bytes of a plain tag read whole, by its UID. Short of RAM (a fragmented
        heap) nothing is kept: the tags are read whole, as before; a read never fails for it."""
        k = self._known
        try:
            if self._codes is None:
                self._codes = bytearray(_KNOWN_MAX << 4)
            i = k.get(uid)
            if i is None:
                if self._slot >= _KNOWN_MAX:   # full: start again (a third deck's tags)
                    k.clear()
                    self._slot = 0
                i = self._slot
                k[uid] = i
                self._slot = i + 1
            self._codes[i << 4:(i << 4) + 16] = self._buf
        except MemoryError:
            k.clear()
            self._slot = 0

    def _took(self, uid):
        """A card read, or reported by its UID: its UID remembered, any failure episode over."""
        self._last_uid = uid
        self._heard = self._answered
        self._fail_reported = False
        self._failing = 0
        self._fail_uid = None

    def _failed(self, reason, uid):
        self.last_reason = reason
        if reason == "rfid_stuck" or reason == "rfid_bus":
            self._ready = False
            self.fault = reason
            self.counts["fault"] += 1
            return None
        if self._fail_reported:
            return None  # this failure episode has its noread; quiet until the field empties
        self._failing += 1
        if uid is not None:
            self._fail_uid = uid
        if self._failing < self.fail_polls:
            return None  # try again on the next polls while it is in the field
        if self._fail_uid is not None:
            self._last_uid = self._fail_uid  # reported as unread: a later good read is no card
            self._heard = self._ticks()
        self._fail_reported = True
        self._failing = 0
        self.counts["noread"] += 1
        return "noread", b""

    async def read(self):
        """Wait for the next tag -> ("card", code), ("noread", b"") or ("garbled", raw)."""
        while True:
            if self._queued is not None:
                return self._unqueue()
            try:  # poll()'s steps: a generator's state is allocated once, not at every poll
                r = self._detect()
            except _ERRORS as e:
                r = self._failed(_reason(e), None)
            if r is True:  # read at once: the tag answered and may not stay long
                r = self._identify()
            if r is not None:
                return r
            if self.dealing or self._fast or self.fault:
                await asyncio.sleep_ms(self.next_period())
            else:  # idle: the common case, no method call (it costs ~0.04 ms on the RP2040)
                await asyncio.sleep_ms(self.period_ms)

    def next_period(self):
        """ms to the next poll: fast_period_ms while dealing or within fast_ms of a tag."""
        if self.fault:
            return self.retry_ms
        if self.dealing:
            return self.fast_period_ms
        if self._fast:
            if ticks_diff(self._ticks(), self._answered) < self.fast_ms:
                return self.fast_period_ms
            self._fast = False
        return self.period_ms

    def status(self):
        return {"fault": self.fault, "last_reason": self.last_reason, "counts": self.counts,
                "version": self.chip.version}
