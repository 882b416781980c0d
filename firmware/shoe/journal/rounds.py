"""The last 100+ rounds for recall (a mixin of Journal, shoe/journal/journal.py): two segment
files of at most ROUNDS_PER_SEGMENT round records, [count, round_no, kind, body] (count =
journal-wide order); the older segment is emptied when the newer one is full, so the last 100
rounds are always there. A segment keeps every good record after a damaged one (log.Scan) and
is rewritten without the bad bytes."""
import array

from micropython import const

from shoe.journal import log
from shoe.link import codec

ROUNDS_PER_SEGMENT = const(100)


class Rounds:
    def _seg(self, i):
        return self.root + "/rounds." + str(i)

    def _rounds_open(self):
        self._rf = None
        self._rdirty = False
        # round numbers held in each segment, oldest first (fixed arrays: no heap growth)
        self._nums = [array.array("i", bytes(4 * ROUNDS_PER_SEGMENT)) for _ in (0, 1)]
        self._n = [0, 0]
        self._last = [0, 0]  # journal-wide count of the newest round record in each segment
        for i in (0, 1):
            scan = log.Scan(self._seg(i))
            for p in scan:
                try:
                    r = codec.decode(p)
                    if self._n[i] >= ROUNDS_PER_SEGMENT:
                        raise ValueError
                    self._last[i] = r[0]
                    self._nums[i][self._n[i]] = r[1]
                    self._n[i] += 1
                except Exception:
                    scan.torn = True
                    break
            if scan.torn:  # rewrite without the torn tail (streamed, one record at a time)
                self.recovered_torn += 1
                w, b = log.rewrite(self._seg(i), _first(log.Scan(self._seg(i)), self._n[i]))
                self.writes += w
                self.bytes_written += b
                self.erases += log.sectors(0, b)
        self._cur = 1 if self._last[1] > self._last[0] else 0

    def add_round(self, no, kind, body):
        """Keep a round_result / round_void (body as sent, codec types) for recall."""
        cur = self._cur
        count = self._last[cur] + 1
        if self._rdirty:  # a failed append left a torn tail: rewrite the segment without it
            if self._rf is not None:
                self._rf.close()
                self._rf = None
            seg = self._seg(cur)
            log.rewrite(seg, _first(log.Scan(seg), self._n[cur]))
            self._rdirty = False
        if self._n[cur] >= ROUNDS_PER_SEGMENT:
            if self._rf is not None:
                self._rf.close()
                self._rf = None
            cur = 1 - cur
            self._cur = cur
            log.remove(self._seg(cur))
            self._n[cur] = 0
        if self._rf is None:
            self._rf = log.Appender(self._seg(cur))
        payload = codec.encode([count, no, kind, body])
        before = self._rf.size
        try:
            self._rf.append(payload)
        except Exception:
            self._rdirty = True
            self._rf.close()
            self._rf = None
            raise
        self.writes += 1
        self.bytes_written += len(payload) + log.HEAD
        self.erases += log.sectors(before, len(payload) + log.HEAD)
        self._nums[cur][self._n[cur]] = no
        self._n[cur] += 1
        self._last[cur] = count

    def round_numbers(self):
        """Every recallable round number, oldest first (the last 100 at least)."""
        o = 1 - self._cur
        return list(self._nums[o][:self._n[o]]) + list(self._nums[self._cur][:self._n[self._cur]])

    def round(self, no):
        """-> (kind, body) of round `no`, or None if it is not (or no longer) recallable."""
        for i in (self._cur, 1 - self._cur):
            if _holds(self._nums[i], self._n[i], no):
                for p in log.Scan(self._seg(i)):
                    r = codec.decode(p)
                    if r[1] == no:
                        return r[2], r[3]
        return None



def _holds(arr, n, x):
    for i in range(n):
        if arr[i] == x:
            return True
    return False


def _first(it, n):
    if n <= 0:
        return
    for i, x in enumerate(it):
        yield x
        if i + 1 >= n:
            return
