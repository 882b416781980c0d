"""Where host tools get a shoe's keys: the one loader (a file and/or the environment, never the
command line), checked by the shoe's own rule (shoe.config: 16..64 bytes, the demo card key).

    --keys FILE        the shoe's provisioning file (shoe.json: {"version": 1, "shoe_id": ...,
                       "keys": {"shoe": hex, "supervisor": hex, "card": hex}}) or a plain
                       {"shoe": hex, "supervisor": hex, "card": hex}
    SHOE_KEY_SHOE, SHOE_KEY_SUPERVISOR, SHOE_KEY_CARD
                       hex keys from the environment; each one overrides the file's
    --demo-keys        the virtual board's demo keys (labelled demo; never on a casino floor)

    load(args)                      -> {"shoe": bytes, ..., "shoe_id": str|None, "demo": bool}
                                       ("supervisor": None if not given: a table system's
                                       file holds no supervisor key, docs/roles.md)
    for_provisioning(path, environ) -> {"shoe": hex, "supervisor": hex, "card": hex}
    from_file(path)                 -> (shoe_id|None, {name: hex}): the floor's key ring
"""

import json
import os
import re
from pathlib import Path

from host_tools.errors import ShoeError
from shoe import config as shoe_config
from shoe.config import DEMO_KEYS, KEY_NAMES

ENV_PREFIX = "SHOE_KEY_"


def add_arguments(p):
    p.add_argument(
        "--keys",
        metavar="FILE",
        help="the shoe's provisioning file (or the "
        "environment: SHOE_KEY_SHOE, SHOE_KEY_SUPERVISOR, SHOE_KEY_CARD)",
    )
    p.add_argument(
        "--demo-keys",
        action="store_true",
        help="use the virtual board's demo keys (for `shoectl sim` only)",
    )


def read_file(path):
    """A key file -> (shoe_id or None, {name: hex} as written, its "demo" flag)."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise ShoeError("cannot read the keys file %s: %s" % (path, e.strerror)) from None
    except ValueError:
        raise ShoeError("the keys file %s is not JSON" % path) from None
    if not isinstance(doc, dict):
        raise ShoeError("the keys file %s must hold a JSON object" % path)
    keys = doc.get("keys", doc)
    if not isinstance(keys, dict):
        raise ShoeError("the keys file %s: keys must be an object" % path)
    sid = doc.get("shoe_id") if "keys" in doc else None
    return sid, {k: keys[k] for k in KEY_NAMES if k in keys}, bool(doc.get("demo"))


def _collect(path, environ, optional=()):
    env = os.environ if environ is None else environ
    sid, keys, demo = read_file(path) if path else (None, {}, False)
    for k in KEY_NAMES:
        v = env.get(ENV_PREFIX + k.upper())
        if v:
            keys[k] = v
    for k in KEY_NAMES:
        v = keys.get(k)
        if not v and k in optional:
            continue
        if not v:
            raise ShoeError(
                "missing key %r: put it in --keys FILE or %s%s" % (k, ENV_PREFIX, k.upper())
            )
        if not isinstance(v, str) or not re.fullmatch(r"(?:[0-9a-fA-F]{2})+", v):
            raise ShoeError("key %r must be hex (the value is not shown)" % k)
        try:  # the shoe's own rule (shoe/config.py): 16..64 bytes, the demo card key
            shoe_config.check_key(k, bytes.fromhex(v))
        except shoe_config.ConfigError as e:
            raise ShoeError("%s (the value is not shown)" % e) from None
    return sid, {k: keys[k].lower() for k in KEY_NAMES if keys.get(k)}, demo


def from_file(path):
    """A key file alone, no environment (the floor's ring) -> (shoe_id, {name: hex})"""
    sid, keys, _ = _collect(path, {})
    return sid, keys


def for_provisioning(path=None, environ=None):
    """The keys `shoectl provision` writes: {name: lower-case hex}."""
    return _collect(path, environ)[1]


def load(args, environ=None):
    """-> {"shoe": bytes, "supervisor": bytes, "card": bytes, "shoe_id": str|None, "demo": bool}"""
    path = getattr(args, "keys", None)
    env = os.environ if environ is None else environ
    given = path or any(env.get(ENV_PREFIX + k.upper()) for k in KEY_NAMES)
    if getattr(args, "demo_keys", False):
        if given:
            raise ShoeError("give either --keys (or SHOE_KEY_*) or --demo-keys, not both")
        return dict(DEMO_KEYS, shoe_id=None, demo=True)
    if not given:
        raise ShoeError(
            "no key: give --keys FILE (the shoe's provisioning file) or --demo-keys "
            "for the virtual board"
        )
    sid, hexkeys, demo = _collect(path, env, optional=("supervisor",))
    keys = {k: bytes.fromhex(v) for k, v in hexkeys.items()}
    demo = demo or shoe_config.is_demo(keys)
    keys.setdefault("supervisor", None)  # the table's key alone: what shoe.roles allows it
    return dict(keys, shoe_id=sid, demo=demo)
