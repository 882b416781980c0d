"""Face-down cards stay secret until the round's decisions close (functions of the Table).

A round draws a fresh 16-byte secret when it opens (kept in the Round and in state(), so the
journal keeps it across a power cut; never sent before the reveal). Each dealt card leaves the
shoe only as its commitment under that secret (shoe.commitment.commit: the card event's
"commit"); position and target go in clear (the dealing order is public). When the last seat
has decided, or when the round is voided, the `reveal` event gives the secret and every dealt
card in dealing order, and from then on any event may name the round's cards. Who learns what
and when: docs/protocol.md section 10; the round's events: docs/round-lifecycle.md.
"""
from os import urandom

from shoe.cards import name
from shoe.commitment import SECRET_LEN


def new_secret(self, n):
    """A fresh secret for round `n`: os.urandom, or the table's `secrets(n)` (tests that need
    the same events on two runtimes pass a deterministic one)."""
    src = self._secrets
    s = urandom(SECRET_LEN) if src is None else src(n)
    if not isinstance(s, (bytes, bytearray)) or len(s) != SECRET_LEN:
        raise ValueError("a round secret is %d bytes" % SECRET_LEN)
    return bytes(s)


def reveal(self):
    """The open round's cards may be named from now on: emit `reveal` (once a round) with the
    secret and every card dealt, in dealing order. Called when the last decision is accepted,
    and first thing when a round is voided (before its irregularity and round_void)."""
    rnd = self.rnd
    if rnd is None or rnd.revealed:
        return
    self._dirty()
    rnd.revealed = True
    self._emit("reveal", {"round": rnd.n, "secret": rnd.secret,
                          "cards": [name(c) for c in self.tracker.dealt()]})


def hidden_position(self):
    """(round, position) of the last card placed while the open round's cards are still
    secret, else None: what the app names a double read by (app._report_double_reads)."""
    rnd = self.rnd
    if rnd is None or rnd.revealed or not self.tracker.n:
        return None
    return (rnd.n, self.tracker.n - 1)
