"""The world simulator: the physical table around the shoe (CPython).

It holds the deck in the shoe (a given order, or shuffled from a seed), prints valid card codes
(interfaces.md section 1, HMAC with the card key), and plays the dealer drawing cards past the
code reader: it writes what an optical code-reader module would send on the reader endpoint of
the virtual board (one code per line, `NOREAD` when a card passes unread).

Reader and card faults (interfaces.md section 5) are produced here, on the card drawn at `at`:

    misread      a garbled line, then the dealer re-presents the card and it reads
    double-read  the module reports the same code twice (the driver de-duplicates)
    no-read      NOREAD `times` times (default 1), then the re-presented card reads
    foreign      a card of another deck (valid MAC, other serial) replaces the card
    forged       the card's code with a wrong MAC
    other-back   the same card from the other back colour (two-deck mode's other deck)
    duplicate    a card already dealt this round comes out again
    extra-card   (handled by the caller: one more draw after the deal is complete)

The world does not know the rules: the caller (session runner, demo) decides how many cards
to draw and when, and waits for the shoe between cards at full speed.
"""

import random
import socket
import time

from shoe import cards
from shoe.cardcode import CardCodes

DEMO_CARD_KEY = b"demo-card-key"
NOREAD = b"NOREAD"


class WorldError(Exception):
    pass


def shuffled(seed):
    order = list(range(52))
    random.Random(seed).shuffle(order)
    return order


class Deck:
    """A physical deck: serial, back colour, and the order of the cards in the shoe."""

    def __init__(self, serial, back, order=None, seed=None):
        self.serial = serial
        self.back = back
        if order is None:
            order = shuffled(seed)
        ids = [cards.parse(c) if isinstance(c, str) else c for c in order]
        self.order = ids
        self.pos = 0

    def remaining(self):
        return self.order[self.pos :]

    def take(self):
        if self.pos >= len(self.order):
            raise WorldError("the shoe is empty")
        c = self.order[self.pos]
        self.pos += 1
        return c


class ReaderPort:
    """The reader endpoint of a virtual board (TCP): write lines like the optical module does."""

    def __init__(self, host, port, timeout=3.0):
        self.addr = (host, port)
        self.timeout = timeout
        self.sent = []
        self._connect()

    def reconnect(self):
        """After the board restarted (power cut): its reader endpoint is a new socket."""
        self.close()
        self._connect()

    def _connect(self):
        host, port = self.addr
        timeout = self.timeout
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((host, port), timeout=2.0)
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise WorldError(
                        "cannot reach the reader endpoint %s:%d: %s" % (host, port, e)
                    ) from e
                time.sleep(0.05)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def line(self, data):
        self.sock.sendall(bytes(data) + b"\r\n")
        self.sent.append(bytes(data))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class World:
    def __init__(self, port, card_key=DEMO_CARD_KEY, gap_s=0.0):
        self.port = port
        self.codes = CardCodes(card_key)
        self.gap_s = gap_s
        self.dealt = []  # cards drawn this round (ids), for the duplicate fault
        self.in_hand = None  # (card id, its code if the card is not genuine): the last drawn
        self._last_sent = None
        self._last_time = 0.0
        self.min_same_gap_s = 0.3  # a genuine second card with the same code comes this late

    def code(self, serial, back, card):
        return self.codes.make(serial, back, card).encode()

    def _send(self, data):
        if data == self._last_sent:
            # Physically a second card cannot follow within the module's same-code delay.
            wait = self.min_same_gap_s - (time.monotonic() - self._last_time)
            if wait > 0:
                time.sleep(wait)
        self.port.line(data)
        self._last_sent = data
        self._last_time = time.monotonic()

    def new_round(self):
        self.dealt = []

    def pass_card(self, deck, card, again=False):
        """A card read cleanly (no fault). again=True: the same card re-presented after the
        shoe restarted (its reader forgot the last code, so no same-code delay applies); the
        card drawn last is the physical card in the dealer's hand, so a forged, foreign or
        other-back card goes through again as it is, never as the genuine card."""
        held, data = self.in_hand or (None, None)
        if not again or held != card or data is None:
            data = self.code(deck.serial, deck.back, card)
        if again:
            self.port.line(data)
            self._last_sent, self._last_time = data, time.monotonic()
            return
        self._send(data)

    def _hold(self, card, data):
        """The drawn card is not the genuine one: remember its code (pass_card(again=True))."""
        self.in_hand = (card, data)
        return data

    def draw(self, deck, fault=None, other_deck=None):
        """The dealer draws the next card; returns (card id, what the reader saw)."""
        card = deck.take()
        kind = (fault or {}).get("kind")
        seen = card
        self.in_hand = (card, None)
        if kind is None:
            self.pass_card(deck, card)
        elif kind == "misread":
            good = self.code(deck.serial, deck.back, card)
            self._send(good[:5] + b"#" + good[6:])
            self._send(good)
        elif kind == "double-read":
            good = self.code(deck.serial, deck.back, card)
            self.port.line(good)
            self.port.line(good)
            self._last_sent, self._last_time = good, time.monotonic()
        elif kind == "no-read":
            for _ in range(int(fault.get("times", 1))):
                self._send(NOREAD)
            self.pass_card(deck, card)
        elif kind == "foreign":
            serial = (deck.serial + 0x1111) & 0xFFFF
            self._send(self._hold(card, self.code(serial, deck.back, card)))
        elif kind == "forged":
            good = bytearray(self.code(deck.serial, deck.back, card))
            good[-1] = ord("0") if good[-1] != ord("0") else ord("1")
            self._send(self._hold(card, bytes(good)))
        elif kind == "other-back":
            if other_deck is not None:
                serial, back = other_deck.serial, other_deck.back
            else:
                serial, back = deck.serial, "B" if deck.back == "R" else "R"
            self._send(self._hold(card, self.code(serial, back, card)))
        elif kind == "duplicate":
            if not self.dealt:
                raise WorldError("a duplicate needs a card dealt before it (at >= 1)")
            seen = self.dealt[0]  # the earliest card of the round comes out again
            self._send(self._hold(card, self.code(deck.serial, deck.back, seen)))
        else:
            raise WorldError("unknown fault kind %r" % kind)
        self.dealt.append(seen)
        if self.gap_s:
            time.sleep(self.gap_s)
        return seen

    def run_cards(self, deck, ids):
        for c in ids:
            self.pass_card(deck, c)
            if self.gap_s:
                time.sleep(self.gap_s)

    def _riffled(self, deck, ids):
        """A deck riffled through the reader: a port that models pace (the emulated Pico's)
        takes the riffle's own, faster one meanwhile (`port.riffle(on)`)."""
        riffle = getattr(self.port, "riffle", None)
        if riffle is not None:
            riffle(True)
        try:
            self.run_cards(deck, ids)
        finally:
            if riffle is not None:
                riffle(False)

    def deck_check(self, deck):
        """Run the whole deck and the cover card through the reader (deck loading)."""
        self._riffled(deck, list(deck.order) + [cards.COVER])

    def stub(self, deck):
        """Run the undealt cards and the cover card through the reader."""
        rest = deck.remaining()
        deck.pos = len(deck.order)
        self._riffled(deck, rest + [cards.COVER])
