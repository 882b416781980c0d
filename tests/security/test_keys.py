"""Keys are 16..64 bytes on the shoe (shoe.json loader) and in `shoectl provision` alike; the
only short key is the interfaces.md demo card key, accepted as the card key so a board can read
the demo deck, and it marks the shoe as running on demo keys."""

import json

import pytest

from host_tools import keys as keyfile
from host_tools.errors import ShoeError
from shoe import config

DEMO_CARD = b"demo-card-key".hex()


def env(**keys):
    base = {
        "SHOE_KEY_SHOE": "11" * 16,
        "SHOE_KEY_SUPERVISOR": "22" * 16,
        "SHOE_KEY_CARD": "33" * 16,
    }
    base.update({"SHOE_KEY_" + k.upper(): v for k, v in keys.items()})
    return base


def test_provision_and_the_loader_agree_on_every_key():
    for keys, ok in [
        ({}, True),
        ({"card": DEMO_CARD}, True),
        ({"card": "33" * 8}, False),
        ({"shoe": "11" * 15}, False),
        ({"supervisor": DEMO_CARD}, False),
        ({"shoe": DEMO_CARD}, False),
        ({"card": "33" * 65}, False),
    ]:
        doc = {
            "version": 1,
            "shoe_id": "T1",
            "keys": {k[9:].lower(): v for k, v in env(**keys).items()},
        }
        try:
            config.parse(doc)
            shoe_ok = True
        except config.ConfigError:
            shoe_ok = False
        try:
            keyfile.for_provisioning(None, environ=env(**keys))
            host_ok = True
        except ShoeError as e:
            host_ok = False
            assert "16..64" in str(e)
        assert (shoe_ok, host_ok) == (ok, ok), keys


def test_the_demo_card_key_provisions_and_says_demo():
    keys = keyfile.for_provisioning(None, environ=env(card=DEMO_CARD))
    cfg = config.parse({"version": 1, "shoe_id": "T1", "keys": keys})
    assert cfg["keys"]["card"] == b"demo-card-key" and cfg["demo"] is True
    with pytest.raises(ShoeError):
        keyfile.for_provisioning(None, environ=env(card="zz" * 16))


def test_one_loader_for_connecting_and_provisioning(tmp_path):
    """A provisioning file, the same keys as a plain file, and SHOE_KEY_* overriding either:
    `load` (every command that connects) and `for_provisioning` read them the same way."""
    import argparse

    hexkeys = {"shoe": "11" * 16, "supervisor": "22" * 16, "card": "33" * 16}
    prov = tmp_path / "shoe.json"
    prov.write_text(json.dumps({"version": 1, "shoe_id": "T9", "keys": hexkeys}))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(hexkeys))
    got = keyfile.load(argparse.Namespace(keys=str(prov), demo_keys=False), environ={})
    assert got["shoe_id"] == "T9" and got["demo"] is False
    assert {k: got[k].hex() for k in hexkeys} == hexkeys
    assert keyfile.for_provisioning(str(plain), environ={}) == hexkeys
    over = {"SHOE_KEY_CARD": DEMO_CARD}
    got = keyfile.load(argparse.Namespace(keys=str(prov), demo_keys=False), environ=over)
    assert got["card"] == b"demo-card-key" and got["demo"] is True
    assert keyfile.for_provisioning(str(prov), environ=over)["card"] == DEMO_CARD
    with pytest.raises(ShoeError, match="not both"):
        keyfile.load(argparse.Namespace(keys=str(prov), demo_keys=True), environ={})
    with pytest.raises(ShoeError, match="no key"):
        keyfile.load(argparse.Namespace(keys=None, demo_keys=False), environ={})
