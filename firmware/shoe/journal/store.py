"""Where the journal's record streams live: named streams ("journal.log", "rounds.0",
"rounds.1") with one interface, so the Journal does not care what holds them.

    FileStore(root)          files in a directory (log.py): the unix virtual board, the ESP32,
                             most tests; the default
    ringstore.RingStore      raw flash rings on the Pico (ring.py), see extents.open_store

    scan(name) -> log.Scan-like iterable (good_end, torn, holes, lost, hole)
    append(name, payload)    one durable record (raises if it failed part way: abort(name))
    rewrite(name, records)   atomic replace -> (writes, bytes)
    drop_tail(name, n)       forget a torn tail after the first n good records
    clear(name); fits(name, n); size(name); close(); idle() -> True if it did flash work
"""
from shoe.journal import log


class FileStore:
    def __init__(self, root):
        self.root = root
        self._app = {}

    def _path(self, name):
        return self.root + "/" + name

    def scan(self, name):
        path = self._path(name)
        new = path + ".new"
        if log.exists(new):  # a compaction: adopt it if complete (its last record is ["Z"])
            complete = False
            for p in log.Scan(new):
                complete = p == b"\x81aZ"
            if complete:  # it finished writing but the rename did not happen
                log.remove(path)
                import os
                os.rename(new, path)
            else:
                log.remove(new)
        return log.Scan(path)

    def append(self, name, payload):
        a = self._app.get(name)
        if a is None:
            a = self._app[name] = log.Appender(self._path(name))
        a.append(payload)

    def size(self, name):
        a = self._app.get(name)
        return a.size if a is not None else log.size(self._path(name))

    def abort(self, name):
        a = self._app.pop(name, None)
        if a is not None:
            a.close()

    def rewrite(self, name, records):
        self.abort(name)
        return log.rewrite(self._path(name), records)

    def drop_tail(self, name, n):
        self.abort(name)
        path = self._path(name)
        return log.rewrite(path, first(log.Scan(path), n))

    def clear(self, name):
        self.abort(name)
        log.remove(self._path(name))

    def fits(self, name, n):
        return True

    def close(self):
        for name in list(self._app):
            self.abort(name)

    def idle(self):
        return False


def first(it, n):
    if n <= 0:
        return
    for i, x in enumerate(it):
        yield x
        if i + 1 >= n:
            return
