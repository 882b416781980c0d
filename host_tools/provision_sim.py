"""Demo keys for the virtual board (clearly labelled: never for a casino floor)."""
import json
from pathlib import Path

from shoe.config import DEMO_KEYS  # noqa: F401 (the published demo keys live with the loader)
DEMO_SHOE_ID = "SIM-0001"


def demo_config(shoe_id=DEMO_SHOE_ID):
    return {"version": 1, "shoe_id": shoe_id, "demo": True,
            "keys": {k: v.hex() for k, v in DEMO_KEYS.items()}}


def ensure_demo_keys(state_dir):
    """Write demo keys into a state dir that has none. Returns True when it wrote them."""
    p = Path(state_dir) / "shoe.json"
    if p.exists():
        return False
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(demo_config()))
    tmp.replace(p)
    return True
