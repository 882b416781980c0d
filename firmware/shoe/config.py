"""The shoe's provisioned configuration on flash: identity and keys (never in the firmware).

    <state dir>/shoe.json
    {"version": 1, "shoe_id": "SIM-0001",
     "keys": {"shoe": "<hex>", "supervisor": "<hex>", "card": "<hex>"}}

`shoe` authenticates host commands and signs events, `supervisor` authorises acknowledging a
latched irregularity, `card` verifies card codes. `shoectl provision` writes this file; the
virtual board gets demo keys on first start (and says so). A missing or bad file leaves the shoe
unprovisioned: it reports that and accepts no command.
"""
import json

FILE = "shoe.json"
KEY_NAMES = ("shoe", "supervisor", "card")


class ConfigError(ValueError):
    def __init__(self, message, reason="not_provisioned"):
        super().__init__(message)
        self.reason = reason


def _unhex(text, what):
    if not isinstance(text, str) or len(text) % 2 or len(text) < 16:
        raise ConfigError("key %s must be hex, at least 8 bytes" % what, "bad_config")
    out = bytearray(len(text) // 2)
    for i in range(len(out)):
        try:
            out[i] = int(text[2 * i : 2 * i + 2], 16)
        except ValueError:
            raise ConfigError("key %s is not hex" % what, "bad_config")
    return bytes(out)


def path(state_dir):
    return state_dir + "/" + FILE


def parse(doc):
    """A parsed JSON document -> {"shoe_id": str, "keys": {name: bytes}}; raises ConfigError."""
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
    return {"shoe_id": sid, "keys": out}


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
