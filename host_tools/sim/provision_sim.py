"""Demo keys for the virtual board (clearly labelled: never for a casino floor)."""

import json
from pathlib import Path

from shoe.config import DEMO_KEYS  # noqa: F401 (the published demo keys live with the loader)

DEMO_SHOE_ID = "SIM-0001"


# The shoe id of the interfaces.md examples is DEMO_SHOE_ID; a fresh state directory (a new
# virtual board's flash) gets its own id, SIM-<8 hex> drawn at random, so two virtual boards
# never share an id in an audit store.
SIM_PREFIX = "SIM-"


def new_shoe_id():
    import os

    return SIM_PREFIX + os.urandom(4).hex().upper()


def demo_config(shoe_id=None):
    return {
        "version": 1,
        "shoe_id": shoe_id or new_shoe_id(),
        "demo": True,
        "keys": {k: v.hex() for k, v in DEMO_KEYS.items()},
    }


def shoe_id_of(state_dir):
    """The shoe id provisioned in a state directory (None if it has none)."""
    try:
        return json.loads((Path(state_dir) / "shoe.json").read_text()).get("shoe_id")
    except (OSError, ValueError, AttributeError):
        return None


def ensure_demo_keys(state_dir, shoe_id=None):
    """Write demo keys (and a new shoe id) into a state dir that has none. True when written."""
    p = Path(state_dir) / "shoe.json"
    if p.exists():
        return False
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(demo_config(shoe_id)))
    tmp.replace(p)
    return True
