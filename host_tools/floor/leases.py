"""The collector's leases: which shoes this collector holds, by PostgreSQL session advisory locks
taken up to a fair share (shoes seen / live collectors, from the `collectors` heartbeat), and
what it holds of each (ShoeHead). A mixin of host_tools.floor.collector.Collector (the state it
reads: conn, name, live_s, known, owned, per_lease, client; collector.py says why).
"""

import functools
import math
import time

from host_tools.errors import ShoeError
from host_tools.floor import collector_sql as sql
from host_tools.floor import mqtt
from host_tools.livetable import LiveTable
from host_tools.reveal import RoundWatch
from shoe.link.message import GENESIS


class ShoeHead:
    """What a collector holds of a shoe it leases: its chain head, the events waiting for a
    hole to fill, its round watch (reveal checks), its live table and its state counters."""

    __slots__ = (
        "eseq",
        "hash",
        "pending",
        "gap_since",
        "asked_at",
        "published",
        "behind_since",
        "watch",
        "state_ctr",
        "state_mac",
        "dups",
        "dup_since",
        "dup_alerted",
        "live",
    )

    def __init__(self, eseq, h, loader=None):
        self.live = LiveTable()  # the tile's phase, round and last result, from its events
        self.eseq = eseq
        self.hash = h
        self.pending = {}  # eseq -> (payload, gateway time) beyond head + 1, waiting
        self.gap_since = None
        self.asked_at = 0.0
        self.published = 0  # the gateway's published cursor (retained state)
        self.behind_since = None
        self.watch = RoundWatch(loader)  # commitments vs reveals (a round begun before the
        #                                   lease: its events from the database)
        self.state_ctr = 0  # the last verified state message's counter and MAC
        self.state_mac = None
        self.dups = 0  # events received again in the current window
        self.dup_since = 0.0
        self.dup_alerted = False


class Leases:
    def _one_of_this_name(self):
        """Two live collectors under one name would take the broker session from each other:
        wait out a crashed predecessor's heartbeat (live_s), refuse a live one."""
        deadline = time.monotonic() + self.live_s + 1.0
        while True:
            if not sql.is_live(self.conn, self.name, self.live_s):
                return
            if time.monotonic() > deadline:
                self.conn.close()
                raise ShoeError(
                    "a collector named %s is running (its heartbeat is fresh): give "
                    "this one another --name" % self.name
                )
            time.sleep(0.2)

    def _leases(self):
        live = sql.heartbeat(self.conn, self.name, self.live_s)
        self._live = max(1, live)
        share = math.ceil(len(self.known) / self._live)
        # give back what is beyond a fair share (another collector joined)
        for shoe in sorted(self.owned)[share + 1 :] if len(self.owned) > share + 1 else []:
            sql.unlock(self.conn, shoe)
            del self.owned[shoe]
        for shoe in sorted(self.known - set(self.owned)):
            if len(self.owned) >= share:
                break
            self._try_take(shoe)

    def _try_take(self, shoe):
        if sql.try_lock(self.conn, shoe):
            self._take(shoe)

    def _take(self, shoe):
        row = sql.head_of(self.conn, shoe)
        loader = functools.partial(self._round_events, shoe)
        h = (
            ShoeHead(row[0], bytes(row[1]) if row and row[1] else GENESIS, loader)
            if row
            else ShoeHead(0, GENESIS, loader)
        )
        if row:
            h.state_ctr, h.state_mac = row[2], bytes(row[3]) if row[3] else None
        self.owned[shoe] = h
        if self.per_lease and self.client is not None:
            self._subscribe(shoe)  # before the replay request below
        sql.own(self.conn, shoe, self.name)
        self._ask_replay(shoe, h, time.monotonic())  # catch up on whatever the last owner missed

    def _round_events(self, shoe, rnd):
        """A round's round_open, card and reveal events already in the database."""
        return sql.round_events(self.conn, shoe, rnd)

    def _subscriptions(self):
        """per_lease: subscribe to the events of every leased shoe, and only those."""
        again, self._resubscribe = self._resubscribe, None
        if again:
            gone = set(self._subscribed)
            if again == "kept":  # a session from before this start: drop what it holds
                gone |= set(self.keys.shoes())
            self._subscribed = set()
        else:
            gone = self._subscribed - set(self.owned)
        gone -= set(self.owned)
        if gone:
            self.client.unsubscribe([mqtt.topic(s, "events", self.prefix) for s in sorted(gone)])
            self._subscribed -= gone
        for shoe in sorted(set(self.owned) - self._subscribed):
            self._subscribe(shoe)

    def _subscribe(self, shoe):
        self.client.subscribe(mqtt.topic(shoe, "events", self.prefix), 1)
        self._subscribed.add(shoe)
