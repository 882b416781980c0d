"""The provisioned configuration (shoe.json): parsed strictly, the same on both runtimes."""

import json

import pytest

from shoe import config
from tests.mpy import json_lines, run_code

GOOD = {
    "version": 1,
    "shoe_id": "SIM-0001",
    "keys": {"shoe": "11" * 16, "supervisor": "22" * 16, "card": "33" * 16},
}


def test_good_config_gives_bytes_keys(tmp_path):
    (tmp_path / "shoe.json").write_text(json.dumps(GOOD))
    cfg = config.load(str(tmp_path))
    assert cfg["shoe_id"] == "SIM-0001"
    assert cfg["keys"] == {"shoe": b"\x11" * 16, "supervisor": b"\x22" * 16, "card": b"\x33" * 16}
    assert cfg["demo"] is False


@pytest.mark.parametrize(
    "doc,reason",
    [
        ({}, "bad_config"),
        (dict(GOOD, version=2), "bad_config"),
        (dict(GOOD, shoe_id=""), "bad_config"),
        (dict(GOOD, keys={"shoe": "11" * 16}), "bad_config"),
        (dict(GOOD, keys=dict(GOOD["keys"], card="zz" * 8)), "bad_config"),
        (dict(GOOD, keys=dict(GOOD["keys"], card="11")), "bad_config"),
        (dict(GOOD, keys=dict(GOOD["keys"], card="33" * 15)), "bad_config"),  # 15 bytes
        (dict(GOOD, keys=dict(GOOD["keys"], shoe="11" * 8)), "bad_config"),  # 8 bytes
        (dict(GOOD, keys=dict(GOOD["keys"], supervisor=b"demo-card-key".hex())), "bad_config"),
        ([1, 2], "bad_config"),
    ],
)
def test_bad_configs_are_refused_with_a_reason(doc, reason):
    with pytest.raises(config.ConfigError) as e:
        config.parse(doc)
    assert e.value.reason == reason


def test_missing_or_broken_file(tmp_path):
    with pytest.raises(config.ConfigError) as e:
        config.load(str(tmp_path))
    assert e.value.reason == "not_provisioned"
    (tmp_path / "shoe.json").write_text("{not json")
    with pytest.raises(config.ConfigError) as e:
        config.load(str(tmp_path))
    assert e.value.reason == "bad_config"


def test_fat_half_renamed_file_is_used(tmp_path):
    (tmp_path / "shoe.json.new").write_text(json.dumps(GOOD))
    assert config.load(str(tmp_path))["shoe_id"] == "SIM-0001"


def test_same_under_micropython(tmp_path):
    (tmp_path / "shoe.json").write_text(json.dumps(GOOD))
    out = run_code(
        "import json\nfrom shoe import config\n"
        "c = config.load(%r)\n"
        "print(json.dumps([c['shoe_id'], sorted(c['keys']), len(c['keys']['card'])]))\n"
        "try:\n    config.parse({'version': 1})\n"
        "except config.ConfigError as e:\n    print(json.dumps(['err', e.reason]))\n"
        % str(tmp_path)
    )
    assert json_lines(out) == [
        ["SIM-0001", ["card", "shoe", "supervisor"], 16],
        ["err", "bad_config"],
    ]


def test_the_interfaces_demo_card_key_is_the_only_short_key_and_marks_demo():
    demo = dict(GOOD, keys=dict(GOOD["keys"], card=b"demo-card-key".hex()))
    cfg = config.parse(demo)
    assert cfg["keys"]["card"] == b"demo-card-key" and cfg["demo"] is True
    assert (
        config.parse(dict(GOOD, keys={k: v.hex() for k, v in config.DEMO_KEYS.items()}))["demo"]
        is True
    )
