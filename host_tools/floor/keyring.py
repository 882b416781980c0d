"""The floor's keys: which shoe key verifies which shoe's events (collector side).

    ring = load("keys/")    # a directory of provisioning files (shoe.json format, one per shoe:
                            # {"version": 1, "shoe_id": ..., "keys": {...}}) or one such file
    ring.get("3A7F") -> bytes | None
    seal_state(shoe_key, shoe, state, ctr) -> bytes      the gateway's signed state message
    open_state(shoe_key, shoe, payload) -> (state, ctr, mac)   or StateError(reason)
    wrap_event(shoe_key, shoe, at, payload) -> bytes   the gateway's timed event envelope
    unwrap_event(shoe_key, shoe, message) -> (payload, at | None)   or StateError(reason)

Keys stay in this process: nothing here is ever written to the database, MQTT or a page.

The retained state message is signed under its own key, HMAC-SHA256(shoe key, STATE_LABEL), so
a state MAC can never pass as an event MAC or a command MAC. Its form (JSON):
    {"v": 1, "state": "<the state as canonical JSON text>", "mac": "<hex>"}
with mac = HMAC-SHA256(state key, shoe id + 0x00 + the state text) and the state text carrying
"shoe" and "ctr" (strictly increasing per gateway: a millisecond clock that never repeats).

An event message is the shoe's sealed payload byte for byte (its first byte is 0x85, a 5-item
array) or, from a gateway that carries its receive time, the envelope
    "GWT1" | at (8 bytes, big-endian microseconds since the Unix epoch, the gateway's clock when
    its link delivered the event) | mac (16 bytes) | the sealed payload, untouched
with mac = HMAC-SHA256(time key, shoe id + 0x00 + at + payload)[:16], time key =
HMAC-SHA256(shoe key, TIME_LABEL): the time cannot be moved on the broker without the collector
seeing it, and the payload inside is still verified by its own MAC.
"""

import hashlib
import hmac
import json
from pathlib import Path

from host_tools import keys as keyfile
from host_tools.errors import ShoeError

STATE_LABEL = b"SHOE floor state v1"
TIME_LABEL = b"SHOE floor gateway time v1"
ENVELOPE = b"GWT1"
_ENV_LEN = len(ENVELOPE) + 8 + 16


class StateError(ValueError):
    """A state message refused: reason is malformed, bad_mac or wrong_shoe."""

    def __init__(self, reason, detail=""):
        super().__init__("%s: %s" % (reason, detail) if detail else reason)
        self.reason = reason


def state_key(shoe_key):
    return hmac.new(bytes(shoe_key), STATE_LABEL, hashlib.sha256).digest()


def _state_mac(shoe_key, shoe, text):
    return hmac.new(state_key(shoe_key), shoe.encode() + b"\0" + text, hashlib.sha256).digest()


def seal_state(shoe_key, shoe, state, ctr):
    """The state message for `shoe` (a dict without key material) with counter `ctr`."""
    text = json.dumps(
        dict(state, shoe=shoe, ctr=ctr), sort_keys=True, separators=(",", ":")
    ).encode()
    return json.dumps(
        {"v": 1, "state": text.decode(), "mac": _state_mac(shoe_key, shoe, text).hex()}
    ).encode()


def open_state(shoe_key, shoe, payload):
    """-> (state dict, ctr, mac bytes) of a state message that verifies for `shoe`."""
    try:
        env = json.loads(payload)
        text = env["state"].encode()
        got = bytes.fromhex(env["mac"])
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeError):
        raise StateError("malformed", "not a signed state message") from None
    if not hmac.compare_digest(got, _state_mac(shoe_key, shoe, text)):
        raise StateError("bad_mac", "its MAC does not verify with this shoe's state key")
    try:
        st = json.loads(text)
        ctr = st["ctr"]
    except (ValueError, TypeError, KeyError):
        raise StateError("malformed", "a signed state that is not a state") from None
    if not isinstance(st, dict) or st.get("shoe") != shoe:
        raise StateError("wrong_shoe", "signed for %r" % (st.get("shoe"),))
    if not isinstance(ctr, int) or isinstance(ctr, bool) or not 0 < ctr < 2**63:
        raise StateError("malformed", "no counter (or not a 63-bit one)")
    return st, ctr, got


class KeyRing:
    def __init__(self, keys=None):
        self._keys = dict(keys or {})

    def get(self, shoe):
        return self._keys.get(shoe)

    def add(self, shoe, key):
        self._keys[shoe] = bytes(key)

    def __len__(self):
        return len(self._keys)

    def shoes(self):
        return sorted(self._keys)


def _one(path):
    shoe, keys = keyfile.from_file(path)
    if not shoe:
        raise ShoeError("key file %s names no shoe_id" % path)
    return shoe, bytes.fromhex(keys["shoe"])


def load(path):
    p = Path(path)
    ring = KeyRing()
    files = sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files:
        raise ShoeError("no key files (*.json) in %s" % p)
    for f in files:
        shoe, key = _one(f)
        ring.add(shoe, key)
    return ring


def write(directory, shoe_id, keys):
    """Write one shoe's provisioning file (as `shoectl provision` does) into `directory`."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    doc = {"version": 1, "shoe_id": shoe_id, "keys": {k: bytes(v).hex() for k, v in keys.items()}}
    f = d / ("%s.json" % shoe_id)
    f.write_text(json.dumps(doc))
    f.chmod(0o600)
    return f


def _time_mac(shoe_key, shoe, at_bytes, payload):
    k = hmac.new(bytes(shoe_key), TIME_LABEL, hashlib.sha256).digest()
    return hmac.new(k, shoe.encode() + b"\0" + at_bytes + bytes(payload), hashlib.sha256).digest()[
        :16
    ]


def wrap_event(shoe_key, shoe, at, payload):
    """The event message carrying the gateway's receive time `at` (Unix seconds)."""
    at_bytes = int(round(at * 1e6)).to_bytes(8, "big")
    return ENVELOPE + at_bytes + _time_mac(shoe_key, shoe, at_bytes, payload) + bytes(payload)


def split_event(message):
    """-> (sealed payload, gateway time or None), unverified (tools, tests)."""
    message = bytes(message)
    if message[: len(ENVELOPE)] != ENVELOPE or len(message) <= _ENV_LEN:
        return message, None
    return message[_ENV_LEN:], int.from_bytes(message[4:12], "big") / 1e6


def unwrap_event(shoe_key, shoe, message):
    """-> (sealed payload, gateway time or None for a bare payload: a gateway without the
    envelope, during a rollout); StateError("bad_mac") if the envelope's time does not verify."""
    payload, at = split_event(message)
    if at is None:
        if bytes(message[: len(ENVELOPE)]) == ENVELOPE:
            raise StateError("malformed", "an event envelope with no payload")
        return payload, None
    got = bytes(message[12:_ENV_LEN])
    if not hmac.compare_digest(got, _time_mac(shoe_key, shoe, bytes(message[4:12]), payload)):
        raise StateError(
            "bad_mac", "the gateway time's MAC does not verify with this shoe's time key"
        )
    return payload, at
