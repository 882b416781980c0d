"""The shoe's provisioned identity and keys, a small JSON file on flash (never in the firmware).

    cfg = load_config(root)   # {"id": "3A7F", "key": b"...", "supervisor_key": b"..." | None}
    save_config(root, shoe_id, key, supervisor_key=None)   # atomic (temp file + rename)

File `shoe.json` in the state directory: {"id": str, "key": hex, "supervisor_key": hex|null,
"demo": bool}. A shoe without this file refuses to start the link (JournalError reason
`no_key`): keys are provisioned per shoe by the host (`host_tools.link.provision(...)`; the demo
and the tests provision the host-side DEMO_KEY with `"demo": true`, so the app can say so). No key
exists anywhere in the firmware.
"""
import json
import os

from shoe.journal.log import remove

NAME = "shoe.json"


class ConfigError(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def _unhex(s):
    if not isinstance(s, str) or len(s) % 2 or len(s) < 32:
        raise ConfigError("bad_key")
    try:
        return bytes(int(s[i:i + 2], 16) for i in range(0, len(s), 2))
    except ValueError:
        raise ConfigError("bad_key")


def _hex(b):
    return "".join("%02x" % x for x in b)


def load_config(root):
    try:
        with open(root + "/" + NAME) as f:
            d = json.loads(f.read())
    except OSError:
        raise ConfigError("no_key")
    except ValueError:
        raise ConfigError("bad_config")
    if not isinstance(d, dict) or not isinstance(d.get("id"), str):
        raise ConfigError("bad_config")
    sk = d.get("supervisor_key")
    return {"id": d["id"], "key": _unhex(d.get("key")),
            "supervisor_key": _unhex(sk) if sk else None, "demo": bool(d.get("demo"))}


def save_config(root, shoe_id, key, supervisor_key=None, demo=False):
    if len(key) < 16:
        raise ConfigError("bad_key")
    d = {"id": shoe_id, "key": _hex(key), "demo": demo,
         "supervisor_key": _hex(supervisor_key) if supervisor_key else None}
    path = root + "/" + NAME
    with open(path + ".new", "w") as f:
        f.write(json.dumps(d))
    try:
        os.rename(path + ".new", path)
    except OSError:
        remove(path)
        os.rename(path + ".new", path)

