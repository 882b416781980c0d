"""Where host tools get the shoe's keys: a provisioning file, never the command line.

    --keys FILE     the shoe's provisioning file (shoe.json: {"version": 1, "shoe_id": ...,
                    "keys": {"shoe": hex, "supervisor": hex, "card": hex}}); SHOE_KEYS=FILE works too
    --demo-keys     the virtual board's demo keys (labelled demo; never on a casino floor)
"""
import json
import os

from host_tools.errors import ShoeError
from shoe.config import DEMO_KEYS
from shoe import config as shoe_config


def add_arguments(p):
    p.add_argument("--keys", metavar="FILE", help="the shoe's provisioning file (or env SHOE_KEYS)")
    p.add_argument("--demo-keys", action="store_true",
                   help="use the virtual board's demo keys (for `shoectl sim` only)")


def load(args):
    """-> {"shoe": bytes, "supervisor": bytes, "card": bytes, "shoe_id": str|None, "demo": bool}"""
    path = getattr(args, "keys", None) or os.environ.get("SHOE_KEYS")
    if getattr(args, "demo_keys", False):
        if path:
            raise ShoeError("give either --keys or --demo-keys, not both")
        return dict(DEMO_KEYS, shoe_id=None, demo=True)
    if not path:
        raise ShoeError("no key: give --keys FILE (the shoe's provisioning file) or --demo-keys "
                        "for the virtual board")
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise ShoeError("cannot read key file %s: %s" % (path, e.strerror))
    except ValueError:
        raise ShoeError("key file %s is not JSON" % path)
    try:
        cfg = shoe_config.parse(doc)
    except shoe_config.ConfigError as e:
        raise ShoeError("key file %s: %s" % (path, e))
    return dict(cfg["keys"], shoe_id=cfg["shoe_id"], demo=bool(doc.get("demo")) or cfg["demo"])
