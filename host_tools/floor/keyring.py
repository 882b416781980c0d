"""The floor's keys: which shoe key verifies which shoe's events (collector side).

    ring = load("keys/")    # a directory of provisioning files (shoe.json format, one per shoe:
                            # {"version": 1, "shoe_id": ..., "keys": {...}}) or one such file
    ring.get("3A7F") -> bytes | None
    seal_state(shoe_key, shoe, state, ctr) -> bytes      the gateway's signed state message
    open_state(shoe_key, shoe, payload) -> (state, ctr, mac)   or StateError(reason)

Keys stay in this process: nothing here is ever written to the database, MQTT or a page.

The retained state message is signed under its own key, HMAC-SHA256(shoe key, STATE_LABEL), so
a state MAC can never pass as an event MAC or a command MAC. Its form (JSON):
    {"v": 1, "state": "<the state as canonical JSON text>", "mac": "<hex>"}
with mac = HMAC-SHA256(state key, shoe id + 0x00 + the state text) and the state text carrying
"shoe" and "ctr" (strictly increasing per gateway: a millisecond clock that never repeats).
"""
import hashlib
import hmac
import json
from pathlib import Path

from host_tools import keys as keyfile
from host_tools.errors import ShoeError

STATE_LABEL = b"SHOE floor state v1"


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
    text = json.dumps(dict(state, shoe=shoe, ctr=ctr), sort_keys=True,
                      separators=(",", ":")).encode()
    return json.dumps({"v": 1, "state": text.decode(),
                       "mac": _state_mac(shoe_key, shoe, text).hex()}).encode()


def open_state(shoe_key, shoe, payload):
    """-> (state dict, ctr, mac bytes) of a state message that verifies for `shoe`."""
    try:
        env = json.loads(payload)
        text = env["state"].encode()
        got = bytes.fromhex(env["mac"])
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeError):
        raise StateError("malformed", "not a signed state message")
    if not hmac.compare_digest(got, _state_mac(shoe_key, shoe, text)):
        raise StateError("bad_mac", "its MAC does not verify with this shoe's state key")
    try:
        st = json.loads(text)
        ctr = st["ctr"]
    except (ValueError, TypeError, KeyError):
        raise StateError("malformed", "a signed state that is not a state")
    if not isinstance(st, dict) or st.get("shoe") != shoe:
        raise StateError("wrong_shoe", "signed for %r" % (st.get("shoe"),))
    if not isinstance(ctr, int) or isinstance(ctr, bool) or not 0 < ctr < 2 ** 63:
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
