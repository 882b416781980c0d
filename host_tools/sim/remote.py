"""A table system for a board that runs elsewhere: virtual, emulated or real, over its port.

    with RemoteTable(port_url, keys, reader_url=None, on_event=print) as t:
        t.runner.play(script)

The shoe is reached over its host UART (pyserial URL: socket://... of `shoectl sim` or the
emulator, /dev/ttyACM0 of a real shoe) with the keys of its provisioning file. The dealer is
the world simulator writing into the reader endpoint (reader_url, socket://HOST:PORT), or,
without one, a person at the shoe: PersonDealer prints what to do and the runner waits for the
shoe to report it (set a long event timeout). A board of ours is not there to be power-cut:
scripts with power-cut or link-drop faults are refused, and with a person, every fault (a
person deals what the shoe reads) and stacked decks are refused too. If the board restarts on its
own (power returns), the runner notices the new link session and carries on.
"""

import sys
from urllib.parse import urlparse

from host_tools.errors import ShoeError
from host_tools.sim.session import TableParts, TableRunner
from host_tools.sim.world import ReaderPort, World

NEEDS_OUR_BOARD = ("power-cut", "link-drop")


def reader_address(url):
    u = urlparse(url)
    if u.scheme != "socket" or not u.hostname or not u.port:
        raise ShoeError(
            "--reader must look like socket://HOST:PORT (the board's reader "
            "endpoint), not %r" % url
        )
    return u.hostname, u.port


def check_script_for(script, person):
    for i, r in enumerate(script["rounds"]):
        for f in r.get("faults", []):
            if f["kind"] in NEEDS_OUR_BOARD:
                raise ShoeError(
                    "script round %d: a %s fault needs the virtual board of `shoectl "
                    "session` without --port" % (i, f["kind"])
                )
            if person:
                raise ShoeError("script round %d: faults need the world simulator (--reader)" % i)
        if person and r.get("deck"):
            raise ShoeError(
                "script round %d: a stacked deck needs the world simulator "
                "(--reader); a person deals a shuffled deck" % i
            )


class PersonDealer:
    """The dealer is a person: say what to run through the shoe; the shoe's events tell when."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.port = None

    def _say(self, text):
        self.out.write(">>> %s\n" % text)
        self.out.flush()

    def new_round(self):
        self._say("shuffle the deck in the shoe")

    def deck_check(self, deck):
        self._say(
            "run deck %04X (back %s) through the reader: all 52 cards, then the cover card"
            % (deck.serial, deck.back)
        )

    def draw(self, deck, fault=None, other_deck=None):
        card = deck.take()
        self._say("deal the next card")
        return card

    def pass_card(self, deck, card, again=False):
        self._say("present the last card again (the shoe restarted before it read it)")

    def stub(self, deck):
        deck.pos = len(deck.order)
        self._say("run the stub (every undealt card), then the cover card, through the reader")


class RemoteTable(TableParts):
    def __init__(
        self, url, keys, reader_url=None, on_event=None, event_timeout=20.0, db=None, out=None
    ):
        self.url = url
        self.keys = keys
        self.reader_url = reader_url
        self.on_event = on_event
        self.event_timeout = event_timeout
        self.db = db
        self.out = out

    def __enter__(self):
        from host_tools.link import link_for

        try:
            self._open_store(self.db)
            self.link = link_for(
                self.url,
                self.keys["shoe"],
                supervisor_key=self.keys.get("supervisor"),
                audit=self.store,
                reconnect_s=0.1,
            )
            self.link.open(timeout=max(self.event_timeout, 20))  # a slow board: --event-timeout
            if self.reader_url:
                self.port = ReaderPort(*reader_address(self.reader_url))
                world = World(self.port, card_key=self.keys["card"])
            else:
                world = PersonDealer(self.out)
            self.runner = TableRunner(
                None, self.link, world, on_event=self.on_event, event_timeout=self.event_timeout
            )
        except BaseException:
            self.__exit__()
            raise
        return self
