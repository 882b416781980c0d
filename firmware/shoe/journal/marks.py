"""The journal's marks: a small stream of its own ("marks", beside journal.log) that a damaged log
cannot take with it (a mixin of Journal, shoe/journal/journal.py).

    ["M", boot, eseq, ctr, eseq_ceiling, ctr_ceiling, kept]

- `boot`, `eseq`, `ctr`: the values durable in the log when the mark was written. A log that
  recovers below them lost records, however cleanly it ends.
- the ceilings: every event sequence number ever used is below `eseq_ceiling`, every command
  counter ever accepted below `ctr_ceiling`. A mark raising them is written BEFORE the record that
  would pass them (at most every E_AHEAD events, C_AHEAD commands; a mark is written at every
  boot and every round anyway, and each one raises them), so after a damaged log the shoe
  continues above every number it may have used and sent, without a write per card.
- `kept`: the application's values named by Journal(keep=...) (the table's latched
  irregularities, round and irregularity numbers), written after the record that changed them
  and before its events can leave: a copy of the latest ones that the log's damage cannot take.

The stream is rewritten with its latest mark when it holds MARKS_BYTES, and at boot when it was
damaged. docs/journal.md "One bad bit".
"""
from micropython import const

from shoe.journal import log
from shoe.link import codec

MARKS = "marks"
E_AHEAD = const(128)
C_AHEAD = const(64)
MARKS_BYTES = const(3072)


class Marks:
    def _marks_open(self):
        """Read every good mark: the maxima of its numbers, the kept values of the last."""
        self.m_boot = self.m_eseq = self.m_ctr = self._ce = self._cc = 0
        self._kept = None
        self._kept_found = False
        scan = self._store.scan(MARKS)
        for p in scan:
            try:
                r = codec.decode(p)
                if r[0] != "M":
                    continue
                self.m_boot = max(self.m_boot, r[1])
                self.m_eseq = max(self.m_eseq, r[2])
                self.m_ctr = max(self.m_ctr, r[3])
                self._ce = max(self._ce, r[4])
                self._cc = max(self._cc, r[5])
                self._kept = r[6]
                self._kept_found = True
            except Exception:  # passed its CRC but makes no sense: like a damaged record
                scan.torn = True
        self._m_size = scan.good_end
        self._m_dirty = scan.torn or scan.fixed > 0  # rewritten by the boot's mark

    def _mark(self, e=0, c=0):
        """Write a mark; its ceilings clear this eseq and ctr (and `e`, `c`: a record about to be
        written) by E_AHEAD and C_AHEAD."""
        self.commit()   # a record held back (journal.py) reaches the flash first
        self._ce = max(self.eseq, e) + E_AHEAD
        self._cc = max(self.ctr, c) + C_AHEAD
        rec = codec.encode(["M", self.boot, self.eseq, self.ctr, self._ce, self._cc,
                            self._kept])
        n = len(rec) + log.HEAD
        st = self._store
        if self._m_dirty or self._m_size + n > MARKS_BYTES or not st.fits(MARKS, n):
            w, b = st.rewrite(MARKS, (rec,))
            self._m_size = b
            self.writes += w
            self.bytes_written += b
            self.erases += log.sectors(0, b)
            self._m_dirty = False
            return
        try:
            st.append(MARKS, rec)
        except Exception:  # a write that failed part way: rewrite the stream at the next mark
            self._m_dirty = True
            st.abort(MARKS)
            raise
        self.writes += 1
        self.bytes_written += n
        self.erases += log.sectors(self._m_size, n)
        self._m_size += n

    def _kept_of(self, state):
        """The values of `state` named by `keep` (paths of keys), as a dict by last key."""
        out = {}
        for path in self._keep:
            v = state
            for k in path:
                v = v.get(k) if isinstance(v, dict) else None
            out[path[-1]] = v
        return out

    def _keep_check(self, state):
        """After a record that wrote `state`: a mark if a kept value changed."""
        if self._keep:
            k = self._kept_of(state)
            if k != self._kept:
                self._kept = k
                self._mark()
