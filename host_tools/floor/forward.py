"""Alerts forwarded outside the floor page: syslog and/or a webhook, never blocking the collector.

    fw = Forwarder(syslog="localhost:514" | "/dev/log", webhook="https://...", queue_max=1000)
    fw.send([alert dict, ...])    # returns at once; fw.stats(); fw.close()

An alert is {"shoe", "eseq", "kind", "detail", "collector", "at"} (no key, no payload, no card:
what the alerts table holds). Syslog: one line per alert through logging's SysLogHandler (UDP to
HOST:PORT, or a Unix socket path), facility local0, priority warning. Webhook: HTTP POST of
{"alerts": [...]} as JSON from a thread of its own, a bounded queue in front (full: the newest
alerts are dropped and counted, the collector never waits), up to `retries` attempts with
back-off per batch, then the batch is dropped and counted. Either way the alert is in PostgreSQL
first: forwarding is a copy, its losses are counted in the metrics, never the floor's.
"""

import json
import logging
import logging.handlers
import queue
import threading
import urllib.error
import urllib.request

from host_tools.errors import ShoeError


def syslog_address(text):
    """'HOST:PORT' -> (host, port); a path (/dev/log) as is."""
    if text.startswith("/"):
        return text
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise ShoeError("--syslog must be HOST:PORT or a socket path such as /dev/log")
    return host, int(port)


class Forwarder:
    def __init__(
        self, syslog=None, webhook=None, queue_max=1000, retries=3, timeout=5.0, backoff=0.5
    ):
        self.counts = {"forwarded": 0, "dropped": 0, "failed": 0, "syslog": 0}
        self._log = None
        if syslog:
            self._log = logging.getLogger("shoe.floor.alerts.%x" % id(self))
            self._log.propagate = False
            h = logging.handlers.SysLogHandler(
                address=syslog_address(syslog) if isinstance(syslog, str) else syslog,
                facility=logging.handlers.SysLogHandler.LOG_LOCAL0,
            )
            h.setFormatter(logging.Formatter("shoe-floor: %(message)s"))
            self._log.addHandler(h)
            self._log.setLevel(logging.WARNING)
        self.webhook = webhook
        if webhook and not webhook.startswith(("http://", "https://")):
            raise ShoeError("--webhook must be an http:// or https:// URL")
        self.retries, self.timeout, self.backoff = retries, timeout, backoff
        self._q = queue.Queue(maxsize=queue_max)
        self._stop = threading.Event()
        self._thread = None
        if webhook:
            self._thread = threading.Thread(target=self._run, name="alert-webhook", daemon=True)
            self._thread.start()

    def send(self, alerts):
        """Hand alerts over; returns at once."""
        if not alerts:
            return
        if self._log is not None:
            for a in alerts:
                try:
                    self._log.warning(
                        "alert %s shoe=%s eseq=%s %s",
                        a.get("kind"),
                        a.get("shoe"),
                        a.get("eseq"),
                        a.get("detail"),
                    )
                    self.counts["syslog"] += 1
                except Exception:  # logging reports its own errors; never raise here
                    self.counts["failed"] += 1
        if self.webhook:
            for a in alerts:
                try:
                    self._q.put_nowait(a)
                except queue.Full:
                    self.counts["dropped"] += 1

    def queued(self):
        return self._q.qsize()

    def _run(self):
        while not self._stop.is_set():
            try:
                batch = [self._q.get(timeout=0.2)]
            except queue.Empty:
                continue
            while len(batch) < 100:
                try:
                    batch.append(self._q.get_nowait())
                except queue.Empty:
                    break
            body = json.dumps({"alerts": batch}, default=str).encode()
            for attempt in range(self.retries):
                if self._stop.is_set():
                    return
                try:
                    req = urllib.request.Request(
                        self.webhook,
                        data=body,
                        method="POST",
                        headers={"Content-Type": "application/json"},
                    )
                    with urllib.request.urlopen(req, timeout=self.timeout) as r:
                        if 200 <= r.status < 300:
                            self.counts["forwarded"] += len(batch)
                            break
                except (urllib.error.URLError, OSError, ValueError):
                    pass
                self._stop.wait(self.backoff * (2**attempt))
            else:
                self.counts["failed"] += len(batch)

    def close(self):
        self._stop.set()
        if self._thread:
            self._thread.join(self.timeout + 1)
        if self._log is not None:
            for h in list(self._log.handlers):
                h.close()
                self._log.removeHandler(h)
