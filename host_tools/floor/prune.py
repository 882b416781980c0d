"""The gateway's local audit store pruned once the floor holds an event.

    gw.pruner = Pruner(keep_s=86400, keep=1000, every=60)   # before or after gw.start()
    (the gateway calls pruner.after_save(gw) each time it has saved its published cursors)

What the gateway may drop: an event the broker acknowledged (PUBACK: at or below the saved
published cursor) and received more than `keep_s` seconds ago, keeping at least the last `keep`
events of each shoe (never fewer than 33: the host state re-checks the last 32 at each link
open) and never cutting a round in two (AuditStore.prune stops at the last round_result or
round_void). The keep window is what makes a PUBACK enough: a broker that loses acknowledged
messages (a restart without persistence) or a collector that dies holding them is noticed within
seconds (the collector compares its head with the published cursor in the gateway's signed state
and asks for a replay), so a day's window leaves the floor ample time to ask again. An event
asked for after it was pruned is not published again: the collector then raises a `gap` alert
after its gap_timeout, as for any hole. Pruning needs the shoe key (the prune record is MAC'd
under it) and runs in the gateway's thread, at most every `every` seconds and `limit` rows a time.
"""

import time


class Pruner:
    def __init__(self, keep_s=86400.0, keep=1000, every=60.0, limit=20000):
        self.keep_s = float(keep_s)
        self.keep = int(keep)
        self.every = float(every)
        self.limit = int(limit)
        self.pruned = 0
        self.last_error = None
        self._next = 0.0

    def after_save(self, gw):
        """The gateway saved its cursors: prune what they cover (rate-limited)."""
        now = time.monotonic()
        if now < self._next:
            return 0
        self._next = now + self.every
        saved = gw.saved_cursors() if gw.cursor_path else {}  # what a restart resumes from
        n = 0
        for t in list(gw.tables.values()):
            try:
                n += self.prune_table(t, saved.get(t.shoe, t.cursor))
            except Exception as e:
                # broad on purpose: it runs inside the gateway's publishing, which must never
                # stop (nor rewind) for a prune; said on the gateway's log and kept there
                self.last_error = "%s: %s" % (type(e).__name__, e)
                if getattr(gw, "errors", None) is not None:
                    gw.errors.note("prune", e)
        self.pruned += n
        return n

    def prune_table(self, t, cursor):
        key = getattr(getattr(t.link, "ep", None), "key", None)
        if key is None or not cursor:
            return 0
        upto = min(cursor, t.cursor, t.store.received_before(t.shoe, time.time() - self.keep_s))
        if upto <= 0:
            return 0
        return t.store.prune(t.shoe, key, upto, keep=self.keep, limit=self.limit)
