"""The last 100+ rounds for recall (a mixin of Journal, shoe/journal/journal.py): two segment
files of at most ROUNDS_PER_SEGMENT round records, [count, round_no, kind, body] (count =
journal-wide order); the older segment is emptied when the newer one is full, so the last 100
rounds are always there. A segment keeps every good record after a damaged one (log.Scan), has
a record with one flipped bit repaired, and is rewritten without the bad bytes."""
import array

from micropython import const

from shoe.journal import log
from shoe.link import codec

ROUNDS_PER_SEGMENT = const(100)


class Rounds:
    def _seg(self, i):
        return "rounds." + str(i)

    def _rounds_open(self):
        self._rdirty = False
        # round numbers held in each segment, oldest first (fixed arrays: no heap growth)
        self._nums = [array.array("i", bytes(4 * ROUNDS_PER_SEGMENT)) for _ in (0, 1)]
        self._n = [0, 0]
        self._last = [0, 0]  # journal-wide count of the newest round record in each segment
        for i in (0, 1):
            scan = self._store.scan(self._seg(i))
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
            if scan.torn or scan.fixed:  # forget the torn tail, write repaired records clean
                self.recovered_torn += 1 if scan.torn else 0
                self._store.drop_tail(self._seg(i), self._n[i])
        self._cur = 1 if self._last[1] > self._last[0] else 0

    # clause: 684a.11(e)
    def add_round(self, no, kind, body):
        """Keep a round_result / round_void (body as sent, codec types) for recall."""
        self.commit()   # the log's record held back (journal.py) first
        cur = self._cur
        count = self._last[cur] + 1
        st = self._store
        if self._rdirty:  # a failed append left a torn tail: forget it
            st.drop_tail(self._seg(cur), self._n[cur])
            self._rdirty = False
        payload = codec.encode([count, no, kind, body])
        n = len(payload) + log.HEAD
        # a full segment (a ring segment may fill before 100 big records): start the other
        if self._n[cur] >= ROUNDS_PER_SEGMENT or (self._n[cur] and not st.fits(self._seg(cur), n)):
            cur = 1 - cur
            self._cur = cur
            st.clear(self._seg(cur))
            self._n[cur] = 0
        before = st.size(self._seg(cur))
        try:
            st.append(self._seg(cur), payload)
        except Exception:
            self._rdirty = True
            st.abort(self._seg(cur))
            raise
        self.writes += 1
        self.bytes_written += n
        self.erases += log.sectors(before, n)
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
                for p in self._store.scan(self._seg(i)):
                    r = codec.decode(p)
                    if r[1] == no:
                        return r[2], r[3]
        return None



def _holds(arr, n, x):
    for i in range(n):
        if arr[i] == x:
            return True
    return False
