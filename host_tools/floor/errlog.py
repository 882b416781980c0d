"""Every error a floor daemon meets: logged, counted, the latest kept for /healthz and /metrics.

    errors = ErrorLog("gateway")        # logger shoe.floor.gateway
    errors.note("publish", e)           # logs "publish: <type>: <message>" at WARNING, counts
                                        # it under "publish", keeps it among the last KEEP
    errors.last, errors.last_at         # the latest one (text, Unix time), None/0.0 if none
    errors.total, errors.counts         # how many, by where
    errors.recent()                     # [{"at", "where", "error"}], oldest first

A daemon never dies of one error (it says it and goes on); what it says is never overwritten
by the next one before a reader can see it: the last KEEP are there.
"""

import collections
import logging
import threading
import time

KEEP = 50


def text(e):
    return "%s: %s" % (type(e).__name__, e) if isinstance(e, BaseException) else str(e)


class ErrorLog:
    def __init__(self, daemon, keep=KEEP):
        self.log = logging.getLogger("shoe.floor.%s" % daemon)
        self.counts = {}
        self.total = 0
        self.last = None
        self.last_at = 0.0
        self._recent = collections.deque(maxlen=keep)
        self._lock = threading.Lock()

    def note(self, where, error, level=logging.WARNING):
        """Log and keep one error; `where` names what failed (a short word, a metrics label)."""
        msg = text(error)
        now = time.time()
        with self._lock:
            self.counts[where] = self.counts.get(where, 0) + 1
            self.total += 1
            self.last, self.last_at = "%s: %s" % (where, msg), now
            self._recent.append({"at": now, "where": where, "error": msg[:500]})
        self.log.log(level, "%s: %s", where, msg)
        return msg

    def recent(self, n=None):
        with self._lock:
            out = list(self._recent)
        return out if n is None else out[-n:]
