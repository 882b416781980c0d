"""The firmware a lab tests is the firmware that runs (host_tools/cert/firmware.py):

- the deployed .mpy set of every board variant builds to the same bytes from two clean copies
  of the sources in different directories, and equals what `shoectl deploy` compiles here (its
  build cache holds nothing stale);
- the version directory and the attestation manifest the certification material gives are
  those of a shoe deployed by `shoectl deploy` (the unix port behind a pty as the board), and
  `verify_attestation` accepts that shoe's answer against the expected tree, not another;
- the frozen Pico image builds to the same bytes twice (minutes: SHOE_REPRO_PICO=1).
"""

import hashlib
import os

import pytest

from host_tools import deploy
from host_tools.cert import firmware as fw
from host_tools.runtime import ROOT
from shoe import attest


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    base = tmp_path_factory.mktemp("repro")
    a = fw.copy_sources(ROOT, base / "one" / "shoe")
    b = fw.copy_sources(ROOT, base / "another-place" / "deeper" / "x")
    return fw.build_trees(a), fw.build_trees(b)


def test_the_mpy_sets_are_the_same_bytes_from_two_clean_copies(two_builds):
    ta, tb = two_builds
    assert sorted(ta) == sorted(label for label, _, _ in fw.VARIANTS)
    for label in ta:
        assert ta[label] == tb[label], label
        assert len(ta[label]) > 50
    da, db = fw.describe(ta), fw.describe(tb)
    assert da == db
    # the variants differ only in wiring.mpy (and so in their version and manifest)
    p, po = ta["pico"], ta["pico-optical"]
    assert {k for k in p if p[k] != po.get(k)} == {"wiring.mpy"}
    assert len({d["attest_manifest"] for d in da.values()}) == len(da)


def test_a_clean_build_equals_what_deploy_sends_from_this_checkout(two_builds):
    ta, _ = two_builds
    for label, board, reader in fw.VARIANTS:
        assert deploy.compile_firmware(board, reader=reader) == ta[label], label


def test_the_manifest_is_what_a_deployed_shoe_attests(two_builds, tmp_path):
    """Deploy with `shoectl deploy` (the unix port's REPL on a pty plays the Pico), then hash the
    version directory on its flash as the shoe does (shoe.attest) and compare."""
    from host_tools.link import verify_attestation
    from tests.host_tools.deploy.ptyboard import PtyBoard

    ta, _ = two_builds
    flash = tmp_path / "flash"
    flash.mkdir()
    with PtyBoard(flash) as b:
        s = deploy.deploy("pico", b.port, any_platform=True, progress=None)
    vdir = flash / "shoe_fw" / s["version"]
    version, manifest = fw.manifest(ta["pico"], "pico")
    assert s["version"] == version
    on_flash = attest.file_hashes([str(vdir)])
    assert attest.manifest(on_flash).hex() == manifest
    assert {n: h.hex() for n, h in on_flash} == {
        version + "/" + p: h for p, h in fw.describe(ta)["pico"]["sha256"].items()
    }
    # the shoe's answer to a challenge, checked against the expected tree the pack writes
    key, nonce = b"k" * 32, os.urandom(16)
    answer = attest.attest(key, nonce, [str(vdir)])
    expected = fw.write_expected(ta["pico"], "pico", tmp_path / "expected")
    assert expected.name == version
    assert verify_attestation(answer, key, nonce, [expected])[0]
    other = fw.write_expected(ta["pico-optical"], "pico", tmp_path / "other")
    assert not verify_attestation(answer, key, nonce, [other])[0]
    (expected / "shoe" / "app.mpy").write_bytes(b"tampered")
    assert not verify_attestation(answer, key, nonce, [expected])[0]


@pytest.mark.repro
@pytest.mark.skipif(
    os.environ.get("SHOE_REPRO_PICO") != "1" or fw.pico_toolchain() is not None,
    reason="builds the frozen Pico image twice (minutes): SHOE_REPRO_PICO=1 and "
    "the ARM toolchain (docs/certification.md)",
)
def test_the_frozen_pico_image_is_the_same_bytes_from_two_clean_clones(tmp_path):
    imgs = []
    for where in ("one/shoe", "another-place/deeper/x"):
        src, _ = fw.clean_copy(ROOT, tmp_path / where)
        imgs.append(fw.pico_image(src))
    print("frozen image builds: %s" % imgs)
    assert imgs[0]["firmware.uf2"] == imgs[1]["firmware.uf2"]
    assert imgs[0]["firmware.elf"] == imgs[1]["firmware.elf"]
    assert hashlib.sha256(b"").hexdigest() not in str(imgs)
