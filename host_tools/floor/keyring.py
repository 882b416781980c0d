"""The floor's keys: which shoe key verifies which shoe's events (collector side).

    ring = load("keys/")    # a directory of provisioning files (shoe.json format, one per shoe:
                            # {"version": 1, "shoe_id": ..., "keys": {...}}) or one such file
    ring.get("3A7F") -> bytes | None

Keys stay in this process: nothing here is ever written to the database, MQTT or a page.
"""
import json
from pathlib import Path

from host_tools import keys as keyfile
from host_tools.errors import ShoeError


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
