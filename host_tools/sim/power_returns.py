"""Power returns: how the table-system runner carries on when the board boots again.

TableRunner (host_tools/sim/session.py) takes these methods. A board may die at any instant from
outside (a power failure) and be powered up again by whoever supervises it (SimBoard with
power_returns=True, the emulator, a person). The runner notices a new boot (boot_mark(): the
board's boot count, or, for a board on a port, the link's session count), asks the shoe's status
(recover()) and carries on from what the shoe holds:

    command()            a command whose reply was lost is checked against the status
                         (_took_effect) and sent again only if the shoe does not hold it
    _card_after_boot()   a card is re-presented only if the shoe does not hold it
    _reader()            a world action whose reader socket died -> Rebooted once back
    _wait_through_boots() a durable event the shoe holds already: a new boot only delays it
"""

import threading
import time

from host_tools import events as E
from host_tools.errors import ShoeError
from host_tools.sim.world import WorldError

ROUND_END = E.OUTCOMES


class Rebooted(Exception):
    """The board booted again (power returned) while the runner waited on it."""


class PowerReturns:
    def boot_mark(self):
        """Something that changes when the board boots again: its boot count, or (a board
        driven over a port, no process of ours) the link's session count."""
        if self.board is not None:
            return ("b", self.board.boots)
        return ("s", self.link.ep.stats.get("sessions", 0))

    def command(self, kind, body, supervisor=None):
        """Send a command (with the key the roles table asks for: ShoeLink.command); if the
        board boots again before the reply (power returned), find out from its status whether
        the command took effect, and send it again only if not."""
        mark = self._mark
        box = {}

        def call():
            try:
                # The same patience as for events: on a noisy line a reply may need
                # retransmissions.
                box["rep"] = self.link.command(
                    kind, body, supervisor=supervisor, timeout=self.timeout
                )
            except ShoeError as e:
                box["err"] = e

        t = threading.Thread(target=call, daemon=True)
        t.start()
        while t.is_alive():
            t.join(0.1)
            if t.is_alive() and self.boot_mark() != mark:
                break  # the reply (if any) is lost with the old boot
        if "rep" in box:
            return box["rep"]
        err = box.get("err")
        reason = err.reason if err is not None else None
        if err is not None and reason not in (None, "replay"):
            raise err  # refused by the shoe: its word stands
        if self.boot_mark() == mark and reason != "replay":
            if err is not None and not self._board_may_return():
                raise err
            self._await_boot(mark, err)
        st = self.recover()
        done = self._took_effect(kind, body, st)
        if done is not None:
            return done
        if kind == "decisions":
            body = {
                k: v
                for k, v in body.items()
                if k not in (st.get("round") or {}).get("decided", [])
            }
        return self.command(kind, body, supervisor)

    def _board_may_return(self):
        return self.board is None or getattr(self.board, "power_returns_on", False)

    def _await_boot(self, mark, err, timeout=None):
        deadline = time.monotonic() + self._boot_patience(timeout)
        while self.boot_mark() == mark:
            if time.monotonic() > deadline:
                raise err or ShoeError("the shoe stopped answering")
            time.sleep(0.05)

    def recover(self):
        """After a new boot: the link reconnects by itself; the reader endpoint is a new socket.
        -> the shoe's status."""
        self.reboots_seen += 1
        while True:
            mark = self.boot_mark()
            st = self._status_after_restart()
            if self.boot_mark() == mark:
                break
            # The board booted again while we asked: the answer may be the old boot's, so the
            # new boot is not looked at yet (marking it seen made the next wait take a later,
            # unrelated moment for this boot: a stub run twice, its cards out of round).
        self._mark = mark
        if getattr(self.world, "port", None) is not None:
            self.world.port.reconnect()  # a rebooted board's reader endpoint is a new socket
        return st

    def _took_effect(self, kind, body, st):
        """The reply a command would have had if the shoe holds its effect, else None."""
        rnd = st.get("round")
        if kind in ("configure", "configure_supervised"):
            cfg = st.get("config") or {}
            return {"ok": True} if cfg.get("game") == body.get("game") else None
        if kind == "load_deck":
            for d in st.get("decks", []):
                if d.get("deck") == body.get("serial") and d.get("status") != "out":
                    return {"ok": True, "slot": d["slot"]}
            return None
        if kind == "open_round":
            if st.get("rounds", 0) > self._rounds_before_open:
                if rnd is not None:
                    return {"ok": True, "round": rnd["round"], "cards": rnd["cards"]}
                return {"ok": True, "round": st["rounds"], "cards": 0, "ended": True}
            return None
        if kind == "decisions":
            if rnd is None or rnd.get("stage") != "decisions":
                return {"ok": True}
            left = [k for k in body if k not in rnd.get("decided", [])]
            return None if left else {"ok": True}
        if kind == "ack_error":
            return (
                None
                if any(e.get("id") == body.get("id") for e in st.get("latched", []))
                else {"ok": True}
            )
        if kind == "status":
            return st
        return None

    def _reader(self, action):
        """Run a world action (cards through the reader); a board that died under it (its
        reader socket is gone) -> Rebooted once it is back."""
        try:
            return action()
        except (OSError, WorldError) as e:
            if isinstance(e, WorldError) and "cannot reach" not in str(e):
                raise
            self._await_boot(self._mark, ShoeError("the reader endpoint is gone: %s" % e))
            raise Rebooted() from e

    def _wait_through_boots(self, kinds, pred):
        """Wait for a durable event the shoe holds already: a new boot only delays it."""
        while True:
            try:
                return self.wait_for(kinds, pred=pred, mark=True)
            except Rebooted:
                self.recover()

    def _card_after_boot(self, rnd, pos, deck, card, this_card):
        """The board booted again while card `pos` was on its way: re-present it if the shoe
        does not hold it, then wait for it (or for the round's end)."""
        while True:
            st = self.recover()
            r = st.get("round")
            if r is None or r.get("round") != rnd:
                return self._wait_through_boots(ROUND_END, lambda b: b.get("round") == rnd)
            try:
                if r.get("dealt", 0) <= pos:
                    self._reader(lambda: self.world.pass_card(deck, card, again=True))
                return self.wait_for((E.CARD,) + ROUND_END, pred=this_card, mark=True)
            except Rebooted:
                continue

    def _boot_patience(self, timeout):
        """How long a board may take to come back: 30 s, or the runner's event timeout when that
        is longer (an emulated chip boots, recovers its journal and re-handshakes at a fraction
        of real time)."""
        return timeout if timeout is not None else max(30.0, float(self.timeout))

    def _status_after_restart(self, timeout=None):
        """The link reconnects by itself (new session); ask until the shoe answers."""
        deadline = time.monotonic() + self._boot_patience(timeout)
        ask = min(3.0 * max(1.0, float(self.timeout) / 30.0), 30.0)  # one status's patience
        while True:
            try:
                return self.link.command("status", {}, timeout=ask)
            except ShoeError:
                if time.monotonic() > deadline:
                    raise
