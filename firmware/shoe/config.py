"""The shoe's provisioned configuration on flash: identity and keys (never in the firmware).

    <state dir>/shoe.json
    {"version": 1, "shoe_id": "SIM-0001",
     "keys": {"shoe": "<hex>", "supervisor": "<hex>", "card": "<hex>"}}

The file, the meaning of each key, the key lengths and the demo keys: docs/hardware.md
section 5 (Deploy). A missing or bad file leaves the shoe unprovisioned (it accepts no command).
"""
from shoe.errors import ShoeError
import json

FILE = "shoe.json"
KEY_NAMES = ("shoe", "supervisor", "card")
KEY_MIN = 16
KEY_MAX = 64
# the published demo keys (virtual board, interfaces.md): never secret, only recognised
DEMO_KEYS = {"shoe": b"demo-shoe-key-0001", "supervisor": b"demo-supervisor-key",
             "card": b"demo-card-key"}


class ConfigError(ShoeError):
    reason = "not_provisioned"


def check_key(what, key):
    """Raise ConfigError unless `key` (bytes) may serve as key `what`."""
    if KEY_MIN <= len(key) <= KEY_MAX or (what == "card" and key == DEMO_KEYS["card"]):
        return key
    raise ConfigError("key %s must be %d..%d bytes" % (what, KEY_MIN, KEY_MAX), "bad_config")


def is_demo(keys):
    """True if any of `keys` ({name: bytes}) is a published demo key."""
    for k in KEY_NAMES:
        if keys.get(k) == DEMO_KEYS[k]:
            return True
    return False


def _unhex(text, what):
    if not isinstance(text, str) or len(text) % 2:
        raise ConfigError("key %s must be hex" % what, "bad_config")
    out = bytearray(len(text) // 2)
    for i in range(len(out)):
        try:
            out[i] = int(text[2 * i : 2 * i + 2], 16)
        except ValueError:
            raise ConfigError("key %s is not hex" % what, "bad_config")
    return check_key(what, bytes(out))


def path(state_dir):
    return state_dir + "/" + FILE


def parse(doc):
    """A parsed JSON document -> {"shoe_id": str, "keys": {name: bytes}, "demo": bool};
    raises ConfigError."""
    if not isinstance(doc, dict) or doc.get("version") != 1:
        raise ConfigError("config version must be 1", "bad_config")
    sid = doc.get("shoe_id")
    if not isinstance(sid, str) or not 1 <= len(sid) <= 32:
        raise ConfigError("shoe_id must be a string of 1..32 characters", "bad_config")
    keys = doc.get("keys")
    if not isinstance(keys, dict):
        raise ConfigError("keys missing", "bad_config")
    out = {}
    for k in KEY_NAMES:
        out[k] = _unhex(keys.get(k), k)
    return {"shoe_id": sid, "keys": out, "demo": is_demo(out)}


def load(state_dir):
    """Read shoe.json; on FAT (no atomic rename over a file) a provisioning cut between removing
    the old file and renaming the new one leaves only shoe.json.new: that one is complete."""
    for name in (path(state_dir), path(state_dir) + ".new"):
        try:
            with open(name) as f:
                doc = json.load(f)
        except OSError:
            continue
        except ValueError:
            raise ConfigError("%s is not valid JSON" % FILE, "bad_config")
        return parse(doc)
    raise ConfigError("no %s in %s: provision the shoe" % (FILE, state_dir))
