"""The collector's checks of what comes off the broker, trusting no gateway: each event's
envelope time, MAC and place in the hash chain (gaps, re-deliveries, conflicts, replays), its
round's commitments against the reveal and its result against the engine, and each retained
state message (signature, counter, values, clock skew); unknown shoe ids quarantined. A mixin
of host_tools.floor.collector.Collector: what it finds goes into the batch (collector_sql.Writes)
as rows and alerts; collector.py's docstring says the rules.
"""

import json
import math
import time

from host_tools import events as E
from host_tools import reveal
from host_tools.engine import reeval
from host_tools.events import decode
from host_tools.events import jsonable as _jsonable
from host_tools.floor import collector_sql as sql
from host_tools.floor import keyring as _keyring
from host_tools.link.host import open_event
from shoe.link.message import GENESIS, LinkError

_QUARANTINE_MAX = 1000  # distinct unknown ids a collector tracks; the rest are counted as "*"
_ALERT_EVERY = 30.0  # at most one alert per shoe and kind of refused state this often


class Checks:
    def _event(self, shoe, h, payload, w, arrived=None):
        key = self.keys.get(shoe)
        if key is None:
            self.counts["rejected"] += 1
            if shoe not in self._alert_once:
                self._alert_once.add(shoe)
                w.alert(shoe, None, "unknown_shoe", "events for a shoe this floor has no key for")
            return
        try:
            payload, gw_at = _keyring.unwrap_event(key, shoe, payload)
        except _keyring.StateError as e:
            # the envelope's time is the gateway's: forged or altered on the way. The payload
            # inside is still the shoe's (its own MAC decides): store it, without that time
            payload, gw_at = _keyring.split_event(payload)[0], None
            self.counts["bad_gateway_time"] += 1
            w.alert(
                shoe,
                None,
                "bad_gateway_time",
                "an event's gateway time refused (%s): the event is stored without it" % e,
            )
        if gw_at is not None and not (math.isfinite(gw_at) and 0 < gw_at < 2**33):
            gw_at = None
        try:
            kind, body, eseq, prev, head, mac, _ = open_event(payload, key, shoe)
        except LinkError as e:
            self.counts["rejected"] += 1
            w.alert(
                shoe,
                None,
                e.reason,
                "event rejected: %s (forged or altered on the way)"
                % (
                    "its MAC does not verify with the shoe's key"
                    if e.reason == "bad_mac"
                    else "not a shoe event"
                ),
            )
            return
        if not eseq:
            self.counts["rejected"] += 1
            w.alert(shoe, None, "malformed", "a volatile message published as an event")
            return
        if eseq <= h.eseq:
            same = w.payloads.get((shoe, eseq))
            if same is None:
                same = sql.payload_of(self.conn, shoe, eseq)
            if same == payload:
                self.counts["duplicates"] += 1
                self._replayed(shoe, h, eseq, w)
            elif same is None and eseq <= self._horizon(shoe):
                # archived and dropped by the retention (floor-retention): not stored again
                self.counts["duplicates"] += 1
                self._replayed(shoe, h, eseq, w)
            elif same is None:
                # a late arrival into a hole already alerted as a gap: store it, chained to
                # its predecessor if that is held
                before = GENESIS if eseq == 1 else w.hashes.get((shoe, eseq - 1))
                if before is None:
                    before = sql.hash_of(self.conn, shoe, eseq - 1)
                kind, shown = decode(kind, body)
                w.event(
                    shoe,
                    eseq,
                    kind,
                    _jsonable(shown),
                    prev,
                    head,
                    mac,
                    payload,
                    "ok" if before == prev else "gap",
                    self.name,
                    gw_at,
                )
            else:
                self.counts["rejected"] += 1
                self._replayed(shoe, h, eseq, w)
                w.alert(
                    shoe,
                    eseq,
                    "conflict",
                    "event %d arrived again with other contents (a "
                    "valid MAC): the shoe's key or journal is suspect; the stored one is kept"
                    % eseq,
                )
            return
        if gw_at is not None and arrived is not None:
            self._skew(shoe, arrived - gw_at, arrived, w, state=False)
        if eseq > h.eseq + 1:
            h.pending[eseq] = (payload, gw_at)
            if h.gap_since is None:
                h.gap_since = time.monotonic()
            self._ask_replay(shoe, h, time.monotonic())
            return
        self._accept(shoe, h, payload, gw_at, w, opened=(kind, body, eseq, prev, head, mac))
        self._drain(shoe, h, w)

    def _horizon(self, shoe):
        return sql.horizon(self.conn, shoe)

    def _drain(self, shoe, h, w):
        while h.eseq + 1 in h.pending:
            self._accept(shoe, h, *h.pending.pop(h.eseq + 1), w)
        if not h.pending:
            h.gap_since = None
        else:
            for e in [e for e in h.pending if e <= h.eseq]:
                del h.pending[e]

    def _accept(self, shoe, h, payload, gw_at, w, opened=None, chain=None):
        kind, body, eseq, prev, head, mac = (
            opened or open_event(payload, self.keys.get(shoe), shoe)[:6]
        )
        if chain is None:
            chain = "ok" if prev == h.hash else "broken"
            if chain == "broken":
                w.alert(
                    shoe,
                    eseq,
                    "chain_break",
                    "event %d does not follow the stored chain "
                    "head of event %d: something between them was removed or altered"
                    % (eseq, h.eseq),
                )
        try:
            found = h.watch.feed(kind, body)
        except Exception as e:
            # broad on purpose: the events are a shoe's (or a forger's) and the check must not
            # turn one into a poison message that stops the table's chain: alerted, logged
            self.errors.note("reveal_check", e)
            found = [(reveal.ALERT, None, "the reveal check failed: %r" % (e,))]
        kind, shown = decode(kind, body)
        w.event(
            shoe, eseq, kind, _jsonable(shown), prev, head, mac, payload, chain, self.name, gw_at
        )
        h.eseq, h.hash = eseq, head
        h.live.apply(kind, shown, eseq)
        w.live(shoe, h)
        for alert, _, detail in found:
            w.alert(shoe, eseq, alert, detail[:500])
        if kind == E.ROUND_RESULT and isinstance(shown, dict):
            cfg = w.config.get(shoe) or self.config.get(shoe) or {}
            bad = reeval.disagreements(
                shown,
                shown.get("paytable") or cfg.get("paytable"),
                shown.get("rules", cfg.get("rules")),
                h.watch.hands(shown.get("round")),
            )
            w.round(
                shoe,
                eseq,
                shown.get("round"),
                "result",
                sql.summary(shown),
                "disagree" if bad else "agree",
            )
            if bad:
                w.alert(shoe, eseq, "disagreement", "; ".join(bad)[:500])
        elif kind == E.ROUND_VOID and isinstance(shown, dict):
            w.round(
                shoe,
                eseq,
                shown.get("round"),
                "void",
                {"reason": shown.get("reason"), "detail": shown.get("detail")},
                "void",
            )
        elif kind == E.IRREGULARITY and isinstance(shown, dict):
            w.alert(
                shoe,
                eseq,
                E.IRREGULARITY,
                "%s%s"
                % (shown.get("reason"), (": %s" % shown["detail"]) if shown.get("detail") else ""),
                ref=shown.get("id"),
            )
        elif kind == E.IRREGULARITY_CLEARED and isinstance(shown, dict):
            w.closes.append((shoe, str(shown.get("id"))))

    def _quarantine(self, shoe, topic, w):
        self.counts["quarantined"] += 1
        shoe = shoe[:64]
        if shoe not in self.quarantined and len(self.quarantined) >= _QUARANTINE_MAX:
            shoe = "*"  # a flood of made-up ids: one row for the rest
        first = shoe not in self.quarantined
        self.quarantined[shoe] = self.quarantined.get(shoe, 0) + 1
        q = w.quarantine.setdefault(shoe, [0, topic[:200]])
        q[0] += 1
        if first:
            w.unknown.append(shoe)

    def _replayed(self, shoe, h, eseq, w):
        """An event this floor already holds came again: counted; past `replay_alert` within
        `replay_window` seconds, alerted (a re-sent batch after an outage stays far below)."""
        now = time.monotonic()
        if now - h.dup_since > self.replay_window:
            h.dup_since, h.dups, h.dup_alerted = now, 0, False
        h.dups += 1
        w.replays[shoe] = w.replays.get(shoe, 0) + 1
        if h.dups >= self.replay_alert and not h.dup_alerted:
            h.dup_alerted = True
            w.alert(
                shoe,
                eseq,
                "replay",
                "%d events received again within %.0f s (the last: "
                "event %d): replayed on the broker, or a gateway re-sending its store"
                % (h.dups, self.replay_window, eseq),
            )

    def _refuse_state(self, shoe, kind, detail, w):
        self.counts["state_refused"] += 1
        w.state_refused[shoe] = w.state_refused.get(shoe, 0) + 1
        now = time.monotonic()
        if now - self._state_alerted.get((shoe, kind), -1e9) >= _ALERT_EVERY:
            self._state_alerted[(shoe, kind)] = now
            w.alert(
                shoe,
                None,
                kind,
                (
                    "state message refused, not shown: %s (further ones are "
                    "counted in the table's state_refused)" % detail
                )[:500],
            )

    def _state(self, shoe, h, payload, w, arrived=None):
        key = self.keys.get(shoe)
        if key is None:  # (quarantined before it gets here)
            return
        try:
            st, ctr, mac = _keyring.open_state(key, shoe, payload)
        except _keyring.StateError as e:
            self._refuse_state(
                shoe,
                "bad_state",
                {
                    "bad_mac": "forged, altered or another table's (its MAC does not verify)",
                    "wrong_shoe": "signed for another table",
                }.get(e.reason, "not a signed state message (%s)" % e),
                w,
            )
            return
        if ctr == h.state_ctr and mac == h.state_mac:
            return  # the retained message delivered again
        if ctr <= h.state_ctr and arrived is None:
            # a retained copy delivered at a (re)subscription (MQTT sets the retain flag only
            # then) older than a state already taken: refused and counted, but not alerted,
            # since a broker's retained copy lagging the live one at a resubscription is normal
            self.counts["state_refused"] += 1
            w.state_refused[shoe] = w.state_refused.get(shoe, 0) + 1
            return
        if ctr <= h.state_ctr:
            self._refuse_state(
                shoe,
                "state_replay",
                "counter %d is not above the last one "
                "taken (%d): an old state replayed" % (ctr, h.state_ctr),
                w,
            )
            return
        shown = {k: st.get(k) for k in ("gateway", "link", "published", "head", "at")}
        try:
            published = int(st.get("published") or 0)
            at = float(st.get("at") or 0)
            json.dumps(shown, allow_nan=False)
            if not (math.isfinite(at) and 0 <= published < 2**63):
                raise ValueError(at)
        except (ValueError, TypeError, OverflowError):
            # signed, so from the gateway itself: a bug there, refused like a forgery
            self._refuse_state(
                shoe, "bad_state", "signed, but not a state this floor can store", w
            )
            return
        h.state_ctr, h.state_mac, h.published = ctr, mac, published
        if arrived is not None:
            self._skew(shoe, arrived - at, arrived, w)
        # link health, the published cursor and the configuration; phase, round and results
        # on the tile come from verified events only
        w.gateway[shoe] = (shown, ctr, mac, min(at, time.time()))
        if isinstance(st.get("config"), dict):  # the table's pay table and rules (status reply)
            self.config[shoe] = st["config"]

    def _skew(self, shoe, skew, arrived, w, state=True):
        """The gateway's clock against ours, from verified state messages that came live (not
        the retained one a subscription delivers: that one is as old as it is) and from each
        event's verified gateway time (state=False). The signed time is when the gateway sent
        the state or received the event; transit only adds to `arrived - at`, so a gateway
        ahead by more than `skew_alert` seconds shows at once (an event cannot arrive before the
        gateway had it), and one behind by the smallest value over the last 30 s of state
        messages, once that holds 3 states spread over 10 s or more (a backlog the broker
        queued while this collector was away arrives in one burst, late, and is no skew; events
        never tell "behind": a gateway catching up publishes old events for as long as it takes).
        A `clock_skew` alert, at most one per shoe every 30 s."""
        if not state:
            if skew >= 0:
                return
            self.ops.skew[shoe] = min(skew, self.ops.skew.get(shoe, 0.0))
            least = None
        else:
            obs = self.ops.skew_obs.setdefault(shoe, [])
            obs.append((arrived, skew))
            while obs and obs[0][0] < arrived - 30.0:
                obs.pop(0)
            least = min(v for _, v in obs)
            self.ops.skew[shoe] = least if skew >= 0 else skew
        if not self.skew_alert:
            return
        if skew < -self.skew_alert:
            off = -skew
        elif (
            least is not None
            and least > self.skew_alert
            and len(obs) >= 3
            and obs[-1][0] - obs[0][0] >= 10.0
        ):
            off = least
        else:
            return
        now = time.monotonic()
        if now - self._state_alerted.get((shoe, "clock_skew"), -1e9) >= _ALERT_EVERY:
            self._state_alerted[(shoe, "clock_skew")] = now
            w.alert(
                shoe,
                None,
                "clock_skew",
                "the gateway's clock is %.1f s %s the collector's "
                "(alert past %.1f s; from its %s): times from that table are suspect"
                % (
                    off,
                    "ahead of" if skew < 0 else "behind",
                    self.skew_alert,
                    "signed state messages" if state else "events' receive times",
                ),
            )
